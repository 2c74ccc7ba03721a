"""``golem demo``: the main job, end to end, on a fresh clone with no arguments.

Record expert demonstrations on ``basic``, train the ``cfc`` liquid network on
them, audit it on held-out episodes, and evaluate it against a random policy
and the expert on unseen seeds. Everything goes into the demo's own folder.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.panel import Panel

from golem.data.store import TrajectoryStore
from golem.diagnostics.audit import AuditPlan, audit
from golem.diagnostics.evaluation import EvalPlan, evaluate
from golem.learning.checkpoints import read_metadata
from golem.learning.training import TrainPlan, train
from golem.runtime.agent import model_threshold
from golem.runtime.generated import spec_variation
from golem.workflows.recording import RecordPlan, record, resolve_expert
from golem_cli.commands.audit import print_report as print_audit
from golem_cli.commands.evaluate import scoreboard_table
from golem_cli.options import WorkersOpt
from golem_cli.progress import TrainingView
from golem_cli.state import state

#: Settings the demo uses unless the user's own (file, env, --set) say otherwise.
#: basic episodes last ~11 tics, so short BPTT windows; a few epochs train in about a minute.
DEMO_SETTINGS: dict[str, Any] = {
    "brain.profile": "basic",
    "brain.model": "cfc",
    "brain.sensors": ["visual"],
    "training.sequence_length": 5,
    "training.batch_size": 16,
    "training.epochs": 6,
    "training.loss": "focal",
}


def demo_command(
    ctx: typer.Context,
    out: Annotated[
        Path, typer.Option("--out", help="Folder for the demo's store, models and reports (its store is recreated).")
    ] = Path("golem-data/demo"),
    episodes: Annotated[int, typer.Option("--episodes", "-n", min=4, help="Expert episodes to record.")] = 240,
    eval_episodes: Annotated[int, typer.Option("--eval-episodes", min=1, help="Evaluation episodes per policy.")] = 20,
    workers: WorkersOpt = 2,
    expert: Annotated[str, typer.Option("--expert", help="Scripted expert to learn from.")] = "basic",
) -> None:
    """Record → train → audit → evaluate: prints the scoreboard and where the files went."""
    st = state(ctx)
    resolved = st.resolve(flags={"data.root": str(out), "data.store": str(out / "store")})
    given = set(resolved.sources)
    defaults = {k: v for k, v in DEMO_SETTINGS.items() if k not in given}
    settings = st.resolve(flags={"data.root": str(out), "data.store": str(out / "store"), **defaults}).settings
    registry = st.host.registry
    _, scenario = resolve_expert(settings, registry, expert, scenario_given=False)
    settings.game.scenario = scenario
    store_path = settings.store_path()
    if store_path.exists():
        shutil.rmtree(store_path)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    timings: dict[str, float] = {}

    def stage(name: str, since: float) -> float:
        now = time.perf_counter()
        timings[name] = round(now - since, 1)
        return now

    t = time.perf_counter()
    worlds = spec_variation(scenario, registry)  # the scenario spec's randomised recording, if it asks for one
    where = scenario if worlds is None else worlds.label()
    st.out.rule(f"1/4 record {episodes} episodes of the {expert!r} expert on {where}")
    plan = RecordPlan(
        demonstrator="expert", expert=expert, episodes=episodes, workers=workers, tags=["demo"], worlds=worlds
    )
    with TrajectoryStore.create(store_path) as store, st.err.status("recording…"):
        ids = record(settings, registry, plan, store, scenario)
        steps = sum(i.length for i in store.episodes())
    st.out.print(f"{len(ids)} episodes, {steps} frames → {store_path}")
    t = stage("record", t)

    cfg = settings.training
    budget = (
        f"{cfg.updates} updates"
        if cfg.updates
        else f"{cfg.epochs} epochs, more if needed for {cfg.min_updates} updates"
    )
    st.out.rule(f"2/4 train {settings.brain.model} ({cfg.loss} loss, {budget})")
    with TrainingView(st.err, cfg.epochs) as view:
        result = train(settings, registry, TrainPlan(store=store_path), on_batch=view.on_batch, on_epoch=view.on_epoch)
    final = result.validation.to_dict() if result.validation else {}
    st.out.print(
        f"trained {len(result.history)} epochs ({result.updates} updates); validation exact match "
        f"{final.get('exact_match', float('nan')):.3f} → {result.active}"
    )
    t = stage("train", t)

    st.out.rule("3/4 audit on held-out episodes (contiguous streams, carried state)")
    chart = out / "reports" / "audit.png" if "audit" in registry.names("charts") else None  # golem-explain
    report = audit(settings, registry, AuditPlan(model=result.active, store=store_path, chart=chart))
    print_audit(st, report)
    t = stage("audit", t)

    st.out.rule(f"4/4 evaluate on {eval_episodes} unseen seeds: model vs random vs expert")
    board = evaluate(
        settings,
        registry,
        EvalPlan(
            model_path=result.active,
            scenario=scenario,
            episodes=eval_episodes,
            workers=workers,
            threshold=model_threshold(read_metadata(result.active), settings.brain.activation),
            expert=expert,
        ),
    )
    results_path = board.write(out / "reports" / "scoreboard.json")
    st.out.print(scoreboard_table(board))
    share = board.share()
    stage("evaluate", t)

    total = time.perf_counter() - started
    (out / "reports" / "demo.json").write_text(
        json.dumps(
            {"timings_s": timings, "total_s": round(total, 1), "share": share, "summary": board.summary()}, indent=2
        )
        + "\n"
    )
    raw = f"{share['raw']:.0%}" if share["raw"] is not None else "n/a"
    normalised = f"{share['normalised']:.0%}" if share["normalised"] is not None else "n/a"
    st.out.print(
        Panel.fit(
            f"the trained agent scores {raw} of the expert's mean return "
            f"({normalised} of the way from random to expert)\n"
            f"store      {store_path}\n"
            f"model      {result.active}\n"
            + (f"audit      {report.chart}\n" if report.chart else "")
            + f"scoreboard {results_path}\n"
            f"took {total:.0f} s (" + ", ".join(f"{k} {v:.0f} s" for k, v in timings.items()) + ")",
            title="golem demo",
        )
    )
    st.out.print("next, with the demo's files:", highlight=False)
    for line in next_commands(result.active, store_path, report.episodes[0] if report.episodes else 0):
        st.out.print(f"  {line}", highlight=False, soft_wrap=True)


def _shown(path: Path) -> str:
    """``path`` relative to the current folder where it lies inside it, else absolute."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path.resolve())


def golem_program() -> str:
    """How to call this very ``golem`` from the current folder: ``golem`` where ``PATH`` finds it, else its path
    (``make demo`` runs ``.venv/bin/golem`` and puts nothing on ``PATH``)."""
    me = Path(sys.argv[0])
    if me.name != "golem":  # python -m golem_cli
        return f"{shlex.quote(sys.executable)} -m golem_cli"
    found = shutil.which("golem")
    if found is not None and Path(found).resolve() == me.resolve():
        return "golem"
    return shlex.quote(_shown(me))


def next_commands(model: Path, store: Path, episode: int) -> list[str]:
    """Commands a person can run next on the demo's model and store (program and paths as they work from here)."""
    g, m, s = golem_program(), shlex.quote(_shown(model)), shlex.quote(_shown(store))
    return [
        f"{g} run play --model {m} --video play.gif",
        f"{g} run evaluate --model {m} --episodes 100 --workers 2",
        f"{g} run examine --model {m} --store {s} --episode {episode} --step 3",
        f"{g} run inspect --store {s}",
    ]
