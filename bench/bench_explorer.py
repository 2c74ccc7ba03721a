"""The ``explorer`` (or ``scout``) expert on generated maps: completion rate per curriculum phase (real engine,
builtin generator).

For each phase, ``--maps`` maps are sampled and built from seeds ``--seed …``
(the same maps every run: configuration and bytes depend only on the seed),
and the explorer plays one episode on each. Reported per phase: share of maps
whose exit it reached, deaths, time-outs, mean kills and tics, and the time a
map takes to build and to play. Results go to ``bench/results/explorer.json``
(another ``--expert``'s under its name in ``others``); ``--table`` prints the README table.

    python bench/bench_explorer.py --maps 30
    python bench/bench_explorer.py --maps 30 --expert scout
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "explorer.json"


def run_phase(phase: int, maps: int, first_seed: int, folder: Path, expert_name: str = "explorer") -> dict[str, Any]:
    from golem.profiles import PROFILES
    from golem.runtime.rollout import run_episode
    from golem.runtime.session import Session
    from golem.settings import GolemSettings
    from golem_procgen.builtin import BuiltinGenerator
    from golem_procgen.explorer import ExplorerExpert
    from golem_procgen.scout import ScoutExpert

    settings = GolemSettings()
    generator = BuiltinGenerator(settings)
    rows, build_s, play_s = [], [], []
    for seed in range(first_seed, first_seed + maps):
        config = generator.sample(phase, seed)
        t0 = time.perf_counter()
        info = generator.build(config.as_dict(), seed, folder / f"p{phase}-{seed}.wad")
        build_s.append(time.perf_counter() - t0)
        cls = {"explorer": ExplorerExpert, "scout": ScoutExpert}[expert_name]
        expert = cls(PROFILES[settings.brain.profile], settings)
        t0 = time.perf_counter()
        with Session(settings, scenario=str(info.config), configurers=[expert]) as session:
            result = run_episode(session, expert, seed)
        play_s.append(time.perf_counter() - t0)
        rows.append(
            {
                "seed": seed,
                "params": config.params,
                "priors": list(config.priors),
                "exited": result.exited,
                "dead": result.dead,
                "kills": result.kills,
                "tics": result.tics,
            }
        )
        print(
            f"phase {phase} seed {seed}: {'exit' if result.exited else 'dead' if result.dead else 'time-out'} "
            f"({result.tics} tics, {result.kills} kills)",
            flush=True,
        )
    n = len(rows)
    return {
        "maps": n,
        "completion": sum(r["exited"] for r in rows) / n,
        "death_rate": sum(r["dead"] for r in rows) / n,
        "timeout_rate": sum(not r["exited"] and not r["dead"] for r in rows) / n,
        "mean_kills": statistics.mean(r["kills"] for r in rows),
        "mean_tics": statistics.mean(r["tics"] for r in rows),
        "build_ms_median": 1000 * statistics.median(build_s),
        "play_s_median": statistics.median(play_s),
        "episodes": rows,
    }


def table(results: dict[str, Any]) -> str:
    lines = [
        "| expert | phase | maps | reached the exit | died | timed out | kills / map | tics / map | build (ms) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, run in [("explorer", results), *sorted(results.get("others", {}).items())]:
        for phase, r in sorted(run["phases"].items()):
            lines.append(
                f"| `{name}` | {phase} | {r['maps']} | {r['completion']:.0%} | {r['death_rate']:.0%} "
                f"| {r['timeout_rate']:.0%} | {r['mean_kills']:.1f} | {r['mean_tics']:.0f} "
                f"| {r['build_ms_median']:.0f} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--maps", type=int, default=30, help="maps per phase")
    parser.add_argument("--seed", type=int, default=10_000, help="first map seed (unseen by training maps from 0)")
    parser.add_argument("--phase", type=int, action="append", help="phase to run (repeatable; default 1, 2, 3)")
    parser.add_argument("--expert", default="explorer", choices=("explorer", "scout"), help="the expert that plays")
    parser.add_argument("--table", action="store_true", help="print the README table of the stored results")
    args = parser.parse_args()
    if args.table:
        print(table(json.loads(RESULTS.read_text())))
        return
    with tempfile.TemporaryDirectory(prefix="golem-bench-explorer-") as tmp:
        phases = {str(p): run_phase(p, args.maps, args.seed, Path(tmp), args.expert) for p in (args.phase or [1, 2, 3])}
    run = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "maps_per_phase": args.maps,
        "first_seed": args.seed,
        "phases": phases,
    }
    stored = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    if args.expert == "explorer":
        results = {**run, "others": stored.get("others", {})}
    else:
        results = {**stored, "others": {**stored.get("others", {}), args.expert: run}}
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))


if __name__ == "__main__":
    main()
