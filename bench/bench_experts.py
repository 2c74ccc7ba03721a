"""Benchmark the scripted experts against the random baseline on the same seeds.

Each scenario is played by its expert and by :class:`RandomPolicy` (every
button pressed independently with probability 0.5, reseeded per episode) over
episodes with seeds ``0 … N-1``, in parallel worker processes. Results go to
``bench/results/experts.json`` and a rich table.

Usage: ``python bench/bench_experts.py [--episodes 20] [--workers 2] [--scenarios basic,…]``

Variants of an expert, e.g. the take_cover planner limited to the screen and remembering what it saw::

    python bench/bench_experts.py --scenarios take_cover --frame-skip 4 --first-seed 10000 --episodes 30 \
        --set experts.take_cover.view=45 --set experts.take_cover.memory=true --out /tmp/take_cover_memory.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import structlog
from rich.console import Console
from rich.table import Table

from golem.logs import configure_logging
from golem.profiles import BASIC
from golem.runtime.random_policy import RandomPolicy
from golem.runtime.rollout import run_episode
from golem.runtime.session import Session
from golem.settings import load_settings, parse_assignment
from golem_experts import EXPERTS

RESULTS = Path(__file__).resolve().parent / "results" / "experts.json"
#: Episode cap in tics (take_cover and defend_the_line have no timeout of their own; predict_position
#: ends at 300, the others at 2,100).
MAX_TICS = 2100
log = structlog.get_logger("bench_experts")


def run_job(scenario: str, policy: str, seeds: list[int], overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Play ``seeds`` of ``scenario`` with ``policy`` ("expert" or "random"); per-episode stats.

    ``overrides``: dotted settings (``game.frame_skip``, ``experts.NAME.FIELD``) over the defaults.
    """
    configure_logging(level="warning")
    settings = load_settings(overrides=[("bench", overrides or {})], environ={}).settings
    expert = EXPERTS[scenario](BASIC, settings)
    started = time.perf_counter()
    with Session(settings, scenario=scenario, configurers=[expert]) as session:
        episodes = []
        for seed in seeds:
            actor = expert if policy == "expert" else RandomPolicy(BASIC, seed=seed)
            episodes.append(run_episode(session, actor, seed, max_steps=MAX_TICS).as_dict())
    return {
        "scenario": scenario,
        "policy": policy,
        "episodes": episodes,
        "seconds": round(time.perf_counter() - started, 2),
    }


def summarise(episodes: list[dict[str, Any]]) -> dict[str, float]:
    """Mean and standard deviation of the return, and the means/totals of the counters."""
    returns = [e["episode_return"] for e in episodes]
    n = len(episodes)
    return {
        "episodes": n,
        "return_mean": statistics.fmean(returns),
        "return_std": statistics.pstdev(returns),
        "tics_mean": statistics.fmean(e["tics"] for e in episodes),
        "full_survival": sum(e["tics"] >= MAX_TICS for e in episodes),
        "kills_mean": statistics.fmean(e["kills"] for e in episodes),
        "ammo_used_mean": statistics.fmean(e["ammo_used"] for e in episodes),
        "exits": sum(e["exited"] for e in episodes),
        "deaths": sum(e["dead"] for e in episodes),
    }


def counters(scenario: str, s: dict[str, float]) -> str:
    """The scenario-specific figures, as one line of text."""
    n = int(s["episodes"])
    if scenario == "defend_the_center":
        return f"kills {s['kills_mean']:.1f}, ammo used {s['ammo_used_mean']:.1f}"
    if scenario == "defend_the_line":  # bullets refill, so rounds fired do not show in the ammo count
        return f"kills {s['kills_mean']:.1f}, survival {s['tics_mean']:.0f} tics, full {int(s['full_survival'])}/{n}"
    if scenario in ("health_gathering", "health_gathering_supreme", "take_cover"):
        return f"survival {s['tics_mean']:.0f} tics, full {int(s['full_survival'])}/{n}"
    if scenario == "my_way_home":
        return f"exits {int(s['exits'])}/{n}, {s['tics_mean']:.0f} tics"
    if scenario == "deadly_corridor":
        return f"vest reached {int(s['exits'])}/{n}, {s['tics_mean']:.0f} tics"
    return f"kills {int(s['kills_mean'] * n)}/{n}, {s['tics_mean']:.1f} tics"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=20, help="episodes per scenario and policy")
    parser.add_argument("--workers", type=int, default=2, help="parallel engine processes")
    parser.add_argument("--scenarios", default=",".join(EXPERTS), help="comma-separated scenario names")
    parser.add_argument("--out", type=Path, default=RESULTS, help="JSON results file")
    parser.add_argument("--first-seed", type=int, default=0, help="seed of the first episode")
    parser.add_argument("--frame-skip", type=int, default=1, help="tics each decision is held")
    parser.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        help="a setting KEY=VALUE for the experts and the game (repeatable)",
    )
    args = parser.parse_args(argv)
    configure_logging(level="info")
    scenarios = [s for s in args.scenarios.split(",") if s]
    seeds = list(range(args.first_seed, args.first_seed + args.episodes))
    overrides = dict(parse_assignment(a) for a in args.sets) | {"game.frame_skip": args.frame_skip}
    jobs = [(s, p, seeds, overrides) for s in scenarios for p in ("expert", "random")]
    log.info("bench_started", scenarios=scenarios, episodes=args.episodes, workers=args.workers)
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        done = list(pool.map(run_job, *zip(*jobs)))
    # Scenarios run before (another --scenarios) stay in the file; the ones run now replace theirs.
    earlier = json.loads(args.out.read_text()) if args.out.is_file() else {}
    results: dict[str, Any] = {
        "episodes": args.episodes,
        "max_tics": MAX_TICS,
        "first_seed": args.first_seed,
        "settings": overrides,
        "random_policy": "each button independently, p=0.5, seeded per episode",
        "scenarios": {
            k: v
            for k, v in earlier.get("scenarios", {}).items()
            if k not in scenarios and earlier.get("episodes") == args.episodes
        },
    }
    for job in done:
        entry = results["scenarios"].setdefault(job["scenario"], {})
        entry[job["policy"]] = {
            "summary": summarise(job["episodes"]),
            "episodes": job["episodes"],
            "seconds": job["seconds"],
        }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))
    table = Table(title=f"Scripted experts vs random policy ({args.episodes} episodes, same seeds)")
    for col in ("scenario", "policy", "return (mean ± std)", "counters", "deaths"):
        table.add_column(col, justify="left" if col in ("scenario", "policy", "counters") else "right")
    for scenario in scenarios:
        for policy in ("expert", "random"):
            s = results["scenarios"][scenario][policy]["summary"]
            table.add_row(
                scenario,
                policy,
                f"{s['return_mean']:.2f} ± {s['return_std']:.2f}",
                counters(scenario, s),
                str(int(s["deaths"])),
            )
    console = Console()
    if not console.is_terminal:
        console.width = 120
    console.print(table)
    log.info("bench_written", path=str(args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
