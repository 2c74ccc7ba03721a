"""Benchmark reinforcement fine-tuning: BC against BC + RL against RL from scratch, on unseen seeds.

Per scenario, through the ``golem`` command as a user runs it:

1. record ``--episodes`` expert episodes and clone them (``golem run train``, ``--updates``): **BC**;
2. ``golem rl finetune`` from the BC model for ``--frames`` environment frames: **BC + RL**
   (the checkpoint it keeps by play, and its last weights);
3. ``golem rl finetune`` for the same frames from an untrained network of the same
   architecture, without the KL anchor (``rl.kl_coef = 0``): **RL from scratch**;
4. ``golem run evaluate`` of each on ``--seeds`` unseen seeds (10,000…, which fine-tuning's
   own evaluations, from 20,000, never play), with the random policy and the expert.

Results go to ``bench/results/finetune.json`` and a table. Every run uses the scenario's spec
(frame skip, step limit) and the ``rl`` defaults unless ``--set`` says otherwise.

``--bc PATH`` starts from a given cloned checkpoint (e.g. the model ``golem zoo SCENARIO`` trained)
instead of step 1.

``--procgen-phase P --bc PATH`` fine-tunes on generated maps instead of a scenario (``golem rl finetune
--procgen-phase P``: every rollout episode on a map of its own) and judges every policy on ``--seeds``
unseen maps of the phase (``golem run evaluate --procgen-phase P --maps N``, seeds 10,000…; fine-tuning's
rollouts play maps from 100,000 and its evaluations from 20,000); the row is ``phase-P maps``, with the
share of maps whose exit each policy reached.

Usage: ``python bench/bench_finetune.py [--scenario basic | --procgen-phase P [--generator G]] [--episodes 20]
[--updates 200] [--frames 20000] [--seeds 30] [--bc PATH] [--set rl.KEY=VALUE ...] [--no-scratch] [--tag TAG]
[--work DIR] [--table] [--plot]``
(stored rows of other scenarios stay; ``--tag`` stores this run's as ``SCENARIO (TAG)`` beside the untagged row).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results" / "finetune.json"
PICTURE = Path(__file__).resolve().parents[1] / "docs" / "images" / "finetune.png"
GOLEM = Path(sys.executable).with_name("golem")


def golem(args: list[str], root: Path, timeout: float = 7200) -> str:
    """Run ``golem ARGS --set data.root=ROOT``; its stdout (a failure raises with its stderr)."""
    proc = subprocess.run(
        [str(GOLEM), *args, "--set", f"data.root={root}"], capture_output=True, text=True, timeout=timeout
    )
    if proc.returncode != 0:
        raise SystemExit(f"golem {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc.stdout


def untrained_like(source: Path, target: Path) -> Path:
    """An untrained network of ``source``'s architecture, with its data record (scenario, frame skip)."""
    import torch

    from golem.learning.checkpoints import RESERVED, read_metadata, save_checkpoint
    from golem.learning.modelspec import ModelSpec
    from golem.plugins import load_plugins

    registry = load_plugins().registry
    meta = read_metadata(source)
    spec = ModelSpec.from_metadata(meta["spec"], registry)
    torch.manual_seed(0)
    model = registry.get("models", spec.model).obj(spec)
    keep = {"data", "training", "scenario"}
    extra = {k: v for k, v in meta.items() if k in keep and k not in RESERVED}
    return save_checkpoint(target, model, spec.to_metadata(), extra)


def world(args: argparse.Namespace) -> list[str]:
    """The ``golem`` options that put fine-tuning and evaluation on generated maps (none for a scenario)."""
    if args.procgen_phase is None:
        return []
    return ["--procgen-phase", str(args.procgen_phase), "--generator", args.generator]


def judged(
    path: Path, root: Path, args: argparse.Namespace, baselines: bool = False, decisions: str | None = None
) -> dict[str, Any]:
    """``golem run evaluate --json`` of ``path`` on ``args.seeds`` unseen seeds (or unseen maps of the phase),
    deciding as the checkpoint says or as ``decisions`` (``threshold``, ``sample``)."""
    where = [*world(args), "--maps", str(args.seeds)] if world(args) else ["-n", str(args.seeds)]
    cmd = ["run", "evaluate", "--model", str(path), *where, "--json"]
    cmd += [] if baselines else ["--no-baselines"]
    return json.loads(golem(cmd + (["--decisions", decisions] if decisions else []), root))


OTHER = {"threshold": "sample", "sample": "threshold"}


def judge_model(
    rows: dict[str, Any],
    key: str,
    path: Path,
    root: Path,
    args: argparse.Namespace,
    board: dict[str, Any] | None = None,
) -> None:
    """``rows[key]``: the model as its checkpoint decides (``decisions`` names how; ``board``: already judged so);
    on generated maps also ``rows["KEY:MODE"]`` played the other way (a stochastic navigator gets stuck less)."""
    board = board or judged(path, root, args)
    rows[key] = {**board["policies"]["model"], "decisions": board["decisions"]}
    if args.procgen_phase is not None:
        other = OTHER[board["decisions"]]
        rows[f"{key}:{other}"] = {**judged(path, root, args, decisions=other)["policies"]["model"], "decisions": other}


def finetuned(source: Path, root: Path, frames: int, extra: list[str]) -> dict[str, Any]:
    """``golem rl finetune --json`` from ``source``; its result."""
    return json.loads(
        golem(["rl", "finetune", "--model", str(source), "--frames", str(frames), "--json", *extra], root)
    )


def maps_name(args: argparse.Namespace) -> str:
    """A row on generated maps is named ``phase-P maps`` (``… of G`` for another generator than the builtin)."""
    return f"phase-{args.procgen_phase} maps" + ("" if args.generator == "builtin" else f" of {args.generator}")


def run_scenario(scenario: str, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    started = time.perf_counter()
    folder = scenario.replace(" ", "-")  # a maps row's name has spaces
    root = tmp / folder
    if args.bc:
        bc = shutil.copy(args.bc, tmp / f"{folder}-bc.safetensors")
    else:
        golem(["run", "record", "--expert", scenario, "-n", str(args.episodes)], root)
        golem(["run", "train", "--updates", str(args.updates), "--no-tensorboard"], root)
        bc = shutil.copy(next((root / "models").glob("*/active.safetensors")), tmp / f"{folder}-bc.safetensors")
    bc_seconds = time.perf_counter() - started
    sets = [item for pair in (("--set", s) for s in args.set or []) for item in pair]
    rows: dict[str, Any] = {}
    board = judged(Path(bc), root, args, baselines=True)
    judge_model(rows, "bc", Path(bc), root, args, board)
    rows["random"] = board["policies"]["random"]
    if "expert" in board["policies"]:
        rows["expert"] = board["policies"]["expert"]
    runs: dict[str, Any] = {}
    arms = [("bc_rl", Path(bc), [])]
    if not args.no_scratch:
        scratch = untrained_like(Path(bc), tmp / f"{folder}-scratch.safetensors")
        arms.append(("scratch", scratch, ["--set", "rl.kl_coef=0"]))
    for name, source, more in arms:
        began = time.perf_counter()
        result = finetuned(source, root, args.frames, [*world(args), *sets, *more])
        kept = Path(result["archive"]) if result["archive"] else source
        last = Path(result["last"]) if result["last"] else kept
        judge_model(rows, f"{name}_kept", kept, root, args)
        judge_model(rows, f"{name}_last", last, root, args)
        runs[name] = {
            "frames": result["frames"],
            "updates": result["updates"],
            "seconds": round(time.perf_counter() - began, 1),
            "kept_update": (result["best"] or {}).get("update"),
            "evaluations": result["evaluations"],
            "last_kl_bc": result["history"][-1]["kl_bc"] if result["history"] else None,
            "frames_per_s_median": sorted(h["frames_per_s"] for h in result["history"])[len(result["history"]) // 2],
        }
    rand, expert = rows["random"]["return"]["mean"], (rows.get("expert") or {}).get("return", {}).get("mean")
    for row in rows.values():
        mean = row["return"]["mean"]
        row["normalised"] = (
            round((mean - rand) / (expert - rand), 4) if expert is not None and abs(expert - rand) > 1e-9 else None
        )
    return {
        "procgen": None
        if args.procgen_phase is None
        else {"phase": args.procgen_phase, "generator": args.generator, "maps": args.seeds},
        "bc_source": "given" if args.bc else "cloned here",
        "settings": args.set or [],
        "demonstrations": None if args.bc else args.episodes,
        "bc_updates": None if args.bc else args.updates,
        "bc_seconds": round(bc_seconds, 1),
        "frames": args.frames,
        "seeds": args.seeds,
        "policies": rows,
        "runs": runs,
        "seconds": round(time.perf_counter() - started, 1),
    }


def table(results: dict[str, Any]) -> str:
    lines = [
        "| scenario | frames | policy | return (mean ± std) | normalised (random 0, expert 1) |",
        "|---|---|---|---|---|",
    ]
    labels = {
        "bc": "BC",
        "bc_rl_kept": "BC + RL (kept by play)",
        "bc_rl_last": "BC + RL (last weights)",
        "scratch_kept": "RL from scratch (kept)",
        "scratch_last": "RL from scratch (last)",
        "random": "random",
        "expert": "expert",
    }
    runs = results["scenarios"]
    for scenario, r in runs.items():
        # A tagged run beside an untagged one of its scenario: its baselines are shown there (its cloned model
        # too, unless it started from another one).
        sibling = runs.get(scenario.split(" (")[0]) if " (" in scenario else None
        for key, label in labels.items():
            row = r["policies"].get(key)
            if row is None:
                continue
            if sibling is not None and key in ("bc", "random", "expert"):
                shown = sibling["policies"].get(key)
                if key != "bc" or (shown is not None and shown["return"] == row["return"]):
                    continue
            ret = row["return"]
            norm = "–" if row.get("normalised") is None else f"{row['normalised']:.2f}"
            frames = r["frames"] if key.startswith(("bc_rl", "scratch")) else "–"
            shown = f"{ret['mean']:.1f} ± {ret['std']:.1f}"
            if r.get("procgen"):  # generated maps: what the return is mostly made of, the exits
                shown = f"{ret['mean']:.2f} ± {ret['std']:.2f} (exits {100 * row['goal_rate']:.0f} %)"
            lines.append(f"| `{scenario}` | {frames} | {label} | {shown} | {norm} |")
    return "\n".join(lines)


def maps_table(results: dict[str, Any]) -> str:
    """One row per fine-tuning run on generated maps: exits of the source, the kept and the last weights.

    Exits are the share of the unseen maps whose exit the policy reached, ± one standard error (a binomial's),
    each played thresholded · sampled (``golem run evaluate --decisions``); in bold the way the checkpoint
    plays (cloned: thresholded; fine-tuned: as ``rl.decisions``).
    """

    def exits(row: dict[str, Any] | None) -> str:
        if row is None:
            return "–"
        rate, n = float(row["goal_rate"]), int(row["episodes"])
        return f"{100 * rate:.0f} % ± {100 * (rate * (1 - rate) / n) ** 0.5:.0f}"

    def both(policies: dict[str, Any], key: str) -> str:
        """Exits thresholded · sampled; the way the checkpoint plays in bold."""
        own = policies[key].get("decisions", "threshold")
        cells = []
        for mode in ("threshold", "sample"):
            cell = exits(policies[key] if mode == own else policies.get(f"{key}:{mode}"))
            cells.append(f"**{cell}**" if mode == own else cell)
        return " · ".join(cells)

    lines = [
        "| maps | run | frames | source (thresholded · sampled) | kept by play (thresholded · sampled) "
        "| kept: deaths, tics a map | kept at frames | last weights (thresholded · sampled) | frames/s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in results["scenarios"].items():
        if not r.get("procgen"):
            continue
        run, pol = r["runs"]["bc_rl"], r["policies"]
        at = next((e["frames"] for e in run["evaluations"] if e["update"] == run.get("kept_update")), 0)
        kept = pol["bc_rl_kept"]
        where, _, tag = name.partition(" (")
        lines.append(
            f"| {where}, {r['procgen']['maps']} unseen | {tag.rstrip(')') or 'defaults'} | {r['frames']:,} "
            f"| {both(pol, 'bc')} | {both(pol, 'bc_rl_kept')} | {100 * kept['death_rate']:.0f} %, "
            f"{kept['tics']['mean']:,.0f} | {f'{at:,}' if at else 'the source'} | {both(pol, 'bc_rl_last')} "
            f"| {run['frames_per_s_median']:.0f} |"
        )
    return "\n".join(lines)


#: The fine-tuning targets per scenario: (what is measured, the policies' key for it, the target, its source).
TARGETS: dict[str, tuple[str, str, float, str]] = {
    "take_cover": ("tics", "tics", 1500.0, "World Models 1,092"),
    "defend_the_center": ("kills", "kills", 25.0, "Sample Factory's APPO 24–25"),
    "health_gathering_supreme": ("tics", "tics", 1700.0, ""),
    "predict_position": ("return", "return", 0.5, "the expert 0.62"),
    "deathmatch": ("return", "return", 27.4, "the expert"),
    "phase-1 maps": ("exits %", "goal_rate", 80.0, "unseen maps"),
    "phase-2 maps": ("exits %", "goal_rate", 50.0, "unseen maps"),
    "phase-3 maps": ("exits %", "goal_rate", 40.0, "unseen maps"),
}


def measured(policy: dict[str, Any], key: str) -> float:
    """A policy's mean of ``key``; ``goal_rate`` (the share of episodes that reached the goal) in per cent."""
    return 100 * float(policy["goal_rate"]) if key == "goal_rate" else float(policy[key]["mean"])


def headline(results: dict[str, Any]) -> str:
    """One row per scenario: the cloned model and the best weights any stored run kept by play, against the target.

    Runs of a scenario differ in settings (the tag) and sometimes in their cloned source; each run's gain is
    over its own source, and the row shows the run whose kept weights scored best on the unseen seeds.
    """
    lines = [
        "| scenario | measure | cloned | best fine-tuned (kept by play) | gain "
        "| kept at (frames of the run) | runs | target |",
        "|---|---|---|---|---|---|---|---|",
    ]
    runs = results["scenarios"]
    for scenario in sorted({name.split(" (")[0] for name in runs}):
        label, key, target, reference = TARGETS.get(scenario, ("return", "return", float("nan"), ""))
        untagged_bc = runs.get(scenario, {}).get("policies", {}).get("bc")
        tried = [
            (measured(r["policies"]["bc_rl_kept"], key), measured(r["policies"].get("bc") or untagged_bc, key), r)
            for name, r in runs.items()
            if name.split(" (")[0] == scenario and "bc_rl_kept" in r["policies"]
        ]
        if not tried:
            continue
        kept, cloned, best = max(tried, key=lambda t: t[0])
        run = best.get("runs", {}).get("bc_rl", {})
        at = next((e["frames"] for e in run.get("evaluations", []) if e["update"] == run.get("kept_update")), 0)
        taken = f"{at:,} ({best['frames']:,})" if at else f"the cloned model ({best['frames']:,})"
        goal = f"≥ {target:g}" + (f" ({reference})" if reference else "") + (" — met" if kept >= target else "")
        lines.append(
            f"| `{scenario}` | {label} | {cloned:.4g} | **{kept:.4g}** | {kept - cloned:+.3g} | "
            f"{taken} | {len(tried)} | {goal} |"
        )
    return "\n".join(lines)


def plot(results: dict[str, Any], path: Path = PICTURE) -> Path:
    """Held-out return against environment frames of every fine-tuning run, one panel per scenario.

    The lines are the runs' own evaluations (20 held-out seeds each, from 20,000); a dot is the kept weights,
    at the frames they were taken, on the board's unseen seeds; dashed: the cloned model, the expert and the
    random policy on those seeds.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for key, row in results["scenarios"].items():
        groups.setdefault(key.split(" (")[0], []).append((key, row))
    fig, axes = plt.subplots(1, len(groups), figsize=(6 * len(groups), 5), squeeze=False)
    for ax, (scenario, rows) in zip(axes[0], sorted(groups.items()), strict=True):
        policies = rows[0][1]["policies"]
        for name, style in (("expert", "tab:green"), ("bc", "tab:blue"), ("random", "tab:grey")):
            if name in policies:
                ax.axhline(policies[name]["return"]["mean"], color=style, ls="--", lw=1, label=f"{name} (unseen seeds)")
        for key, row in rows:
            tag = key[len(scenario) :].strip(" ()").replace("rl.", "") or "defaults"
            for arm, label in (("bc_rl", "BC + RL"), ("scratch", "RL from scratch")):
                run = row["runs"].get(arm)
                if not run:
                    continue
                xs = [e["frames"] for e in run["evaluations"]]
                name = textwrap.fill(f"{label}, {tag}", 70)
                line = ax.plot(xs, [e["mean"] for e in run["evaluations"]], lw=1.2, label=name)[0]
                kept = row["policies"].get(f"{arm}_kept")
                at = next((e["frames"] for e in run["evaluations"] if e["update"] == run.get("kept_update")), 0)
                if kept is not None:  # the kept weights, where they were taken, on the board's unseen seeds
                    ax.plot([at], [kept["return"]["mean"]], "o", color=line.get_color())
        ax.set_title(scenario)
        ax.set_xlabel("environment frames")
        ax.set_ylabel("return, held-out seeds")
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.17))  # below: the curves stay clear
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--scenario", action="append", help="scenario (repeatable; default basic)")
    parser.add_argument(
        "--procgen-phase", type=int, choices=(1, 2, 3), help="fine-tune and judge on generated maps of this phase"
    )
    parser.add_argument("--generator", default="builtin", help="map generator with --procgen-phase (default builtin)")
    parser.add_argument("--episodes", type=int, default=20, help="expert episodes to clone")
    parser.add_argument("--updates", type=int, default=200, help="BC optimiser steps")
    parser.add_argument("--frames", type=int, default=20_000, help="environment frames of each fine-tuning")
    parser.add_argument(
        "--seeds", type=int, default=30, help="unseen evaluation episodes per policy (unseen maps with --procgen-phase)"
    )
    parser.add_argument("--set", action="append", help="rl.KEY=VALUE for both fine-tunings (repeatable)")
    parser.add_argument(
        "--bc", type=Path, help="start from this cloned checkpoint (e.g. a `golem zoo` model) instead of cloning here"
    )
    parser.add_argument("--no-scratch", action="store_true", help="skip the RL-from-scratch arm")
    parser.add_argument(
        "--tag", help="store the scenario's row as 'SCENARIO (TAG)' beside its untagged row instead of replacing it"
    )
    parser.add_argument(
        "--work",
        type=Path,
        help="keep the runs' data (TensorBoard logs, archives) in this folder (default: a temporary one)",
    )
    parser.add_argument("--table", action="store_true", help="print the table of the stored results")
    parser.add_argument("--plot", action="store_true", help="draw docs/images/finetune.png from the stored results")
    args = parser.parse_args()
    if args.plot:
        print(plot(json.loads(RESULTS.read_text())))
        return
    if args.procgen_phase is not None and (args.scenario or not args.bc):
        parser.error("--procgen-phase needs --bc (a model cloned on the phase's maps) and no --scenario")
    if args.bc and args.procgen_phase is None and len(args.scenario or []) != 1:
        parser.error("--bc needs exactly one --scenario (the checkpoint's)")
    if args.table:
        print(table(json.loads(RESULTS.read_text())))
        return
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    started = time.perf_counter()
    if args.work:
        args.work.mkdir(parents=True, exist_ok=True)
    with (
        contextlib.nullcontext(str(args.work))
        if args.work
        else tempfile.TemporaryDirectory(prefix="golem-bench-finetune-")
    ) as tmp:
        names = [maps_name(args)] if args.procgen_phase is not None else args.scenario or ["basic"]
        scenarios = {(f"{s} ({args.tag})" if args.tag else s): run_scenario(s, args, Path(tmp)) for s in names}
    if RESULTS.exists():  # beside the stored rows of other scenarios and tags (a row run again is replaced)
        scenarios = {**json.loads(RESULTS.read_text())["scenarios"], **scenarios}
    results = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "load_average": list(os.getloadavg()),
        "settings": args.set or [],
        "scenarios": scenarios,
        "seconds": round(time.perf_counter() - started, 1),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))


if __name__ == "__main__":
    main()
