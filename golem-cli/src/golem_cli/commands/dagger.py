"""``golem run dagger``: automatic DAgger — the learner plays, the expert labels, the model is fine-tuned."""

from __future__ import annotations

import json
from typing import Annotated, Optional

import typer
from rich.table import Table

from golem.runtime.generated import WorldPlan
from golem.workflows.dagger import SCHEDULES, DaggerPlan, DaggerReport, RoundReport, dagger, settings_from_model
from golem_cli.options import (
    ExpertScenarioOpt,
    GeneratorOpt,
    JsonOpt,
    MaxStepsOpt,
    PluginOpt,
    ProcgenPhaseOpt,
    SetOpt,
    StoreOpt,
    WorkersOpt,
    game_flags,
)
from golem_cli.state import state


def _stat(value: dict[str, float] | None) -> str:
    return "–" if value is None else f"{value['mean']:.2f} ± {value['std']:.2f}"


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def rounds_table(report: DaggerReport) -> Table:
    """One row per round: β, episodes and steps recorded, disagreement, validation loss, the learner alone."""
    table = Table(title=f"DAgger on {report.scenario} (expert {report.expert})", show_edge=False)
    maps = any(r.maps is not None for r in report.rounds)
    columns = ["round", "β", "episodes", "steps", "expert tics", "disagreement", "val loss", "learner return"]
    for column in columns + (["learner exits"] if maps else []):
        table.add_column(column, justify="right")
    for r in report.rounds:
        table.add_row(
            str(r.round),
            f"{r.beta:.3f}",
            str(len(r.episodes)),
            str(r.steps),
            _share(r.expert_share),
            _share(r.disagreement),
            "–" if r.val_loss is None else f"{r.val_loss:.4f}",
            _stat(r.learner_return),
            *([_share(r.learner_exits)] if maps else []),
        )
    return table


def dagger_command(
    ctx: typer.Context,
    expert: Annotated[str, typer.Option("--expert", "-e", help="Scripted expert that labels every tic.")],
    rounds: Annotated[
        int, typer.Option("--rounds", "-r", min=1, help="Rounds to run (continuing after the last stored one).")
    ] = 3,
    episodes_per_round: Annotated[
        int, typer.Option("--episodes-per-round", "-n", min=1, help="Episodes recorded per round.")
    ] = 10,
    beta: Annotated[
        str,
        typer.Option("--beta", help=f"β schedule: {' or '.join(SCHEDULES)} (the share of tics the expert executes)."),
    ] = "linear",
    beta_param: Annotated[
        Optional[float],
        typer.Option(
            "--beta-param", help="linear: rounds until β = 0 (default 4); exponential: p in β = pⁱ (default 0.5)."
        ),
    ] = None,
    updates: Annotated[
        int, typer.Option("--updates", "-u", min=1, help="Optimiser steps of each round's fine-tuning.")
    ] = 300,
    eval_episodes: Annotated[
        int, typer.Option("--eval-episodes", min=0, help="Held-out episodes the learner plays alone after each round.")
    ] = 10,
    workers: WorkersOpt = 1,
    scenario: ExpertScenarioOpt = None,
    max_steps: MaxStepsOpt = None,
    other_scenario: Annotated[
        bool,
        typer.Option(
            "--other-scenario",
            help="Correct the model on a scenario it was not trained on (refused without this flag).",
        ),
    ] = False,
    procgen_phase: ProcgenPhaseOpt = None,
    generator: GeneratorOpt = "builtin",
    store: StoreOpt = None,
    plugin: PluginOpt = None,
    set_: SetOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Fine-tune the active model on its own states labelled by the expert, round by round.

    Per tic the expert's buttons run with probability β and the learner's otherwise; the expert's are recorded \
(source = recovery) and the model is fine-tuned on base + recovery episodes. Ctrl-C keeps every completed episode \
and the last saved model. With --procgen-phase P (--expert explorer or scout) every episode plays a fresh map of \
the phase (after every map of it in the store) and the learner is checked on --eval-episodes held-out maps.
    """
    st = state(ctx)
    resolved = st.resolve(plugin=plugin, set_=set_, flags=game_flags(scenario))
    plan = DaggerPlan(
        expert=expert,
        rounds=rounds,
        episodes_per_round=episodes_per_round,
        schedule=beta,
        beta_param=beta_param,
        updates_per_round=updates,
        eval_episodes=eval_episodes,
        workers=workers,
        store=store,
        scenario_given="game.scenario" in resolved.sources,
        max_steps=max_steps,
        other_scenario=other_scenario,
        worlds=None if procgen_phase is None else WorldPlan(generator=generator, phase=procgen_phase),
    )

    def on_stage(text: str) -> None:
        if not as_json:
            st.err.print(text, highlight=False)

    def on_round(r: RoundReport) -> None:
        if not as_json:
            exits = "" if r.learner_exits is None else f", exits {_share(r.learner_exits)} of the held-out maps"
            st.err.print(
                f"round {r.round} done: disagreement {_share(r.disagreement)}, learner {_stat(r.learner_return)}"
                f"{exits}",
                highlight=False,
            )

    settings = settings_from_model(resolved, st.host.registry)  # the corrected model's sensors and architecture
    report = dagger(settings, st.host.registry, plan, on_round=on_round, on_stage=on_stage)
    if as_json:
        typer.echo(json.dumps(report.to_dict()))
    else:
        st.out.print(rounds_table(report))
        st.out.print(f"active model → {report.model}", highlight=False, soft_wrap=True)
    if report.interrupted:
        raise typer.Exit(130)
