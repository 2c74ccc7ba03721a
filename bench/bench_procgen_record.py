"""Recording on generated maps at scale: ``golem run record --procgen-phase P --maps N --workers W``.

Three runs of the real command, each into a fresh store (maps in a fresh cache folder unless stated):

* ``scenario``: the ``my_way_home`` expert (a navigation expert on a shipped map) records ``--episodes``
  episodes with ``--workers`` engines, a decision every tic as the explorer's — the frames/s generated-map
  recording is compared with;
* ``maps, built``: the ``explorer`` expert records one episode on each of ``--maps`` phase-``P`` maps that the
  workers build as they go (the build is part of the time);
* ``maps, cached``: the same command again into a new store, every map read from the cache.

Frames/s is stored steps per wall-clock second of the whole command (engine starts and store writes
included). Results go to ``bench/results/procgen_record.json``; ``--table`` prints the table.

    python bench/bench_procgen_record.py --maps 500 --workers 2
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from console import golem  # bench/ is on the path when a benchmark runs as a script

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "procgen_record.json"
RECORDED = re.compile(r"recorded (\d+) episode\(s\).*?(\d+)\s+frames", re.DOTALL)


def timed_record(args: list[str]) -> dict[str, Any]:
    """Run ``golem run record *args``; episodes, frames, seconds and frames/s."""
    started = time.perf_counter()
    out = golem("run", "record", *args)
    seconds = time.perf_counter() - started
    found = RECORDED.search(out.replace("\n", " "))
    if found is None:
        raise SystemExit(f"cannot read the recording's summary: {out!r}")
    episodes, frames = int(found.group(1)), int(found.group(2))
    return {"episodes": episodes, "frames": frames, "seconds": round(seconds, 1), "fps": round(frames / seconds, 1)}


def run(maps: int, phase: int, workers: int, episodes: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="golem-bench-procgen-"))
    try:
        root = ["--set", f"data.root={work}"]
        scenario = timed_record(
            [
                "--expert",
                "my_way_home",
                "--frame-skip",
                "1",
                "--episodes",
                str(episodes),
                "--workers",
                str(workers),
                "--store",
                str(work / "s0"),
                *root,
            ]
        )
        maps_args = ["--expert", "explorer", "--procgen-phase", str(phase), "--maps", str(maps)]
        maps_args += ["--workers", str(workers), *root]
        built = timed_record([*maps_args, "--store", str(work / "s1")])
        cached = timed_record([*maps_args, "--store", str(work / "s2")])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {
        "phase": phase,
        "maps": maps,
        "workers": workers,
        "scenario": scenario,
        "built": built,
        "cached": cached,
        "ratio_built": round(built["fps"] / scenario["fps"], 3),
        "ratio_cached": round(cached["fps"] / scenario["fps"], 3),
        "target_minutes": 15.0,
        "machine": f"{platform.machine()}, {__import__('os').cpu_count()} cores",
        "measured": time.strftime("%Y-%m-%d"),
    }


def table(results: dict[str, Any]) -> str:
    r = results
    head = "| run | episodes | frames | minutes | frames/s | ÷ scenario recording |\n|---|---|---|---|---|---|"
    rows = [
        ("`my_way_home` expert, shipped map", r["scenario"], None),
        (f"explorer, {r['maps']} phase-{r['phase']} maps built as they go", r["built"], r["ratio_built"]),
        (f"explorer, the same {r['maps']} maps from the cache", r["cached"], r["ratio_cached"]),
    ]
    lines = [head]
    for label, m, ratio in rows:
        ratio_cell = "1" if ratio is None else f"{ratio:.2f}"
        lines.append(
            f"| {label} | {m['episodes']} | {m['frames']:,} | {m['seconds'] / 60:.1f} | {m['fps']:.0f} | {ratio_cell} |"
        )
    return "\n".join(lines) + f"\n\n{r['workers']} workers on {r['machine']}; target: {r['maps']} maps in ≤ 15 min."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--maps", type=int, default=500)
    parser.add_argument("--phase", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--episodes", type=int, default=100, help="episodes of the scenario recording")
    parser.add_argument("--table", action="store_true")
    args = parser.parse_args()
    if args.table:
        print(table(json.loads(RESULTS.read_text())))
        return
    result = run(args.maps, args.phase, args.workers, args.episodes)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(table(result))


if __name__ == "__main__":
    main()
