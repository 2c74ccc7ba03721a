"""What the engine's clock as the ODE's time gives: a model trained at frame skip 1, played at skip 1, 2 and 4.

For each scenario (``--scenario``, repeatable): record ``--episodes`` expert
episodes at frame skip 1 and ``golem run train`` with default settings. Then
``golem run evaluate`` the model on the same unseen seeds at frame skip 1, 2 and
4 (the agent decides every k tics and holds its buttons in between), once with
**true** time spans (``game.timespans = engine``: the CfC integrates the k tics
that passed) and once with **unit** spans (``game.timespans = unit``: the cell
is told one tic passed, as a discrete-time network would assume). The random
policy and the expert are played at the same frame skip, so each row is
normalised against baselines that acted as coarsely. At skip 1 the two arms
are the same computation and only ``engine`` is played.

Results go to ``bench/results/timespans.json`` keyed by scenario; ``--table``
prints the README table.

    python bench/bench_timespans.py --scenario health_gathering --scenario take_cover
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

from console import golem  # bench/ is on the path when a benchmark runs as a script

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "timespans.json"
EPISODES = {"basic": 40, "health_gathering": 15, "defend_the_center": 60, "take_cover": 15}
DEFAULT_SCENARIOS = ("health_gathering", "take_cover")
SKIPS = (1, 2, 4)


def evaluate(
    root: Path, scenario: str, episodes: int, workers: int, skip: int, spans: str, baselines: bool
) -> dict[str, Any]:
    path = root / f"board-{skip}-{spans}.json"
    golem(
        "run",
        "evaluate",
        "--set",
        f"data.root={root}",
        "--scenario",
        scenario,
        "--episodes",
        str(episodes),
        "--workers",
        str(workers),
        "--frame-skip",
        str(skip),
        "--set",
        f"game.timespans={spans}",
        *([] if baselines else ["--no-baselines"]),
        "--out",
        str(path),
        cwd=root,
    )
    board = json.loads(path.read_text())
    return {role: board["policies"][role]["return"] for role in board["policies"]}


def run(scenario: str, episodes: int, eval_episodes: int, workers: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix=f"golem-timespans-{scenario}-"))
    try:
        root = work / "data"
        t0 = time.perf_counter()
        golem(
            "run",
            "record",
            "--expert",
            scenario,
            "--episodes",
            str(episodes),
            "--workers",
            str(workers),
            "--set",
            f"data.root={root}",
            cwd=work,
        )
        trained = json.loads(golem("run", "train", "--set", f"data.root={root}", "--json", cwd=work))
        train_minutes = (time.perf_counter() - t0) / 60
        rows: dict[str, Any] = {}
        for skip in SKIPS:
            t0 = time.perf_counter()
            engine = evaluate(root, scenario, eval_episodes, workers, skip, "engine", baselines=True)
            row: dict[str, Any] = {"random": engine["random"], "expert": engine["expert"], "engine": engine["model"]}
            if skip > 1:
                row["unit"] = evaluate(root, scenario, eval_episodes, workers, skip, "unit", baselines=False)["model"]
            span = row["expert"]["mean"] - row["random"]["mean"]
            for arm in ("engine", "unit"):
                if arm in row and span:
                    row[f"{arm}_normalised"] = (row[arm]["mean"] - row["random"]["mean"]) / span
            row["minutes"] = round((time.perf_counter() - t0) / 60, 1)
            rows[str(skip)] = row
        return {
            "scenario": scenario,
            "measured": datetime.now(UTC).isoformat(timespec="seconds"),
            "recorded_episodes": episodes,
            "eval_episodes": eval_episodes,
            "train": {
                "minutes": round(train_minutes, 1),
                "updates": trained.get("updates"),
                "best_epoch": trained.get("best_epoch"),
                "validation": trained.get("validation"),
            },
            "frame_skip": rows,
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def fmt(stat: dict[str, float] | None) -> str:
    return "—" if stat is None else f"{stat['mean']:.1f} ± {stat['std']:.1f}"


def pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f} %"


def table(results: dict[str, Any]) -> str:
    rows = [
        "| scenario | frame skip | random | expert | model, true spans | normalised | model, unit spans | normalised |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results.values():
        for skip, row in r["frame_skip"].items():
            rows.append(
                f"| {r['scenario']} | {skip} | {fmt(row['random'])} | {fmt(row['expert'])} | "
                f"{fmt(row['engine'])} | {pct(row.get('engine_normalised'))} | {fmt(row.get('unit'))} | "
                f"{pct(row.get('unit_normalised'))} |"
            )
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", action="append", help=f"repeatable (default: {', '.join(DEFAULT_SCENARIOS)})")
    parser.add_argument("--episodes", type=int, default=None, help="expert episodes recorded (default per scenario)")
    parser.add_argument("--eval-episodes", type=int, default=30)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--table", action="store_true")
    args = parser.parse_args()
    results: dict[str, Any] = json.loads(args.out.read_text()) if args.out.is_file() else {}
    if not args.table:
        for scenario in args.scenario or DEFAULT_SCENARIOS:
            episodes = args.episodes or EPISODES.get(scenario, 30)
            results[scenario] = run(scenario, episodes, args.eval_episodes, args.workers)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
