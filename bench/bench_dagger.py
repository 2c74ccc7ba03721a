"""Does DAgger beat plain behavioural cloning at equal expert-labelled frames? Both measured on unseen seeds.

For a scenario with an expert: record ``--base`` expert episodes and train a
BC model on them (defaults). Then, from that model and store:

* **BC**: record ``--rounds × --per-round`` more expert episodes and fine-tune
  the base model on all of them for ``--rounds × --updates`` optimiser steps;
* **DAgger**: ``golem run dagger`` for ``--rounds`` rounds of ``--per-round``
  episodes (learner-executed, expert-labelled), fine-tuning ``--updates`` steps
  each round.

Both arms therefore get the same number of expert-labelled episodes and the
same optimiser steps from the same base model; they differ only in whose
states the extra episodes visit.

Each model plays ``--eval-episodes`` unseen seeds (10,000…) against the random
policy and the expert. Results go to ``bench/results/dagger.json`` keyed by
scenario (run one scenario at a time); ``--table`` prints the README table.

    python bench/bench_dagger.py --scenario defend_the_center --base 30 --rounds 3 --per-round 10
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
RESULTS = HERE / "results" / "dagger.json"


def frames(root: Path) -> dict[str, int]:
    out = json.loads(golem("--set", f"data.root={root}", "data", "list", "--json", cwd=root))
    counts: dict[str, int] = {}
    for row in out["episodes"]:
        counts[row["source"]] = counts.get(row["source"], 0) + int(row["length"])
    return counts


def evaluate(root: Path, scenario: str, episodes: int, workers: int) -> dict[str, Any]:
    path = root / "board.json"
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
        "--out",
        str(path),
        cwd=root,
    )
    board = json.loads(path.read_text())
    return {
        "return": {r: board["policies"][r]["return"] for r in board["policies"]},
        "normalised": board["share"]["normalised"],
    }


def run(
    scenario: str,
    base: int,
    rounds: int,
    per_round: int,
    updates: int,
    eval_episodes: int,
    workers: int,
    base_updates: int | None = None,
    dagger_args: tuple[str, ...] = (),
    tune_args: tuple[str, ...] = (),
) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix=f"golem-dagger-{scenario}-"))
    try:
        bc, dg = work / "bc", work / "dagger"
        t0 = time.perf_counter()
        golem(
            "run",
            "record",
            "--expert",
            scenario,
            "--episodes",
            str(base),
            "--workers",
            str(workers),
            "--set",
            f"data.root={bc}",
            cwd=work,
        )
        golem(
            "run",
            "train",
            *(["--updates", str(base_updates)] if base_updates else []),
            "--set",
            f"data.root={bc}",
            cwd=work,
        )
        shutil.copytree(bc, dg)
        base_minutes = (time.perf_counter() - t0) / 60
        t0 = time.perf_counter()
        golem(
            "run",
            "record",
            "--expert",
            scenario,
            "--episodes",
            str(rounds * per_round),
            "--workers",
            str(workers),
            "--set",
            f"data.root={bc}",
            cwd=work,
        )
        golem(
            "run",
            "train",
            "--resume",
            "--updates",
            str(rounds * updates),
            *tune_args,
            "--set",
            f"data.root={bc}",
            cwd=work,
        )
        bc_minutes = (time.perf_counter() - t0) / 60
        t0 = time.perf_counter()
        report = json.loads(
            golem(
                "run",
                "dagger",
                "--expert",
                scenario,
                "--rounds",
                str(rounds),
                "--episodes-per-round",
                str(per_round),
                "--updates",
                str(updates),
                "--workers",
                str(workers),
                "--eval-episodes",
                "0",
                *tune_args,
                *dagger_args,
                "--set",
                f"data.root={dg}",
                "--json",
                cwd=work,
            )
        )
        dagger_minutes = (time.perf_counter() - t0) / 60
        return {
            "scenario": scenario,
            "measured": datetime.now(UTC).isoformat(timespec="seconds"),
            "base_episodes": base,
            "rounds": rounds,
            "per_round": per_round,
            "updates_per_round": updates,
            "dagger_args": list(dagger_args),
            "tune_args": list(tune_args),
            "eval_episodes": eval_episodes,
            "frames": {"bc": frames(bc), "dagger": frames(dg)},
            "minutes": {"base": round(base_minutes, 1), "bc": round(bc_minutes, 1), "dagger": round(dagger_minutes, 1)},
            "dagger_rounds": report["rounds"],
            "bc": evaluate(bc, scenario, eval_episodes, workers),
            "dagger": evaluate(dg, scenario, eval_episodes, workers),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def fmt(stat: dict[str, float]) -> str:
    return f"{stat['mean']:.2f} ± {stat['std']:.2f}"


def parse_args(args: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Flag/value pairs as given to golem → ``(flags, --set settings)``."""
    flags: dict[str, str] = {}
    sets: dict[str, str] = {}
    for flag, value in zip(args[::2], args[1::2]):
        if flag == "--set":
            key, _, setting = value.partition("=")
            sets[key] = setting
        else:
            flags[flag] = value
    return flags, sets


def keep_best_note(sets: dict[str, str]) -> str:
    return "keep_best off" if sets.get("training.keep_best") == "false" else ""


def recipe(r: dict[str, Any]) -> str:
    """The DAgger arm's schedule, fine-tuning steps and recovery share, as the table shows them."""
    flags, sets = parse_args([*r.get("dagger_args", []), *r.get("tune_args", [])])
    beta = flags.get("--beta", "linear") + (f" {flags['--beta-param']}" if "--beta-param" in flags else "")
    out = (
        f"β {beta}, {r['rounds']} × {r['per_round']} episodes, {r['updates_per_round']} updates/round, "
        f"recovery {sets.get('training.recovery_ratio', '0.25')}"
    )
    note = keep_best_note(sets)
    return out + (f", {note}" if note else "")


def table(results: dict[str, Any]) -> str:
    rows = [
        "| scenario | arm | recipe | expert-labelled frames | model | random | expert | normalised |",
        "|---|---|---|---|---|---|---|---|",
    ]
    order = list(dict.fromkeys(r["scenario"] for r in results.values()))  # each scenario's runs together
    for r in sorted(results.values(), key=lambda r: order.index(r["scenario"])):
        bc_recipe = keep_best_note(parse_args(r.get("tune_args", []))[1]) or "—"
        for arm in ("bc", "dagger"):
            labelled = sum(r["frames"][arm].values())
            norm = r[arm]["normalised"]
            rows.append(
                f"| {r['scenario']} | {arm} | {recipe(r) if arm == 'dagger' else bc_recipe} | {labelled:,} | "
                f"{fmt(r[arm]['return']['model'])} | "
                f"{fmt(r[arm]['return']['random'])} | {fmt(r[arm]['return']['expert'])} | "
                f"{'—' if norm is None else f'{100 * norm:.0f} %'} |"
            )
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", default="defend_the_center")
    parser.add_argument("--base", type=int, default=30, help="expert episodes of the BC data (round 0)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--per-round", type=int, default=10)
    parser.add_argument(
        "--base-updates", type=int, default=None, help="optimiser steps of the base model (default: training defaults)"
    )
    parser.add_argument("--updates", type=int, default=300, help="optimiser steps per round (BC: rounds × this)")
    parser.add_argument("--eval-episodes", type=int, default=50)
    parser.add_argument("--beta", default=None, help="DAgger's β schedule (default: golem run dagger's)")
    parser.add_argument("--beta-param", type=float, default=None)
    parser.add_argument(
        "--dagger-set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a setting for the DAgger arm's rounds, e.g. training.recovery_ratio=0.5",
    )
    parser.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a setting for both arms' fine-tuning, e.g. training.keep_best=false",
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--key", help="where the run goes in the results (default: the scenario)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--table", action="store_true")
    args = parser.parse_args()
    results: dict[str, Any] = json.loads(args.out.read_text()) if args.out.is_file() else {}
    if not args.table:
        dagger_args = (
            tuple(a for s in args.dagger_set for a in ("--set", s))
            + (("--beta", args.beta) if args.beta else ())
            + (("--beta-param", str(args.beta_param)) if args.beta_param else ())
        )
        tune_args = tuple(a for s in args.sets for a in ("--set", s))
        results[args.key or args.scenario] = run(
            args.scenario,
            args.base,
            args.rounds,
            args.per_round,
            args.updates,
            args.eval_episodes,
            args.workers,
            args.base_updates,
            dagger_args,
            tune_args,
        )
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
