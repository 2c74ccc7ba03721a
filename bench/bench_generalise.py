"""The generalisation scoreboard, visual part: do agents keep their score when a scenario only *looks* different?

For each scenario (``--scenario``, repeatable) and each training recipe (``--rows``):

* ``plain``: the scenario spec's expert episodes on the shipped map, default training (what ``golem zoo`` does);
* ``augment``: the same episodes, trained with image augmentations (``--augment``, default ``shift,colour``);
* ``vary``: the spec's episodes recorded with ``golem run record --vary`` (``--train-vary``, default
  ``textures,monsters,light``): every episode on a variant of its own, built from the episode's seed;
* ``both``: the varied episodes, trained with the augmentations;
* ``mix``: half the spec's episodes on the shipped map, half each on a variant of its own (as many
  episodes as the other rows), trained with the augmentations;
* ``vary-tuned``: the ``vary`` row's model with its press thresholds tuned by play on the shipped map
  (``golem run tune``, as ``training.tune_episodes`` does after training; its seeds are neither the
  evaluation's nor on a variant): thresholds calibrated on varied validation frames need not suit any one look;
* ``both-tuned``: the ``both`` row's model with its press thresholds tuned by play on the shipped map, as
  ``vary-tuned`` does for ``vary``;
* ``vary3``: ``vary`` with three times the spec's episodes (default training, so three times the updates
  where the spec sets no fixed budget): whether more looks and more data close the gap.

Every model plays the shipped map and held-out variants — variants built from seeds no recording used
(900,000 on), single modifications and combinations of two and three (:data:`EVAL_VARIANTS`) — on the same
unseen episode seeds (20,000 on); the random policy and the scenario's expert play each map once, and score
it: normalised = (model − random) / (expert − random) per map, *retained* = normalised on the variant ÷ on
the shipped map. Results go to ``bench/results/generalise.json`` (merged per scenario and row, so the board
fills one scenario at a time); ``--table`` prints the table the docs show, ``--plot`` draws
``docs/images/generalise.png``. The work folder (``--dir``, default ``./golem-generalise``) keeps stores,
models and variants, so an interrupted run resumes where it stopped.

    python bench/bench_generalise.py --scenario defend_the_center --rows plain,vary
    python bench/bench_generalise.py --table
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path
from typing import Any

from console import golem, json_stage  # bench/ is on the path when a benchmark runs as a script

from golem.scenarios import scenario_spec

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "generalise.json"
PICTURE = HERE.parent / "docs" / "images" / "generalise.png"

#: Held-out looks every model is scored on: (name, modifications). The first five change one thing;
#: ``things`` stands for the scenario's actors (:data:`THINGS`).
EVAL_VARIANTS: list[tuple[str, list[str]]] = [
    ("textures", ["textures"]),
    ("things", ["things"]),
    ("light", ["light"]),
    ("view_height", ["view_height"]),
    ("obstacles", ["obstacles"]),
    ("textures+things", ["textures", "things"]),
    ("textures+light", ["textures", "light"]),
    ("things+light", ["things", "light"]),
    ("textures+things+light", ["textures", "things", "light"]),
]
#: The knob that changes what a scenario's actors look like: its monsters, or its pickups where it has none.
THINGS = {"health_gathering": "items", "health_gathering_supreme": "items"}


def eval_variants(scenario: str) -> list[tuple[str, list[str]]]:
    """:data:`EVAL_VARIANTS` with ``things`` replaced by the scenario's knob (``monsters`` or ``items``)."""
    knob = THINGS.get(scenario, "monsters")
    return [
        (name.replace("things", knob), [knob if m == "things" else m for m in mods]) for name, mods in EVAL_VARIANTS
    ]


#: First seed of the held-out variants (recordings use the episode seeds 0, 1, …).
EVAL_VARIANT_SEED = 900_000
#: First seed of the evaluation episodes (training seeds start at 0).
EVAL_SEED = 20_000
ROWS = ("plain", "augment", "vary", "vary-tuned", "both", "both-tuned", "mix", "vary3")
#: Rows that take another row's model and tune its thresholds by play: the row they take it from.
TUNED = {"vary-tuned": "vary", "both-tuned": "both"}
#: Episodes per candidate and confirmation episodes of a ``TUNED`` row's search (``golem run tune``).
TUNE_EPISODES = 20
#: Rows that record more than the spec's episodes: the multiple.
SCALE = {"vary3": 3}


def _load() -> dict[str, Any]:
    return json.loads(RESULTS.read_text()) if RESULTS.exists() else {"visual": {}}


def _save(results: dict[str, Any]) -> None:
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    tmp = RESULTS.with_suffix(".tmp")
    tmp.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, RESULTS)


def variant_config(work: Path, scenario: str, mods: list[str], seed: int) -> str:
    """Build (once) the variant of ``scenario`` with ``mods`` from ``seed``; its ``.cfg`` path."""
    from golem.plugins import load_plugins
    from golem.runtime.generated import WorldPlan, build_world
    from golem.settings import GolemSettings

    plan = WorldPlan(
        generator="vary",
        config={"scenario": scenario, "modifications": mods},
        folder=str(work / "variants" / "+".join(mods)),
        scenario=scenario,
    )
    host = load_plugins()
    return build_world(GolemSettings(), host.registry, plan, seed).scenario


def record_store(
    work: Path, scenario: str, varied: list[str] | None, workers: int, mixed: bool = False, scale: int = 1
) -> Path:
    """The row's demonstrations: the spec's expert episodes (× ``scale``), plain or each on a variant of its
    own; ``mixed``: the first half plain, the rest varied (recording continues after the stored seeds)."""
    store = work / ("store-mix" if mixed else "store-vary" if varied else "store-plain")
    if scale != 1:
        store = store.with_name(f"{store.name}{scale}")
    done = work / f"{store.name}.recorded.json"
    if done.exists() or (store.is_symlink() and store.exists()):
        return store
    started = time.perf_counter()
    args = ["run", "record", "--expert", scenario, "--store", str(store), "--workers", str(workers)]
    args += ["--set", f"data.root={work / 'data'}"]
    if mixed:
        total = scenario_spec(scenario).episodes
        golem(*args, "--episodes", str(total // 2))
        args += ["--episodes", str(total - total // 2)]
    if varied:
        args += ["--vary", ",".join(varied)]
    if scale != 1:
        args += ["--episodes", str(scale * scenario_spec(scenario).episodes)]
    golem(*args)
    done.write_text(json.dumps({"seconds": round(time.perf_counter() - started, 1), "vary": varied, "mixed": mixed}))
    return store


def train_model(work: Path, row: str, store: Path, augment: list[str]) -> dict[str, Any]:
    """Train the row's model with default settings (plus ``augment``); its checkpoint and training figures."""
    folder = work / row
    folder.mkdir(parents=True, exist_ok=True)

    def run() -> dict[str, Any]:
        started = time.perf_counter()
        args = ["--set", f"data.root={folder / 'data'}", "run", "train", "--store", str(store), "--json"]
        for name in augment:
            args += ["--plugin", name]
        out = json.loads(golem(*args))
        return {
            "checkpoint": out.get("archive") or out.get("checkpoint") or out.get("model"),
            "active": out.get("active"),
            "updates": out.get("updates"),
            "validation_loss": (out.get("validation") or {}).get("loss"),
            "seconds": round(time.perf_counter() - started, 1),
            "augment": augment,
        }

    return json_stage(folder / "trained.json", run)


def tune_model(work: Path, row: str, trained: dict[str, Any], scenario: str, workers: int) -> dict[str, Any]:
    """``golem run tune`` of the model ``trained`` on the shipped ``scenario``; the tuned archive where the
    search was confirmed (else the model as it was) and the search's figures."""
    folder = work / row

    def run() -> dict[str, Any]:
        started = time.perf_counter()
        source = trained["checkpoint"] or trained["active"]
        args = ["--set", f"data.root={folder / 'data'}", "run", "tune", "--model", source, "--scenario", scenario]
        args += ["--episodes", str(TUNE_EPISODES), "--confirm", str(TUNE_EPISODES), "--workers", str(workers)]
        out = json.loads(golem(*args, "--json"))
        return {
            "checkpoint": out.get("archive") or source,
            "active": out.get("archive") or source,
            "tuned_from": source,
            "accepted": out.get("archive") is not None,
            "plays": out.get("plays"),
            "seconds": round(time.perf_counter() - started, 1),
        }

    folder.mkdir(parents=True, exist_ok=True)
    return json_stage(folder / "trained.json", run)


def evaluate(model: str, scenario_cfg: str, episodes: int, workers: int, baselines: bool, out: Path) -> dict[str, Any]:
    """``golem run evaluate`` of ``model`` on ``scenario_cfg`` (seeds from :data:`EVAL_SEED`); its summary."""

    def run() -> dict[str, Any]:
        args = ["run", "evaluate", "--model", model, "--scenario", scenario_cfg, "--episodes", str(episodes)]
        args += ["--seed", str(EVAL_SEED), "--workers", str(workers), "--json"]
        if not baselines:
            args.append("--no-baselines")
        return json.loads(golem(*args))

    return json_stage(out, run)


def _mean(summary: dict[str, Any], role: str) -> float | None:
    got = summary["policies"].get(role)
    return None if got is None else float(got["return"]["mean"])


def _se(summary: dict[str, Any], role: str) -> float | None:
    got = summary["policies"].get(role)
    if got is None or got["episodes"] < 2:
        return None
    return float(got["return"]["std"]) / math.sqrt(got["episodes"])


def adopt_zoo_row(work: Path, zoo: Path) -> None:
    """Take a finished ``golem zoo`` row's store and model (its work folder ``zoo``) as the ``plain`` row's."""
    state = json.loads((zoo / "zoo-state.json").read_text())
    model = zoo / "models" / "basic" / "active.safetensors"
    if not model.is_file():
        raise SystemExit(f"{zoo}: no trained model (state: {sorted(state)})")
    store = work / "store-plain"
    if not store.exists():
        store.symlink_to((zoo / "stores" / "demos").resolve(), target_is_directory=True)
    (work / "plain").mkdir(parents=True, exist_ok=True)
    trained = work / "plain" / "trained.json"
    if not trained.exists():
        trained.write_text(json.dumps({"checkpoint": str(model), "active": str(model), "adopted_from": str(zoo)}))


def run_scenario(
    scenario: str,
    rows: list[str],
    work: Path,
    episodes: int,
    workers: int,
    augment: list[str],
    varied: list[str],
    plain_from: Path | None = None,
) -> dict[str, Any]:
    """Every row of ``scenario``: recorded, trained and scored on the shipped map and each held-out variant."""
    work = work / scenario
    work.mkdir(parents=True, exist_ok=True)
    if plain_from is not None:
        adopt_zoo_row(work, plain_from)
    maps = {"original": scenario}
    for k, (name, mods) in enumerate(eval_variants(scenario)):
        maps[name] = variant_config(work, scenario, mods, EVAL_VARIANT_SEED + k)
    recipes = {
        "plain": (None, []),
        "augment": (None, augment),
        "vary": (varied, []),
        "vary-tuned": (varied, []),
        "both": (varied, augment),
        "both-tuned": (varied, augment),
        "mix": (varied, augment),
        "vary3": (varied, []),
    }
    board: dict[str, Any] = {"maps": {k: str(v) for k, v in maps.items()}, "rows": {}, "baselines": {}}
    stored = _load().get("visual", {}).get(scenario, {})
    if stored.get("maps") == board["maps"] and set(stored.get("baselines", {})) == set(maps):
        board["baselines"] = stored["baselines"]  # the random policy and the expert already played these maps
    baseline_model: str | None = None
    for row in rows:
        vary_mods, aug = recipes[row]
        store = record_store(work, scenario, vary_mods, workers, mixed=row == "mix", scale=SCALE.get(row, 1))
        if row in TUNED:
            base = train_model(work, TUNED[row], store, aug)  # the row it tunes (trained here if not yet)
            trained = tune_model(work, row, base, scenario, workers)
        else:
            trained = train_model(work, row, store, aug)
        model = trained["active"] or trained["checkpoint"]
        if baseline_model is None:
            baseline_model = model
        scores: dict[str, Any] = {}
        for name, cfg in maps.items():
            first = row == rows[0] and name not in board["baselines"]
            summary = evaluate(model, cfg, episodes, workers, first, work / row / f"eval-{name}.json")
            if first:
                board["baselines"][name] = {
                    "random": _mean(summary, "random"),
                    "expert": _mean(summary, "expert"),
                    "random_se": _se(summary, "random"),
                    "expert_se": _se(summary, "expert"),
                }
            scores[name] = {"model": _mean(summary, "model"), "model_se": _se(summary, "model")}
        board["rows"][row] = {
            "recipe": {
                "vary": vary_mods,
                "augment": aug,
                "mixed": row == "mix",
                "episodes_scale": SCALE.get(row, 1),
                "tuned_by_play": row in TUNED,
            },
            "trained": trained,
            "scores": scores,
        }
    return summarise(board)


def summarise(board: dict[str, Any]) -> dict[str, Any]:
    """Normalised scores per map and retained shares (variant ÷ shipped map) for every row."""
    for row in board["rows"].values():
        for name, s in row["scores"].items():
            base = board["baselines"].get(name, {})
            rand, expert = base.get("random"), base.get("expert")
            span = None if rand is None or expert is None else expert - rand
            s["normalised"] = None if not span or s["model"] is None else (s["model"] - rand) / span
        original = row["scores"]["original"]["normalised"]
        retained = {}
        for name, s in row["scores"].items():
            if name == "original":
                continue
            retained[name] = None if not original or s["normalised"] is None else s["normalised"] / original
        row["retained"] = retained
        singles = [v for k, v in retained.items() if "+" not in k and v is not None]
        combos = [v for k, v in retained.items() if "+" in k and v is not None]
        row["retained_single"] = sum(singles) / len(singles) if singles else None
        row["retained_combined"] = sum(combos) / len(combos) if combos else None
    return board


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f} %"


def table(results: dict[str, Any]) -> str:
    """Markdown: per scenario and row, normalised score on the shipped map and retained shares."""
    head = ["scenario", "recipe", "shipped map", "retained, single changes", "retained, combined", "worst variant"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for scenario, board in sorted(results.get("visual", {}).items()):
        for row in ROWS:
            r = board["rows"].get(row)
            if r is None:
                continue
            worst = min(
                ((v, k) for k, v in r["retained"].items() if v is not None), default=(None, None), key=lambda t: t[0]
            )
            cells = [
                f"`{scenario}`",
                row,
                _pct(r["scores"]["original"]["normalised"]),
                _pct(r["retained_single"]),
                _pct(r["retained_combined"]),
                "—" if worst[1] is None else f"{worst[1]} ({_pct(worst[0])})",
            ]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(results: dict[str, Any], path: Path = PICTURE) -> Path:
    """Retained share per held-out look, one panel per scenario, one bar per recipe."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    boards = sorted(results.get("visual", {}).items())
    fig, axes = plt.subplots(len(boards), 1, figsize=(10, 3.6 * len(boards)), squeeze=False)
    for ax, (scenario, board) in zip(axes[:, 0], boards, strict=True):
        names = [n for n, _ in eval_variants(scenario)]
        rows = [r for r in ROWS if r in board["rows"]]
        width = 0.8 / max(1, len(rows))
        for k, row in enumerate(rows):
            values = [board["rows"][row]["retained"].get(n) for n in names]
            xs = [i + (k - (len(rows) - 1) / 2) * width for i in range(len(names))]
            clipped = [0.0 if v is None else max(-0.5, min(1.5, v)) for v in values]
            ax.bar(xs, clipped, width, label=row, color=f"C{ROWS.index(row)}")  # one colour a recipe everywhere
        ax.axhline(1.0, color="grey", lw=0.8, ls="--")
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, rotation=20, ha="right", fontsize=8)
        ax.set_ylabel("retained")
        ax.set_title(scenario)
        ax.legend(fontsize=8, ncol=len(rows), loc="upper center", bbox_to_anchor=(0.5, -0.32), frameon=False)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", action="append", default=None, help="scenario (repeatable)")
    parser.add_argument("--rows", default=",".join(ROWS), help=f"recipes to run, from {', '.join(ROWS)}")
    parser.add_argument("--eval-episodes", type=int, default=20, help="episodes per policy and map")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--augment", default="shift,colour", help="augmentations of the augment/both rows")
    parser.add_argument(
        "--train-vary", default="textures,things,light", help="modifications of the vary/both rows (things: see THINGS)"
    )
    parser.add_argument("--dir", type=Path, default=Path("golem-generalise"), help="work folder (resumable)")
    parser.add_argument(
        "--plain-from",
        type=Path,
        default=None,
        help="a finished `golem zoo SCENARIO --dir DIR` folder whose store and model are the plain row (one scenario)",
    )
    parser.add_argument("--table", action="store_true", help="print the table from the stored results")
    parser.add_argument("--plot", action="store_true", help="draw docs/images/generalise.png from the results")
    args = parser.parse_args()
    results = _load()
    if args.table:
        print(table(results))
        return
    if args.plot:
        print(plot(results))
        return
    rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    unknown = sorted(set(rows) - set(ROWS))
    if unknown:
        raise SystemExit(f"unknown rows {unknown}; known: {', '.join(ROWS)}")
    augment = [a for a in args.augment.split(",") if a]
    for scenario in args.scenario or ["defend_the_center", "health_gathering", "take_cover"]:
        knob = THINGS.get(scenario, "monsters")
        varied = [knob if m == "things" else m for m in args.train_vary.split(",") if m]
        started = time.perf_counter()
        board = run_scenario(
            scenario, rows, args.dir.resolve(), args.eval_episodes, args.workers, augment, varied, args.plain_from
        )
        board["episodes"] = scenario_spec(scenario).episodes
        board["eval_episodes"] = args.eval_episodes
        board["seconds"] = round(time.perf_counter() - started, 1)
        board["measured"] = time.strftime("%Y-%m-%d")
        results = _load()
        old = results.setdefault("visual", {}).get(scenario, {"rows": {}})
        old_rows = old.get("rows", {})
        old_rows.update(board["rows"])
        board["rows"] = old_rows
        results["visual"][scenario] = summarise(board)
        _save(results)
        print(table(results))


if __name__ == "__main__":
    main()
