"""``golem run evaluate``: the scoreboard — model vs random vs scripted expert on the same seeds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.table import Table

from golem.diagnostics.evaluation import EVAL_START_SEED, EvalPlan, Scoreboard, evaluate, evaluate_maps, expert_for
from golem.errors import GolemError
from golem.runtime.agent import check_temperature, samples_buttons
from golem.runtime.netgame import check_deathmatch_starts
from golem.runtime.rollout import EpisodeResult
from golem.scenarios import resolve_scenario
from golem_cli.options import (
    DecisionsOpt,
    FrameSkipOpt,
    GeneratorOpt,
    JsonOpt,
    MapsOpt,
    MaxStepsOpt,
    ModelScenarioOpt,
    PluginOpt,
    ProcgenChoice,
    ProcgenPhaseOpt,
    SetOpt,
    TemperatureOpt,
    WorkersOpt,
    check_suffixes,
    checkpoint_option,
    episodes_option,
    sampled,
    seed_option,
)
from golem_cli.player import choose_player
from golem_cli.progress import task_bar
from golem_cli.state import state


def _cell(stats: dict[str, Any], digits: int = 2) -> str:
    if stats["mean"] is None:
        return "–"
    return f"{stats['mean']:.{digits}f} ± {stats['std']:.{digits}f}"


def scoreboard_table(board: Scoreboard) -> Table:
    """Mean ± std per policy; kills, survival and goal columns where the scenario has them."""
    summary = board.summary()
    title = f"{summary['scenario']}: {summary['episodes']} episode(s) per policy, seeds {board.plan.start_seed}…"
    if board.plan.frame_skip > 1:
        title += f", a decision every {board.plan.frame_skip} tics"
    table = Table(title=title, show_edge=False)
    table.add_column("policy")
    table.add_column("return", justify="right")
    if board.has_kills:
        table.add_column("kills", justify="right")
    if board.has_survival:
        table.add_column("survival (tics)", justify="right")
        table.add_column("deaths", justify="right")
    if board.has_exits:
        table.add_column("goal reached", justify="right")  # exits on my_way_home, the monster on basic
    frags = board.plan.bots > 0 or any(r.frags for r in board.results)
    if frags:
        table.add_column("frags", justify="right")
    for role, stats in summary["policies"].items():
        label = f"expert ({board.plan.expert})" if role == "expert" else role
        row = [label, _cell(stats["return"])]
        if board.has_kills:
            row.append(_cell(stats["kills"]))
        if board.has_survival:
            row += [_cell(stats["tics"], 0), f"{stats['death_rate']:.0%}"]
        if board.has_exits:
            row.append(f"{stats['goal_rate']:.0%}")
        if frags:
            row.append(_cell(stats["frags"]))
        table.add_row(*row)
    return table


def evaluate_command(
    ctx: typer.Context,
    model: Annotated[Optional[Path], checkpoint_option("to judge")] = None,
    scenario: ModelScenarioOpt = None,
    episodes: Annotated[int, episodes_option("Episodes per policy.")] = 10,
    workers: WorkersOpt = 1,
    seed: Annotated[
        int, seed_option("Seed of the first episode; episode i uses seed+i (away from training seeds).")
    ] = EVAL_START_SEED,
    max_steps: MaxStepsOpt = None,
    frame_skip: FrameSkipOpt = None,
    baselines: Annotated[
        bool,
        typer.Option(
            "--baselines/--no-baselines",
            help="Also play the random policy and the expert (--no-baselines: the model alone, no shares).",
        ),
    ] = True,
    out: Annotated[
        Optional[list[Path]],
        typer.Option(
            "--out",
            "-o",
            help="Write per-episode results to .json (with the summary) or .csv. Repeatable.",
            metavar="PATH",
        ),
    ] = None,
    bots: Annotated[
        int,
        typer.Option(
            "--bots",
            min=0,
            max=15,
            help="The engine's bots added to every episode; the player hosts a deathmatch of its own "
            "(as on cig and multi_duel, which only run as network games). Frags are then scored.",
        ),
    ] = 0,
    procgen_phase: ProcgenPhaseOpt = None,
    maps: MapsOpt = 10,
    generator: GeneratorOpt = "builtin",
    decisions: DecisionsOpt = None,
    temperature: TemperatureOpt = 1.0,
    json_: JsonOpt = False,
    plugin: PluginOpt = None,
    set_: SetOpt = None,
) -> None:
    """Judge the model against the random policy and the scenario's scripted expert on the same seeds.

    Shares of the expert's mean return: normalised = (model − random) / (expert − random)
    (0 = random, 1 = expert) and raw = model / expert. With --procgen-phase P every policy plays one
    episode on each of --maps generated maps of phase P, built from --seed on (unseen by training
    maps, which start at seed 0); "goal reached" is the share of maps whose exit it reached.
    --decisions sample plays the model stochastically (each button drawn from its probability;
    --temperature sharpens or flattens the draws).
    """
    st = state(ctx)
    check_suffixes(out, (".json", ".csv"), "--out")
    check_temperature(temperature, True)
    registry = st.host.registry
    _, (path, metadata, scenario_name, threshold, settings) = choose_player(
        st, model, plugin, set_, scenario=scenario, frame_skip=frame_skip
    )
    draws = samples_buttons(metadata) if decisions is None else sampled(decisions)
    check_temperature(temperature, draws, path.name)  # before any map is built or worker starts
    made = []
    procgen = ProcgenChoice(procgen_phase, maps, generator)
    if procgen.given:
        if scenario is not None:
            raise GolemError("--procgen-phase plays generated maps: leave out --scenario")
        if bots:
            raise GolemError("--bots plays a deathmatch against the engine's bots: leave out --procgen-phase")
        made = procgen.build(settings, registry, seed)
        scenario_name = made[0].scenario
        episodes = len(made)
    resolved = resolve_scenario(scenario_name, settings.game.doom_map)  # unknown names fail before any worker starts
    if bots:
        check_deathmatch_starts(resolved)  # the bots' deathmatch would crash the engine on such a map
    expert = expert_for(registry, scenario_name)
    plan = EvalPlan(
        model_path=path,
        scenario=scenario_name,
        episodes=episodes,
        workers=workers,
        start_seed=seed,
        max_steps=max_steps,
        threshold=threshold,
        expert=expert,
        baselines=baselines,
        frame_skip=int(settings.game.frame_skip),
        bots=bots,
        # how the model decides, as the checkpoint says unless --decisions: the summary names it
        sample=draws,
        temperature=temperature,
    )
    total = episodes * len(plan.roles)
    progress = task_bar(st.err, "[bold]evaluating[/bold] {task.fields[what]}", transient=True)
    with progress:
        where = f"{len(made)} phase-{procgen_phase} maps of {generator}" if made else scenario_name
        task = progress.add_task("evaluate", total=total, what=f"{path.name} on {where}")

        def on_episode(result: EpisodeResult) -> None:
            progress.update(task, advance=1)

        if made:
            label = f"procgen phase {procgen_phase} ({generator}, {len(made)} maps)"
            board = evaluate_maps(settings, registry, plan, [(m.scenario, m.seed) for m in made], label, on_episode)
        else:
            board = evaluate(settings, registry, plan, on_episode=on_episode)
    written = [board.write(target) for target in out or []]
    summary = board.summary()
    if json_:
        st.out.print_json(json.dumps(summary))
        return
    st.out.print(scoreboard_table(board))
    share = summary["share"]
    if board.note:
        st.out.print(f"[yellow]note:[/yellow] {board.note}", highlight=False, soft_wrap=True)
    else:
        norm = "–" if share["normalised"] is None else f"{share['normalised']:.1%}"
        raw = "–" if share["raw"] is None else f"{share['raw']:.1%}"
        st.out.print(
            f"model's share of the expert: normalised {norm} ((model − random)/(expert − random)), "
            f"raw {raw} (model/expert)",
            highlight=False,
            soft_wrap=True,
        )
    latency = summary["model_latency_ms"]
    if latency:
        st.out.print(
            f"model decision time per tic: p50 {latency['total_p50_ms']:.2f} ms, p99 {latency['total_p99_ms']:.2f} ms",
            highlight=False,
            soft_wrap=True,
        )
    for target in written:
        st.out.print(f"results → {target}", highlight=False, soft_wrap=True)
