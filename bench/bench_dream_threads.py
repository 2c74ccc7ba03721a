"""The world-model stages' compute at 1 and 2 torch threads, side by side in one run.

One ``golem dream iterate`` alone on a machine runs its stages one after the other, so its torch work may
use every core — or contend with its own engine workers. This measures each stage's inner loop with the
``cpu`` preset's sizes, the thread counts interleaved round by round (median of ``--rounds``):

* **CMA-ES generation** — :func:`golem_worldmodel.dream_env.dream_returns` of a whole population
  (``(population + 1) × rollouts`` dreams, the preset's ensemble of MDN-RNNs, the pessimistic death) for
  ``--dream-steps`` steps with random weights whose death head never fires: seconds per 100,000 dream steps;
* **VAE step** — one Adam step of the ConvVAE on a batch of ``vae_batch`` random 64×64 frames;
* **MDN-RNN step** — one Adam step on ``rnn_batch`` windows of ``rnn_seq_len`` steps.

Results go to ``bench/results/dream_threads.json``; ``--table`` prints the table the world-model page shows.

Usage: ``python bench/bench_dream_threads.py [--rounds 3] [--dream-steps 300] [--threads 1,2] [--table]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import torch

RESULTS = Path(__file__).resolve().parent / "results" / "dream_threads.json"
STAGES = {
    "cma_generation": "CMA-ES: seconds per 100,000 dream steps",
    "vae_step": "VAE: seconds per Adam step",
    "rnn_step": "MDN-RNN: seconds per Adam step",
}


def cma_generation(steps: int) -> Callable[[], float]:
    """A population's dreams for ``steps`` steps; returns seconds per 100,000 dream steps."""
    from golem_worldmodel.actions import N_ACTIONS
    from golem_worldmodel.controller import act_population
    from golem_worldmodel.dream_env import DreamEnv, StartPool, dream_returns
    from golem_worldmodel.latents import Latents
    from golem_worldmodel.mdnrnn import MDNRNN
    from golem_worldmodel.presets import get_preset

    p = get_preset("cpu")
    torch.manual_seed(0)
    members = [MDNRNN(p.z_dim, N_ACTIONS, p.hidden, p.gaussians).eval() for _ in range(p.rnn_members)]
    with torch.no_grad():
        for m in members:  # no death: every dream runs the whole budget
            m.done.weight.zero_()
            m.done.bias.fill_(-20.0)
    rng = np.random.default_rng(0)
    n = 40 * 100
    latents = Latents(
        mu=rng.standard_normal((n, p.z_dim)).astype(np.float32),
        logvar=np.full((n, p.z_dim), -2.0, np.float32),
        actions=rng.integers(0, N_ACTIONS, n),
        rewards=np.ones(n, np.float32),
        done=np.zeros(n, np.float32),
        offsets=np.arange(0, n + 1, 100, dtype=np.int64),
        episode_ids=list(range(40)),
    )
    pool = StartPool.from_latents(latents, p.warmup)
    P, R = p.population, p.rollouts
    env = DreamEnv(
        members[0], pool, (P + 1) * R, temperature=p.temperature, max_steps=steps, autoreset=False,
        noise_period=R, members=members[1:], death=p.ensemble_death,
    )  # fmt: skip
    params = torch.from_numpy(0.1 * rng.standard_normal((P + 1, p.z_dim + p.hidden + 1)).astype(np.float32))
    e, t0 = pool.sample(R, rng)
    starts = (np.tile(e, P + 1), np.tile(t0, P + 1))

    def run() -> float:
        started = time.perf_counter()
        out = dream_returns(env, lambda obs, rows: act_population(params, obs, rows, R), starts, 0)
        return (time.perf_counter() - started) * 100_000 / float(out["steps"].sum())

    return run


def vae_step() -> Callable[[], float]:
    """One Adam step of the cpu preset's VAE; returns its seconds."""
    from golem_worldmodel.presets import get_preset
    from golem_worldmodel.training import build_vae, vae_config
    from golem_worldmodel.vae import frames_to_input, vae_loss

    p = get_preset("cpu")
    torch.manual_seed(0)
    vae = build_vae(vae_config(p))
    opt = torch.optim.Adam(vae.parameters(), lr=p.vae_lr)
    frames = torch.randint(0, 256, (p.vae_batch, 3, 64, 64), dtype=torch.uint8)

    def run() -> float:
        started = time.perf_counter()
        x = frames_to_input(frames)
        recon, mu, logvar = vae(x)
        loss = vae_loss(x, recon, mu, logvar)[0]
        opt.zero_grad()
        loss.backward()
        opt.step()
        return time.perf_counter() - started

    return run


def rnn_step() -> Callable[[], float]:
    """One Adam step of the cpu preset's MDN-RNN on a batch of windows; returns its seconds."""
    from golem_worldmodel.actions import N_ACTIONS
    from golem_worldmodel.mdnrnn import MDNRNN, rnn_loss
    from golem_worldmodel.presets import get_preset

    p = get_preset("cpu")
    torch.manual_seed(0)
    rnn = MDNRNN(p.z_dim, N_ACTIONS, p.hidden, p.gaussians)
    opt = torch.optim.Adam(rnn.parameters(), lr=p.rnn_lr)
    B, T = p.rnn_batch, p.rnn_seq_len
    z = torch.randn(B, T + 1, p.z_dim)
    actions = torch.randint(0, N_ACTIONS, (B, T))
    ones = torch.ones(B, T)

    def run() -> float:
        started = time.perf_counter()
        heads, _ = rnn(z[:, :-1], actions)
        loss = rnn_loss(heads, z[:, 1:], ones, ones, torch.zeros(B, T), ones, p.done_pos_weight)["total"]
        opt.zero_grad()
        loss.backward()
        opt.step()
        return time.perf_counter() - started

    return run


def measure(rounds: int, threads: list[int], dream_steps: int, repeats: dict[str, int]) -> dict[str, Any]:
    """Median seconds per unit of every stage at every thread count, the counts interleaved per round."""
    stages = {"cma_generation": cma_generation(dream_steps), "vae_step": vae_step(), "rnn_step": rnn_step()}
    samples: dict[str, dict[int, list[float]]] = {s: {t: [] for t in threads} for s in stages}
    for _ in range(rounds):
        for t in threads:
            torch.set_num_threads(t)
            for name, run in stages.items():
                run()  # warm-up at this thread count
                samples[name][t].append(statistics.median(run() for _ in range(repeats[name])))
    return {
        name: {
            "median_s": {str(t): statistics.median(v) for t, v in by_t.items()},
            "samples_s": {str(t): v for t, v in by_t.items()},
        }
        for name, by_t in samples.items()
    }


def table(results: dict[str, Any]) -> str:
    """Markdown: one row per stage, seconds at each thread count and the speed-up of the most threads."""
    threads = results["threads"]
    head = ["stage (cpu preset)", *[f"{t} thread{'s' if t > 1 else ''}" for t in threads], "speed-up"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, label in STAGES.items():
        med = results["stages"][name]["median_s"]
        first, last = med[str(threads[0])], med[str(threads[-1])]
        cells = [label, *[f"{med[str(t)]:.3f}" for t in threads], f"{first / last:.2f}×"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dream-steps", type=int, default=300, help="steps of every dream in the CMA-ES generation")
    parser.add_argument("--threads", default="1,2", help="torch thread counts to compare")
    parser.add_argument("--table", action="store_true", help="print the table of the stored results")
    args = parser.parse_args()
    if args.table:
        print(table(json.loads(RESULTS.read_text())))
        return
    threads = [int(t) for t in args.threads.split(",")]
    started = time.perf_counter()
    stages = measure(args.rounds, threads, args.dream_steps, {"cma_generation": 1, "vae_step": 5, "rnn_step": 5})
    results = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "load_average": list(os.getloadavg()),
        "torch": torch.__version__,
        "threads": threads,
        "rounds": args.rounds,
        "dream_steps": args.dream_steps,
        "stages": stages,
        "seconds": round(time.perf_counter() - started, 1),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))


if __name__ == "__main__":
    main()
