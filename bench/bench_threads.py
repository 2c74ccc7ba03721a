"""Training alone and two trainings side by side, with OpenMP threads that spin or sleep while they wait.

Each configuration runs ``golem run train --set training.updates=U`` on one
recorded store (``--expert``, default ``take_cover``: long episodes, 32-step windows), first alone, then two at
once (each with its own data root), in fresh processes:

* ``spinning``: libgomp's own default, which Golem replaced (``OMP_WAIT_POLICY``
  unset means a 300,000-iteration spin before a waiting thread sleeps; here
  ``OMP_WAIT_POLICY=ACTIVE GOMP_SPINCOUNT=300000`` reproduces it, since Golem now
  sets the variable when it is unset), torch's default threads (one per core);
* ``passive``: what ``golem`` does now (``OMP_WAIT_POLICY=PASSIVE``, see
  :mod:`golem.threads`), one thread per core;
* ``one thread``: ``OMP_NUM_THREADS=1`` (each process its share of two cores
  when two run).

Per job: the training's own seconds and frames/s (updates × batch × window ÷
seconds); per configuration: the wall time of the pair. Results go to
``bench/results/threads.json`` and a table.

Usage: ``python bench/bench_threads.py [--expert take_cover] [--episodes 20] [--updates 80]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "threads.json"
GOLEM = Path(sys.executable).with_name("golem")
#: Environment of each configuration (added to a copy of this process's, without OMP_*/GOMP_* of its own).
CONFIGS: dict[str, dict[str, str]] = {
    "spinning": {"OMP_WAIT_POLICY": "ACTIVE", "GOMP_SPINCOUNT": "300000"},
    "passive": {},
    "one thread": {"OMP_NUM_THREADS": "1"},
}


def _env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "GOMP_", "GOLEM_"))}
    return env | extra


def _train(store: Path, root: Path, updates: int, env: dict[str, str]) -> subprocess.Popen[str]:
    args = [
        str(GOLEM),
        "--log-level",
        "error",
        "run",
        "train",
        "--store",
        str(store),
        "--set",
        f"data.root={root}",
        "--set",
        f"training.updates={updates}",
        "--no-tensorboard",
        "--json",
    ]
    return subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = proc.communicate(timeout=3600)
    if proc.returncode != 0:
        raise SystemExit(f"golem run train failed ({proc.returncode}):\n{err[-2000:]}")
    report = json.loads(out)
    from golem.learning.checkpoints import read_metadata

    meta = read_metadata(Path(report["active"]))
    data, training = meta["data"], meta["training"]
    window = training["sequence_length"]
    window = window if isinstance(window, int) else int(data.get("sequence_length") or 0)
    frames = report["updates"] * int(data["batch_size"]) * window if window else None
    seconds = float(report["seconds"])
    return {
        "seconds": round(seconds, 2),
        "updates": report["updates"],
        "threads": data.get("threads"),
        "frames_per_s": round(frames / seconds, 1) if frames else None,
    }


def run_config(name: str, store: Path, tmp: Path, updates: int) -> dict[str, Any]:
    env = _env(CONFIGS[name])
    alone = _finish(_train(store, tmp / f"{name}-alone", updates, env))
    started = time.perf_counter()
    pair = [_train(store, tmp / f"{name}-pair{i}", updates, env) for i in range(2)]
    jobs = [_finish(p) for p in pair]
    return {"env": CONFIGS[name], "alone": alone, "pair": jobs, "pair_wall_s": round(time.perf_counter() - started, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=80)
    parser.add_argument("--expert", default="take_cover")
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        store = tmp / "store"
        subprocess.run(
            [
                str(GOLEM),
                "--log-level",
                "error",
                "run",
                "record",
                "--expert",
                args.expert,
                "-n",
                str(args.episodes),
                "--store",
                str(store),
            ],
            check=True,
            env=_env({}),
            capture_output=True,
        )
        runs = {name: run_config(name, store, tmp, args.updates) for name in CONFIGS}
    report = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "cores": os.cpu_count(),
        "expert": args.expert,
        "updates": args.updates,
        "episodes": args.episodes,
        "runs": runs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    table = Table(title=f"golem run train on {args.expert}, {args.updates} updates: alone and two side by side")
    for column in ("OpenMP threads", "alone frames/s", "pair frames/s (each)", "pair wall s"):
        table.add_column(column, justify="right")
    for name, r in runs.items():
        table.add_row(
            name,
            f"{r['alone']['frames_per_s']:,.0f}",
            " / ".join(f"{j['frames_per_s']:,.0f}" for j in r["pair"]),
            f"{r['pair_wall_s']:.1f}",
        )
    Console().print(table)


if __name__ == "__main__":
    main()
