"""What each round of ``golem dream iterate`` adds: dream against real survival per round, per training seed.

For every ``--run DIR`` (a folder ``golem dream iterate`` finished) this reads
``rounds.json`` — per round: the episodes the kept controller added, M's
epochs, the new controller's real-engine check (``round_eval_episodes`` from
seed 70,000) and the dream's calibration (held actions and the controller,
dream ÷ engine) — and ``evaluation.json`` when it is of the kept controller
(``golem dream evaluate --run DIR``: 100 episodes from seed 100,000, unseen
by every round), and stores them in ``bench/results/dream_rounds.json``
under ``--key`` (default: the folder's name). ``--plot`` draws
``docs/images/dream-rounds.png`` from every stored run.

Usage: ``python bench/bench_dream_rounds.py --run DIR [--run DIR …] [--key NAME …] [--plot]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from golem.learning.checkpoints import read_metadata
from golem_worldmodel.paths import RunPaths
from golem_worldmodel.rounds import load_rounds

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "dream_rounds.json"
PICTURE = HERE.parent / "docs" / "images" / "dream-rounds.png"
#: World Models' take_cover result (Ha & Schmidhuber 2018, τ 1.15) and the level counted as solved.
PAPER, SOLVED = 1092.0, 750.0


def summarise(run: Path) -> dict[str, Any]:
    """One run's rounds and (when it is of the kept controller) its 100-episode evaluation."""
    paths = RunPaths(run)
    records = load_rounds(paths.rounds)
    if not records:
        raise SystemExit(f"{paths.rounds} records no round; run `golem dream iterate --run {run}` first")
    preset = json.loads((run / "preset.json").read_text())
    evaluation = None
    if paths.evaluation.is_file():
        e = json.loads(paths.evaluation.read_text())
        if e.get("controller_sha256") == read_metadata(paths.controller)["sha256"]:
            evaluation = {
                "episodes": e["episodes"],
                "seed": e["seed"],
                **{
                    k: {m: e[k][m] for m in ("mean", "std", "min", "max", "solved_share")}
                    for k in ("controller", "random")
                    if k in e
                },
            }
    rounds = []
    for r in records:
        rounds.append(
            {
                "round": r["round"],
                "kept": r["kept"],
                "confirmation": r.get("confirmation"),
                "honest": r["honest"],
                "real_mean": r["real_mean"],
                "real_se": r["real_se"],
                "real_episodes": r["real_episodes"],
                "dream_of_mean": r.get("dream_of_mean"),
                "generations": r.get("generations"),
                "calibration": {
                    k: {"dream": v["dream"][0], "real": v["real"][0], "ratio": v["ratio"]}
                    for k, v in r["calibration"].items()
                },
                "added": r.get("added", {}),
                "store_frames": r.get("store_frames"),
                "rnn_epochs": r.get("rnn_epochs"),
                "minutes": round(sum(r.get("seconds", {}).values()) / 60, 1),
            }
        )
    return {
        "measured": datetime.now(UTC).isoformat(timespec="seconds"),
        "seed": records[0].get("seed"),
        "preset": preset.get("name"),
        "recipe": {
            k: preset.get(k)
            for k in (
                "episodes",
                "probe_episodes",
                "rnn_members",
                "generations",
                "round_episodes",
                "explore_epsilon",
                "round_rnn_epochs",
                "round_generations",
                "round_eval_episodes",
                "honest_ratio",
            )
        },
        "rounds": rounds,
        "minutes_total": round(sum(r["minutes"] for r in rounds), 1),
        "evaluation": evaluation,
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
    }


def _kept_cell(r: dict[str, Any]) -> str:
    """``yes``/``no``, with the confirmation's paired gain over the kept controller when one was played."""
    cell = "yes" if r["kept"] else "no"
    conf = r.get("confirmation")
    if conf:
        cell += f" (gain {conf['gain']:+.0f} ± {conf['se']:.0f})"
    return cell


def table(results: dict[str, Any]) -> str:
    """Markdown: one row per run and round, then the kept controller's evaluation."""
    lines = [
        "| run | round | added: episodes / frames | M epochs | generations | dream | real ± s.e. (check) "
        "| dream ÷ real | still / left / right: dream ÷ real | honest | kept | minutes |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for key, row in results.items():
        for r in row["rounds"]:
            cal, added = r["calibration"], r.get("added", {})
            held = " / ".join(f"{cal[k]['ratio']:.1f}×" if k in cal else "—" for k in ("noop", "left", "right"))
            ctrl = cal.get("controller", {})
            nan = float("nan")
            cells = [
                f"`{key}`",
                r["round"],
                f"{added.get('episodes', 0)} / {added.get('frames', 0):,}",
                r["rnn_epochs"],
                r.get("generations") or 0,
                f"{ctrl.get('dream', nan):.0f}",
                f"{r['real_mean']:.0f} ± {r['real_se']:.0f} ({r['real_episodes']})",
                f"{ctrl.get('ratio', nan):.2f}×",
                held,
                "yes" if r["honest"] else "no",
                _kept_cell(r),
                r["minutes"],
            ]
            lines.append("| " + " | ".join(str(c) for c in cells) + " |")
        e = row.get("evaluation")
        if e:
            c = e["controller"]
            lines.append(
                f"| `{key}` | kept, {e['episodes']} unseen episodes | | | | | **{c['mean']:.1f} ± {c['std']:.1f}** "
                f"(≥ 750: {100 * c['solved_share']:.0f} %) | | | | | {row['minutes_total']} in all |"
            )
    return "\n".join(lines)


def plot(results: dict[str, Any], path: Path = PICTURE) -> Path:
    """Survival per round, one colour per run: the round's controller in the real engine (its check, ± s.e.;
    filled when kept) and in its own dream (dashed); the kept controller's 100-episode evaluation at the right."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    last = 0
    for key, row in results.items():
        rounds = row["rounds"]
        xs = [r["round"] for r in rounds]
        last = max(last, *xs)
        real = ax.errorbar(
            xs,
            [r["real_mean"] for r in rounds],
            yerr=[r["real_se"] for r in rounds],
            marker="o",
            mfc="none",
            capsize=3,
            label=f"{key}: real (check)",
        )
        colour = real[0].get_color()
        ax.plot(
            [r["round"] for r in rounds if r["kept"]], [r["real_mean"] for r in rounds if r["kept"]], "o", color=colour
        )
        dream = [r["calibration"].get("controller", {}).get("dream") for r in rounds]
        ax.plot(xs, dream, ls="--", color=colour, lw=1, label=f"{key}: its dream")
        if row.get("evaluation"):
            ax.plot([max(xs) + 0.35], [row["evaluation"]["controller"]["mean"]], "D", color=colour)
    ax.axhline(PAPER, color="tab:green", ls=":", lw=1, label="World Models (1,092)")
    ax.axhline(SOLVED, color="grey", ls=":", lw=1, label="solved (750)")
    ax.set_ylim(0, ax.get_ylim()[1] * 1.3)  # room for the legend above the lines
    ax.set_xticks(range(last + 1))
    ax.set_xlabel("round (0: the pipeline; ◆ the kept controller, 100 unseen episodes)")
    ax.set_ylabel("take_cover survival (tics)")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--run", type=Path, action="append", default=[], help="a finished `golem dream iterate` run (repeatable)"
    )
    ap.add_argument("--key", action="append", default=[], help="the result's name per --run (default: the folder's)")
    ap.add_argument("--plot", action="store_true", help=f"draw {PICTURE.relative_to(HERE.parent)}")
    ap.add_argument("--table", action="store_true", help="print the markdown table of every stored run")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()
    console = Console()
    results = json.loads(args.out.read_text()) if args.out.is_file() else {}
    for i, run in enumerate(args.run):
        key = args.key[i] if i < len(args.key) else run.name
        results[key] = summarise(run)
        e = results[key]["evaluation"]
        console.print(
            f"{key}: {len(results[key]['rounds'])} round(s), {results[key]['minutes_total']} min; kept controller "
            + (
                f"{e['controller']['mean']:.1f} ± {e['controller']['std']:.1f} tics over {e['episodes']} episodes"
                if e
                else "not evaluated (golem dream evaluate)"
            )
        )
    if args.run:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.out.with_suffix(".tmp")
        tmp.write_text(json.dumps(results, indent=2))
        tmp.replace(args.out)
    if args.plot:
        console.print(f"→ {plot(results)}")
    if args.table:
        print(table(results))


if __name__ == "__main__":
    main()
