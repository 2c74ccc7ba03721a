"""Benchmark fine-tuning's rollouts: frames/s with the policy in the loop against the raw engine's.

Three loops drive the same number of engines (``--workers``, one process each) on the same
scenario, at the scenario's frame skip, with the same buffers (the visual sensor's RGB24
160×120 screen and the profile's buttons), for ``--seconds`` each after a warm-up, in rounds
whose order rotates so that the load of a shared machine hits them alike:

* ``raw``: each process steps its engine with random buttons (``get_state`` + ``make_action``);
* ``learner``: what ``golem rl finetune`` ships (:class:`golem_rl.rollouts.RolloutWorkers`): the
  processes play through the rollout loop and send each state to the learner, which steps the
  policy over every engine at once (carried state, sampled buttons, segments of 32 decisions)
  and sends the buttons back: a round trip per decision;
* ``workers``: the alternative: each process senses, steps its own copy of the policy (a batch
  of one, carried state) and samples its buttons, with no round trip.

Both step the network as play does: the engine's tics since the last decision as the CfC's time
span (1 at an episode's start).

Besides frames/s (wall clock), each loop's CPU time per frame is measured over the processes
it runs (engines included), which a busy machine disturbs less. The policy is an untrained
network of the default size (``brain.*`` defaults: 64 units, three conv layers): its speed does
not depend on its weights. Medians go to ``bench/results/rl_throughput.json`` and a table; the
target is ``learner / raw ≥ 0.8``.

Usage: ``python bench/bench_rl_throughput.py [--workers 2] [--seconds 8] [--repeats 3]
[--scenario basic --scenario defend_the_center] [--table]``
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results" / "rl_throughput.json"
TARGET = 0.8
WARMUP_S = 2.0
TICKS = os.sysconf("SC_CLK_TCK")


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) used so far by process ``pid`` and every process below it."""
    parents: dict[int, list[int]] = {}
    times: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        child = int(entry.name)
        parents.setdefault(int(fields[1]), []).append(child)
        times[child] = (int(fields[11]) + int(fields[12])) / TICKS
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        total += times.get(p, 0.0)
        todo += parents.get(p, [])
    return total


class Window:
    """Frames counted after a warm-up, with the wall and CPU time of the process tree ``pid`` over them."""

    def __init__(self, pid: int, seconds: float) -> None:
        self.pid, self.seconds = pid, seconds
        self.started, self.frames, self.cpu0, self.measuring = time.perf_counter(), 0, 0.0, False

    def add(self, frames: int) -> bool:
        """Count ``frames``; ``True`` once the measured window is over."""
        now = time.perf_counter()
        if not self.measuring:
            if now - self.started >= WARMUP_S:
                self.measuring, self.started, self.cpu0 = True, now, tree_cpu(self.pid)
            return False
        self.frames += frames
        return now - self.started >= self.seconds

    def result(self) -> tuple[float, float]:
        """``(frames/s, CPU milliseconds per frame)``."""
        wall = time.perf_counter() - self.started
        return self.frames / wall, 1000 * (tree_cpu(self.pid) - self.cpu0) / max(self.frames, 1)


def bench_settings(scenario: str) -> Any:
    """Default settings on ``scenario`` at its spec's frame skip."""
    from golem.scenarios import scenario_spec
    from golem.settings import GolemSettings

    settings = GolemSettings()
    settings.game.scenario = scenario
    settings.game.frame_skip = scenario_spec(scenario).frame_skip
    return settings


def untrained_model(folder: Path, registry: Any) -> Path:
    """A checkpoint of an untrained default-sized ``cfc`` model (the architecture is what costs time)."""
    import torch

    from golem.learning.checkpoints import save_checkpoint
    from golem.learning.modelspec import ModelSpec
    from golem.settings import GolemSettings

    torch.manual_seed(0)
    spec = ModelSpec.from_settings(GolemSettings(), registry)
    model = registry.get("models", spec.model).obj(spec).eval()
    return save_checkpoint(folder / "policy.safetensors", model, spec.to_metadata(), {"scenario": "basic"})


def _session(scenario: str) -> tuple[Any, Any]:
    from golem.plugins import load_plugins
    from golem.runtime.session import Session
    from golem.sensors import build_sensors

    settings = bench_settings(scenario)
    registry = load_plugins().registry
    return Session(settings, build_sensors(settings, registry)), settings


def _raw(scenario: str, seconds: float, out: Any) -> None:
    """One raw engine: random buttons; ``(frames/s, CPU ms per frame)`` on ``out``."""
    session, settings = _session(scenario)
    game, skip, rng = session.game, settings.game.frame_skip, np.random.default_rng(0)
    window, seed = Window(os.getpid(), seconds), 0
    while True:
        session.new_episode(seed)
        seed += 1
        while not game.is_episode_finished():
            game.get_state()
            game.make_action(rng.integers(0, 2, session.n_actions).tolist(), skip)
            if window.add(skip):
                out.put(window.result())
                session.close()
                return


def _side_by_side(target: Any, args: tuple[Any, ...], workers: int) -> tuple[float, float]:
    """``workers`` processes of ``target(*args, out)`` at once: their summed frames/s and mean CPU ms per frame."""
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=target, args=(*args, out)) for _ in range(workers)]
    for p in procs:
        p.start()
    results = [out.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(30)
    rate = sum(r[0] for r in results)
    return rate, sum(r[0] * r[1] for r in results) / rate


def _in_worker(scenario: str, seconds: float, model: Path, out: Any) -> None:
    """One engine with its own copy of the policy (a batch of one); ``(frames/s, CPU ms per frame)`` on ``out``."""
    import torch

    from golem.learning.checkpoints import restore
    from golem.plugins import load_plugins

    torch.set_num_threads(1)
    session, settings = _session(scenario)
    restored = restore(model, load_plugins().registry)
    net, sensor = restored.model, restored.spec.sensors[0]
    game, skip, rng = session.game, settings.game.frame_skip, np.random.default_rng(0)
    window, seed = Window(os.getpid(), seconds), 0
    with torch.inference_mode():
        while True:
            session.new_episode(seed)
            seed, hx, spans = seed + 1, None, None  # as the agent steps: 1 tic at an episode's start
            while not game.is_episode_finished():
                x = sensor.to_network(torch.from_numpy(sensor.extract(game.get_state())).unsqueeze(0))
                logits, hx = net.step({sensor.name: x}, hx, spans)
                spans = None if skip == 1 else torch.tensor([float(skip)])
                probs = torch.sigmoid(logits[0]).numpy()
                game.make_action((rng.random(probs.shape[0]) < probs).astype(int).tolist(), skip)
                if window.add(skip):
                    out.put(window.result())
                    session.close()
                    return


def raw(scenario: str, workers: int, seconds: float, model: Path) -> tuple[float, float]:
    """``workers`` raw engines side by side."""
    return _side_by_side(_raw, (scenario, seconds), workers)


def in_learner(scenario: str, workers: int, seconds: float, model: Path) -> tuple[float, float]:
    """What golem-rl ships (:class:`golem_rl.rollouts.RolloutWorkers`): the engines in worker processes playing
    through the rollout loop, the policy stepped over all of them at once in this process, segments of 32."""
    import torch

    from golem.learning.checkpoints import restore
    from golem.plugins import load_plugins
    from golem_rl.rollouts import RolloutWorkers, WorkerPlan

    torch.set_num_threads(1)
    restored = restore(model, load_plugins().registry)
    settings = bench_settings(scenario)
    plan = WorkerPlan(settings.model_dump_json(), str(model), scenario, None, {}, stride=workers)
    window = Window(os.getpid(), seconds)
    with RolloutWorkers(plan, workers, restored.spec.sensors, np.random.default_rng(0)) as pool:
        while not window.add(sum(s.frames for s in pool.collect(restored.model, 32))):
            pass
        return window.result()


def in_workers(scenario: str, workers: int, seconds: float, model: Path) -> tuple[float, float]:
    """The alternative: a copy of the policy stepped in each engine's process, no round trip per decision."""
    return _side_by_side(_in_worker, (scenario, seconds, model), workers)


def step_ms(model: Path, batch: int, steps: int = 200) -> float:
    """Median milliseconds of one ``model.step`` on a batch of ``batch`` frames, one thread, in this process."""
    import torch

    from golem.learning.checkpoints import restore
    from golem.plugins import load_plugins

    torch.set_num_threads(1)
    restored = restore(model, load_plugins().registry)
    net, sensor = restored.model, restored.spec.sensors[0]
    x = {sensor.name: torch.rand(batch, *sensor.shape)}
    times = []
    with torch.inference_mode():
        hx = net.initial_state(batch)
        for i in range(steps + 20):
            began = time.perf_counter()
            net.step(x, hx)
            if i >= 20:
                times.append(1000 * (time.perf_counter() - began))
    return round(statistics.median(times), 3)


def table(results: dict[str, Any]) -> str:
    lines = [
        "| scenario | frame skip | engines | loop | frames/s | CPU ms / frame "
        f"| frames/s over raw (target ≥ {results['target']} for the shipped loop) |",
        "|---|---|---|---|---|---|---|",
    ]
    labels = {
        "raw": "raw engine",
        "learner": "policy batched in the learner (shipped)",
        "workers": "policy in each worker",
    }
    for name, r in results["scenarios"].items():
        for loop, label in labels.items():
            rate, cpu = r["median"][loop], r["cpu_ms_per_frame"][loop]
            lines.append(
                f"| `{name}` | {r['frame_skip']} | {results['workers']} | {label} | {rate:.0f} | {cpu:.2f} "
                f"| {rate / r['median']['raw']:.2f} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--workers", type=int, default=2, help="engine processes in every loop")
    parser.add_argument("--seconds", type=float, default=8.0, help="measured seconds per loop and round")
    parser.add_argument("--repeats", type=int, default=3, help="rounds (the loops' order rotates)")
    parser.add_argument("--scenario", action="append", help="scenario (repeatable; default basic, defend_the_center)")
    parser.add_argument("--table", action="store_true", help="print the table of the stored results")
    args = parser.parse_args()
    if args.table:
        print(table(json.loads(RESULTS.read_text())))
        return
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from golem.logs import configure_logging
    from golem.plugins import load_plugins

    configure_logging(level="warning")
    started = time.perf_counter()
    scenarios: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="golem-bench-rl-") as tmp:
        model = untrained_model(Path(tmp), load_plugins().registry)
        loops = {"raw": raw, "learner": in_learner, "workers": in_workers}
        for scenario in args.scenario or ["basic", "defend_the_center"]:
            samples: dict[str, list[float]] = {name: [] for name in loops}
            cpu: dict[str, list[float]] = {name: [] for name in loops}
            order = list(loops)
            for r in range(args.repeats):
                for name in order[r % len(order) :] + order[: r % len(order)]:
                    rate, ms = loops[name](scenario, args.workers, args.seconds, model)
                    samples[name].append(round(rate, 1))
                    cpu[name].append(round(ms, 4))
                    print(f"{scenario} round {r + 1}: {name} {rate:.0f} frames/s, {ms:.2f} CPU ms/frame", flush=True)
            median = {name: statistics.median(v) for name, v in samples.items()}
            scenarios[scenario] = {
                "frame_skip": bench_settings(scenario).game.frame_skip,
                "samples": samples,
                "median": median,
                "cpu_ms_per_frame": {name: statistics.median(v) for name, v in cpu.items()},
                "learner_over_raw": round(median["learner"] / median["raw"], 3),
                "workers_over_raw": round(median["workers"] / median["raw"], 3),
                "learner_over_workers": round(median["learner"] / median["workers"], 3),
            }
        policy_ms = {"batch_1": step_ms(model, 1), f"batch_{args.workers}": step_ms(model, args.workers)}
    results = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "load_average": list(os.getloadavg()),
        "python": platform.python_version(),
        "workers": args.workers,
        "seconds_per_loop": args.seconds,
        "repeats": args.repeats,
        "model": "cfc, brain.* defaults (64 units, 3 conv layers), untrained",
        "target": TARGET,
        "policy_step_ms": policy_ms,
        "scenarios": scenarios,
        "seconds": round(time.perf_counter() - started, 1),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))


if __name__ == "__main__":
    main()
