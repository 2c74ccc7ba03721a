"""The generalisation scoreboard: is a curriculum over generated maps better than phase-3 maps or fixed scenarios?

Three models, the same architecture and default training settings, the same
number of optimiser steps (``--updates``) and (close to) the same number of
expert frames:

* **fixed** — trained on the fixed scenarios' experts only (``my_way_home``
  and ``deadly_corridor``, alternating, recorded until the frame budget);
* **phase 3** — trained on explorer demonstrations on phase-3 maps;
* **curriculum** — ``golem procgen curriculum --phases 1,2,3`` with one round a
  phase, each phase fine-tuning the last on all curriculum data so far
  (``--updates``/3 steps a phase; promotion by rounds, not by score).

The curriculum runs first and sets the frame budget; the other two arms
record in batches of five episodes until they reach it. Each model then
plays 30 unseen maps of each phase (seeds 10000…, ``--max-steps`` tics at
most); the random policy and the explorer are played once on the same maps.
Results go to ``bench/results/procgen.json``; ``--table`` prints the README table.

Recording, the curriculum's rounds and the evaluations run on ``--workers`` engine processes.

    python bench/bench_procgen.py --updates 300 --maps-per-phase 15
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from console import golem, json_stage  # bench/ is on the path when a benchmark runs as a script

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "procgen.json"
FIXED = ("my_way_home", "deadly_corridor")


def frames(root: Path) -> int:
    listing = json.loads(golem("data", "list", "--json", "--store", str(root / "stores" / "demos")))
    return sum(int(e["length"]) for e in listing["episodes"])


def record_until(root: Path, budget: int, arm: str, workers: int, batch: int) -> int:
    """Record batches for ``arm`` into ``root`` (``--workers`` engines) until ``budget`` frames; the frames recorded.

    ``phase3``: the explorer on ``batch`` new phase-3 maps a batch; ``fixed``: the fixed scenarios' experts in
    turn, ``batch`` // 2 episodes a batch (fewer, longer calls: each starts its engines afresh).
    """
    k = 0
    seed = 0
    while frames(root) < budget if (root / "stores" / "demos").exists() else True:
        common = ["--workers", str(workers), "--set", f"data.root={root}"]
        if arm == "fixed":
            n = max(2, batch // 2)
            scenario = FIXED[k % len(FIXED)]
            golem("run", "record", "--expert", scenario, "-n", str(n), "--seed", str(seed), *common)
        else:
            n = batch
            golem(
                "run",
                "record",
                "--expert",
                "explorer",
                "--procgen-phase",
                "3",
                "--maps",
                str(n),
                "--seed",
                str(seed),
                *common,
            )
        seed += n
        k += 1
    return frames(root)


def evaluate(
    root: Path, model: Path, phase: int, maps: int, max_steps: int, baselines: bool, workers: int
) -> dict[str, Any]:
    args = [
        "run",
        "evaluate",
        "--model",
        str(model),
        "--procgen-phase",
        str(phase),
        "--maps",
        str(maps),
        "--max-steps",
        str(max_steps),
        "--workers",
        str(workers),
        "--json",
        "--set",
        f"data.root={root}",
    ]
    return json.loads(golem(*args, *([] if baselines else ["--no-baselines"])))


def _curriculum(work: Path, args: argparse.Namespace) -> dict[str, Any]:
    started = time.perf_counter()
    cur = work / "curriculum"
    report = json.loads(
        golem(
            "procgen",
            "curriculum",
            "--phases",
            "1,2,3",
            "--maps-per-round",
            str(args.maps_per_phase),
            "--rounds",
            "1",
            "--promote-at",
            "0",
            "--eval-maps",
            "1",
            "--updates-per-round",
            str(max(1, args.updates // 3)),
            "--workers",
            str(args.workers),
            "--json",
            "--set",
            f"data.root={cur}",
        )
    )
    return {
        "frames": frames(cur),
        "updates": sum(r["updates"] for r in report["rounds"]),
        "seconds": round(time.perf_counter() - started, 1),
    }


def _arm(work: Path, arm: str, budget: int, updates: int, args: argparse.Namespace) -> dict[str, Any]:
    started = time.perf_counter()
    root = work / arm
    got = record_until(root, budget, arm, args.workers, args.batch)
    golem("run", "train", "--updates", str(updates), "--set", f"data.root={root}")
    return {"frames": got, "updates": updates, "seconds": round(time.perf_counter() - started, 1)}


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Train the arms asked for (``--arms``) and play each on unseen maps of every phase.

    With ``--dir`` every finished stage (an arm trained, an arm played on a phase) is kept in that folder as
    ``<arm>.json`` / ``<arm>-phase<P>.json``, and a rerun takes it from there.
    """
    keep = args.dir is not None
    work = args.dir if keep else Path(tempfile.mkdtemp(prefix="golem-bench-procgen-"))
    work.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    wanted = [a.strip() for a in args.arms.split(",") if a.strip()]
    try:
        arms: dict[str, Any] = {"curriculum": json_stage(work / "curriculum.json", lambda: _curriculum(work, args))}
        budget = arms["curriculum"]["frames"]
        print(f"curriculum: {budget} frames, {arms['curriculum']['updates']} updates", flush=True)
        updates = 3 * max(1, args.updates // 3)
        for arm in ("phase3", "fixed"):
            if arm in wanted:
                arms[arm] = json_stage(work / f"{arm}.json", lambda arm=arm: _arm(work, arm, budget, updates, args))
                print(f"{arm}: {arms[arm]['frames']} frames", flush=True)
        scores: dict[str, Any] = {}
        played = [  # an arm whose stored evaluations already include the random policy and the explorer
            a
            for a in wanted
            if (work / f"{a}-phase1.json").exists()
            and "random" in json.loads((work / f"{a}-phase1.json").read_text())["policies"]
        ]
        first = played[0] if played else next(a for a in ("fixed", "phase3", "curriculum") if a in wanted)
        for name in (a for a in arms if a in wanted):
            model = work / name / "models" / "basic" / "active.safetensors"
            scores[name] = {}
            for phase in (1, 2, 3):
                board = json_stage(
                    work / f"{name}-phase{phase}.json",
                    lambda name=name, phase=phase, model=model: evaluate(
                        work / name, model, phase, args.eval_maps, args.max_steps, name == first, args.workers
                    ),
                )
                scores[name][str(phase)] = board["policies"]
                print(f"{name} phase {phase}: model exit {board['policies']['model']['goal_rate']:.0%}", flush=True)
        return {
            "when": datetime.now(UTC).isoformat(timespec="seconds"),
            "updates": args.updates,
            "maps_per_phase": args.maps_per_phase,
            "eval_maps": args.eval_maps,
            "max_steps": args.max_steps,
            "workers": args.workers,
            "seconds": round(time.perf_counter() - began, 1),
            "baselines": first,
            "arms": {k: v for k, v in arms.items() if k in wanted},
            "scores": scores,
        }
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


def _rate(policy: dict[str, Any]) -> str:
    """An exit rate with its standard error over the maps, ``40% ± 7``."""
    rate, n = policy["goal_rate"], policy["episodes"]
    return f"{rate:.0%} ± {100 * (rate * (1 - rate) / n) ** 0.5:.0f}" if n > 1 else f"{rate:.0%}"


def table(results: dict[str, Any]) -> str:
    lines = [
        "| model | frames | phase 1 exits | phase 2 exits | phase 3 exits | return (1 / 2 / 3) |",
        "|---|---|---|---|---|---|",
    ]

    def row(label: str, frames_: str, per_phase: dict[str, Any], role: str) -> str:
        exits = " | ".join(_rate(per_phase[p][role]) for p in ("1", "2", "3"))
        rets = " / ".join(f"{per_phase[p][role]['return']['mean']:.2f}" for p in ("1", "2", "3"))
        return f"| {label} | {frames_} | {exits} | {rets} |"

    labels = (("fixed", "fixed scenarios"), ("phase3", "phase-3 maps"), ("curriculum", "curriculum 1 → 2 → 3"))
    for name, label in labels:
        if name in results["scores"]:
            lines.append(row(label, f"{results['arms'][name]['frames']:,}", results["scores"][name], "model"))
        else:
            lines.append(f"| {label} | not measured at this budget | | | | |")
    base = results["scores"][results.get("baselines", "fixed")]
    lines.append(row("random policy", "–", base, "random"))
    lines.append(row("explorer (expert)", "–", base, "expert"))
    lines += [
        "",
        f"{results['updates']:,} optimiser steps per model; the curriculum's {results['maps_per_phase']:,} maps a "
        f"phase set the frame budget; {results['eval_maps']} unseen maps per phase, ± one standard error; "
        "recording and training took "
        + ", ".join(f"{arm['seconds'] / 60:.0f} min ({name})" for name, arm in results["arms"].items())
        + ".",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--updates", type=int, default=300, help="optimiser steps per model")
    parser.add_argument(
        "--maps-per-phase", type=int, default=15, help="curriculum maps per phase (sets the frame budget)"
    )
    parser.add_argument("--eval-maps", type=int, default=30, help="unseen maps per phase in the evaluation")
    parser.add_argument("--max-steps", type=int, default=2100, help="tics per evaluation episode at most")
    parser.add_argument("--workers", type=int, default=2, help="engine processes for recording and evaluation")
    parser.add_argument("--batch", type=int, default=50, help="phase-3 maps per recording batch of the phase-3 arm")
    parser.add_argument("--dir", type=Path, default=None, help="work folder to keep and resume (default: temporary)")
    parser.add_argument("--arms", default="fixed,phase3,curriculum", help="which models to train and play")
    parser.add_argument("--table", action="store_true", help="print the README table of the stored results")
    args = parser.parse_args()
    if args.table:
        print(table(json.loads(RESULTS.read_text())))
        return
    results = run(args)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))


if __name__ == "__main__":
    main()
