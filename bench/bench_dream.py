"""Benchmark the dream against the real engine, side by side in one run.

* **dream** — frames/s of :class:`golem_worldmodel.dream_env.DreamEnv` with
  ``B`` dreams in lockstep (default 512): one frame is one step of one dream
  (MDN-RNN step, death head, mixture sampling at τ = 1.15, random actions).
  Measured on the tensor path CMA-ES uses (``step_tensor``) and through the
  Gymnasium ``step()`` (numpy in and out).
* **engine** — frames/s of ONE real ViZDoom take_cover environment: the
  engine tic plus the 64×64 visual sensor (what collection pays per frame),
  random strafing, new episodes as needed.
* **engine + V + M** — the same, plus what the real-env controller pays per
  frame: VAE encoding of the frame and one MDN-RNN step.

Sizes default to the ``cpu`` preset (z 32, 256 LSTM units, 5 Gaussians);
``--run DIR`` uses that run's trained MDN-RNN and latents instead of random
weights (speed does not depend on the weights). Rounds are interleaved; the
median is reported. Results go to ``bench/results/dream.json`` and a rich table.

Usage: ``python bench/bench_dream.py [--batch 512] [--steps 200] [--engine-frames 2000] [--rounds 3] [--threads 1]
[--run DIR]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from rich.console import Console
from rich.table import Table

from golem.builtin.visual import VisualSensor
from golem.logs import configure_logging
from golem.runtime.session import Session
from golem.settings import GolemSettings
from golem_worldmodel.actions import N_ACTIONS, button_table
from golem_worldmodel.dream_env import DreamEnv, StartPool
from golem_worldmodel.latents import Latents
from golem_worldmodel.mdnrnn import MDNRNN
from golem_worldmodel.presets import get_preset
from golem_worldmodel.real_runner import RealRecurrence
from golem_worldmodel.vae import ConvVAE, frames_to_input

RESULTS = Path(__file__).resolve().parent / "results" / "dream.json"


def models(args: argparse.Namespace) -> tuple[ConvVAE, MDNRNN, StartPool]:
    preset = get_preset("cpu")
    if args.run:
        from golem_worldmodel.latents import load_latents
        from golem_worldmodel.paths import RunPaths
        from golem_worldmodel.training import load_rnn, load_vae

        paths = RunPaths(Path(args.run))
        latents, _ = load_latents(paths.latents)
        return load_vae(paths.vae), load_rnn(paths.rnn), StartPool.from_latents(latents, preset.warmup)
    torch.manual_seed(0)
    vae = ConvVAE(preset.z_dim, preset.vae_channels).eval()
    rnn = MDNRNN(preset.z_dim, N_ACTIONS, preset.hidden, preset.gaussians).eval()
    rng = np.random.default_rng(0)
    n, T = 20, 200
    latents = Latents(
        mu=rng.standard_normal((n * T, preset.z_dim)).astype(np.float32),
        logvar=np.zeros((n * T, preset.z_dim), np.float32),
        actions=rng.integers(0, N_ACTIONS, n * T),
        rewards=np.ones(n * T, np.float32),
        done=np.zeros(n * T, np.float32),
        offsets=np.arange(0, n * T + 1, T, dtype=np.int64),
        episode_ids=list(range(n)),
    )
    return vae, rnn, StartPool.from_latents(latents, preset.warmup)


def dream_fps(rnn: MDNRNN, pool: StartPool, batch: int, steps: int, gym_api: bool) -> float:
    # max_steps beyond the run so nothing truncates; the death head of random weights may
    # fire, but finished dreams are stepped anyway (lockstep), so the work per step is constant.
    env = DreamEnv(rnn, pool, batch, temperature=1.15, max_steps=10**9, autoreset=False)
    env.reset(seed=0)
    gen = torch.Generator().manual_seed(0)
    acts = torch.randint(0, N_ACTIONS, (steps, batch), generator=gen)
    started = time.perf_counter()
    with torch.no_grad():
        for t in range(steps):
            if gym_api:
                env.step(acts[t].numpy())
            else:
                env.step_tensor(acts[t])
    return batch * steps / (time.perf_counter() - started)


def engine_fps(
    session: Session, sensor: VisualSensor, frames: int, vae: ConvVAE | None, rnn: MDNRNN | None, seed: int
) -> float:
    table = button_table(session.action_names)
    rng = np.random.default_rng(seed)
    rec = RealRecurrence(rnn) if rnn is not None else None
    done, ep = 0, 0
    started = time.perf_counter()
    with torch.no_grad():
        while done < frames:
            session.new_episode(seed + ep)
            ep += 1
            if rec is not None:
                rec.reset()
            while not session.episode_finished and done < frames:
                frame = session.observe()[sensor.key]
                a = int(rng.integers(0, N_ACTIONS))
                if vae is not None and rec is not None:
                    mu, _ = vae.encode(frames_to_input(torch.from_numpy(frame[None].copy())))
                    rec.observe(mu)
                    rec.advance(torch.tensor([a]))
                session.act([int(b) for b in table[a]])
                done += 1
    return frames / (time.perf_counter() - started)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--engine-frames", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--run", type=str, default=None)
    args = p.parse_args()
    configure_logging(level="warning")
    torch.set_num_threads(args.threads)
    vae, rnn, pool = models(args)
    settings = GolemSettings()
    sensor = VisualSensor(settings)
    runs: dict[str, list[float]] = {"dream": [], "dream_gym": [], "engine": [], "engine_vm": []}
    with Session(settings, [sensor], scenario="take_cover") as session:
        dream_fps(rnn, pool, args.batch, 10, False)  # warm-up
        engine_fps(session, sensor, 200, None, None, 0)
        for r in range(args.rounds):
            runs["dream"].append(dream_fps(rnn, pool, args.batch, args.steps, False))
            runs["engine"].append(engine_fps(session, sensor, args.engine_frames, None, None, 1000 * r))
            runs["dream_gym"].append(dream_fps(rnn, pool, args.batch, args.steps, True))
            runs["engine_vm"].append(engine_fps(session, sensor, args.engine_frames, vae, rnn, 1000 * r + 500))
    med = {k: statistics.median(v) for k, v in runs.items()}
    result: dict[str, Any] = {
        "batch": args.batch,
        "steps": args.steps,
        "engine_frames": args.engine_frames,
        "rounds": args.rounds,
        "threads": args.threads,
        "z_dim": rnn.z_dim,
        "hidden": rnn.hidden,
        "gaussians": rnn.gaussians,
        "weights": args.run or "random (cpu preset sizes)",
        "frames_per_s": med,
        "runs": runs,
        "speedup_vs_engine": med["dream"] / med["engine"],
        "speedup_gym_vs_engine": med["dream_gym"] / med["engine"],
        "speedup_vs_engine_vm": med["dream"] / med["engine_vm"],
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load_avg": os.getloadavg(),
            "torch": torch.__version__,
        },
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2))
    table = Table(
        title=(
            f"dream (B = {args.batch}) vs the real engine (1 env), {args.threads} torch thread(s), "
            f"median of {args.rounds}"
        )
    )
    table.add_column("what")
    table.add_column("frames/s", justify="right")
    table.add_column("× engine", justify="right")
    rows = [
        ("dream, tensor path (CMA-ES)", "dream"),
        ("dream, Gymnasium step()", "dream_gym"),
        ("engine + 64×64 frame", "engine"),
        ("engine + frame + VAE encode + M step", "engine_vm"),
    ]
    for label, key in rows:
        table.add_row(label, f"{med[key]:,.0f}", f"{med[key] / med['engine']:.1f}")
    Console().print(table)
    Console().print(
        f"target ≥ 20× → {'met' if result['speedup_vs_engine'] >= 20 else 'NOT met'} "
        f"({result['speedup_vs_engine']:.1f}×); load average {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} CPUs → {RESULTS}"
    )


if __name__ == "__main__":
    main()
