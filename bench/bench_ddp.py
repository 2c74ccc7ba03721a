"""Data-parallel training on this machine: ``golem run train --nproc 1`` vs ``--nproc 2``, same global batch.

Both train the same store for ``--updates`` optimiser steps with the same
settings (B = 32 streams in all: one process takes 32, each of two takes 16).
Runs alternate (1, 2, 1, 2, …) ``--pairs`` times; each reports the training
frames/s of its epochs (all ranks' recorded steps per second of the loop,
validation excluded) and its wall time including start-up and validation.
Results go to ``bench/results/ddp.json``.

    python bench/bench_ddp.py [--updates 60] [--pairs 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from console import golem  # bench/ is on the path when a benchmark runs as a script

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "ddp.json"


def run(root: Path, nproc: int, updates: int, length: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    out = json.loads(
        golem(
            "run",
            "train",
            "--nproc",
            str(nproc),
            "--updates",
            str(updates),
            "--no-tensorboard",
            "--device",
            "cpu",
            "--set",
            f"training.sequence_length={length}",
            "--set",
            "training.validate_every=100000",
            "--set",
            "training.tune_episodes=0",  # no search by play
            "--set",
            f"data.root={root}",
            "--json",
        )
    )
    wall = time.perf_counter() - t0
    frames = sum(h["frames_per_s"] * h["seconds"] for h in out["history"])
    seconds = sum(h["seconds"] for h in out["history"])
    return {"frames_per_s": frames / seconds, "train_seconds": seconds, "wall_seconds": wall}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=30, help="defend_the_center expert episodes to record")
    parser.add_argument("--updates", type=int, default=60)
    parser.add_argument("--length", type=int, default=16, help="training.sequence_length")
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="golem-bench-ddp-"))
    golem(
        "run",
        "record",
        "--expert",
        "defend_the_center",
        "--episodes",
        str(args.episodes),
        "--workers",
        "2",
        "--set",
        f"data.root={root}",
    )
    runs: dict[str, list[dict[str, Any]]] = {"1": [], "2": []}
    for _ in range(args.pairs):
        for nproc in (1, 2):
            runs[str(nproc)].append(run(root, nproc, args.updates, args.length))
            print(f"nproc {nproc}: {runs[str(nproc)][-1]}", flush=True)
    med = {k: {m: statistics.median(r[m] for r in v) for m in v[0]} for k, v in runs.items()}
    report = {
        "cpu_count": os.cpu_count(),
        "load_average_1min": os.getloadavg()[0],
        "updates": args.updates,
        "batch_size": 32,
        "sequence_length": args.length,
        "runs": runs,
        "medians": med,
        "two_over_one_frames_per_s": med["2"]["frames_per_s"] / med["1"]["frames_per_s"],
        "two_over_one_wall": med["1"]["wall_seconds"] / med["2"]["wall_seconds"],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(
        f"2 processes / 1: training frames/s {report['two_over_one_frames_per_s']:.2f}×, "
        f"wall {report['two_over_one_wall']:.2f}×  → {args.out}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
