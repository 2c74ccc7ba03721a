"""Benchmark glibc's allocator as shipped against Golem's tuning (:mod:`golem.allocator`), side by side.

The training benchmark (``bench_train.py``: full ``cfc`` and ``lstm`` steps and
the cortices alone) runs in fresh processes, alternately with the allocator as
glibc ships it and with :func:`golem.allocator.keep_freed_memory` applied
first (``BENCH_ALLOCATOR``), ``--pairs`` times. Each run's user and
system CPU seconds come from ``wait4``; frames/s from its own JSON. Medians go
to ``bench/results/allocator.json`` and a table.

Usage: ``python bench/bench_allocator.py [--pairs 2] [--steps 10] [--rounds 3]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "allocator.json"


def run_once(mode: str, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    env["BENCH_ALLOCATOR"] = mode
    cmd = [
        sys.executable,
        str(HERE / "bench_train.py"),
        "--steps",
        str(args.steps),
        "--rounds",
        str(args.rounds),
        "--out",
        str(out),
    ]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"bench_train.py ({mode}) failed")
    report = json.loads(out.read_text())
    models = report["models"]
    return {
        "user_s": round(usage.ru_utime, 2),
        "sys_s": round(usage.ru_stime, 2),
        **{f"{m}_full_step_fps": models[m]["full_step_fps"] for m in models},
        **{f"{m}_cortices_fps": models[m]["cortices_fps"] for m in models},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    runs: dict[str, list[dict[str, Any]]] = {"glibc": [], "tuned": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.pairs):
            for mode in ("glibc", "tuned") if i % 2 == 0 else ("tuned", "glibc"):
                runs[mode].append(run_once(mode, args, Path(tmp) / f"{mode}-{i}.json"))
    medians = {mode: {k: statistics.median(r[k] for r in rows) for k in rows[0]} for mode, rows in runs.items()}
    ratios = {k: round(medians["tuned"][k] / medians["glibc"][k], 3) for k in medians["glibc"] if k.endswith("_fps")}
    report = {
        "pairs": args.pairs,
        "steps": args.steps,
        "rounds": args.rounds,
        "load_average_1min": os.getloadavg()[0],
        "runs": runs,
        "medians": medians,
        "tuned_over_glibc": ratios,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    table = Table(title=f"Allocator: medians of {args.pairs} runs each of bench_train.py")
    for col in ("allocator", "user s", "sys s", "cfc full step f/s", "lstm full step f/s", "cortices f/s (cfc run)"):
        table.add_column(col, justify="left" if col == "allocator" else "right")
    for mode, m in medians.items():
        table.add_row(
            mode,
            f"{m['user_s']:.1f}",
            f"{m['sys_s']:.1f}",
            f"{m['cfc_full_step_fps']:.0f}",
            f"{m['lstm_full_step_fps']:.0f}",
            f"{m['cfc_cortices_fps']:.0f}",
        )
    Console().print(table)
    Console().print(f"tuned / glibc: {ratios} → {args.out}")


if __name__ == "__main__":
    main()
