"""The scoreboard: record → train → evaluate for every scenario with an expert, as a new user runs it.

Each row is one ``golem zoo SCENARIO`` (``golem_cli.zoo``): for each scenario (``--scenario``,
repeatable; default all with an expert) and each model (``--model``, default ``cfc``): record
``--episodes`` expert episodes (default: the scenario spec's) into a fresh store, train with default
settings plus any ``--set`` given here, then evaluate the trained agent against a random policy and the
expert on the same unseen seeds. Results are merged into ``bench/results/zoo.json`` keyed by scenario and
model, so the board can be filled one scenario at a time; ``--table`` prints the README table from it.
``--tune`` tunes the press thresholds by play (seeds 5,000…) between training and evaluation; its rows
are keyed ``<model>+tuned`` (where the confirmation seeds refute the search, the row plays the trained
thresholds). ``--dir PATH`` keeps each row's work folder under PATH, so an interrupted board resumes
where it stopped; without it every row works in a temporary folder.

    python bench/bench_zoo.py --scenario defend_the_center --episodes 60
    python bench/bench_zoo.py --table
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from console import golem  # bench/ is on the path when a benchmark runs as a script

from golem.scenarios import scenario_spec
from golem_cli.zoo import EVAL_EPISODES, ROW_COLUMNS, board_name, row_cells

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "zoo.json"

#: Scenarios on the board by default: the five the issue names, then the other experts' scenarios.
SCENARIOS = [
    "basic",
    "defend_the_center",
    "health_gathering",
    "take_cover",
    "my_way_home",
    "defend_the_line",
    "health_gathering_supreme",
    "predict_position",
    "deadly_corridor",
    "deathmatch",
]


def run_one(
    scenario: str,
    model: str,
    episodes: int | None,
    eval_episodes: int | None,
    workers: int,
    extra: list[str],
    sensors: Sequence[str] = (),
    tune: bool = False,
    keep: Path | None = None,
) -> dict[str, Any]:
    """One row: ``golem zoo`` in a work folder (under ``keep``, kept for a resume; else temporary, removed)."""
    work = Path(tempfile.mkdtemp(prefix=f"golem-zoo-{scenario}-")) if keep is None else keep
    folder = work / f"{scenario}-{board_name(model, sensors, tune)}" if keep is not None else work / "row"
    args = [
        "zoo",
        scenario,
        "--model",
        model,
        "--workers",
        str(workers),
        "--dir",
        str(folder),
        "--json",
        str(work / "row.json"),
        *(a for s in extra for a in ("--set", s)),
        *(a for name in sensors for a in ("--plugin", name)),
        *(["--tune"] if tune else []),
        *(["--episodes", str(episodes)] if episodes else []),
        *(["--eval-episodes", str(eval_episodes)] if eval_episodes else []),
    ]
    try:
        golem(*args, cwd=work)
        return json.loads((work / "row.json").read_text())
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)


def table(results: dict[str, Any]) -> str:
    """The README's scoreboard (markdown) of the stored rows, sorted by key."""
    rows = ["| " + " | ".join(ROW_COLUMNS) + " |", "|" + "---|" * len(ROW_COLUMNS)]
    rows += ["| " + " | ".join(row_cells(results[key])) + " |" for key in sorted(results)]
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", action="append", help="scenario with an expert (repeatable; default: all)")
    parser.add_argument("--model", action="append", help="model component (repeatable; default: cfc)")
    parser.add_argument("--episodes", type=int, help="expert episodes to record (default: the scenario spec's)")
    parser.add_argument(
        "--eval-episodes",
        type=int,
        help="evaluation episodes per policy (default: 30; "
        + ", ".join(f"{n} on {s}" for s, n in EVAL_EPISODES.items())
        + ")",
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--sensor",
        dest="sensors",
        action="append",
        default=[],
        help="extra sensor plugin beside the visual one (repeatable: depth, thermal, audio)",
    )
    parser.add_argument("--set", dest="sets", action="append", default=[], help="extra training setting KEY=VALUE")
    parser.add_argument(
        "--tune",
        action="store_true",
        help="tune the press thresholds by play (`golem run tune`) between training and evaluation",
    )
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--dir", type=Path, help="keep each row's work folder here, so a re-run resumes it")
    parser.add_argument("--table", action="store_true", help="print the README table of the stored results and stop")
    args = parser.parse_args()
    results: dict[str, Any] = json.loads(args.out.read_text()) if args.out.is_file() else {}
    if args.table:
        print(table(results))
        return 0
    started = time.perf_counter()
    for scenario in args.scenario or SCENARIOS:
        for model in args.model or ["cfc"]:
            episodes = args.episodes or scenario_spec(scenario).episodes
            print(f"{scenario} / {model}: {episodes} expert episodes …", flush=True)
            result = run_one(
                scenario,
                model,
                args.episodes,
                args.eval_episodes,
                args.workers,
                args.sets,
                args.sensors,
                args.tune,
                args.dir,
            )
            results[f"{scenario}/{board_name(model, args.sensors, args.tune)}"] = result
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(results, indent=2) + "\n")
            print(f"  normalised {result['normalised']}, {result['measure']}, {result['minutes']}", flush=True)
    print(f"total {(time.perf_counter() - started) / 60:.1f} min")
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
