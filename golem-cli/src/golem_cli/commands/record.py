"""``golem run record``: demonstrations from a scripted expert or a human into the store."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from golem.data.store import TrajectoryStore
from golem.errors import GolemError
from golem.runtime.session import check_display
from golem.scenarios import SCENARIO_SPECS, ScenarioSpec, resolve_scenario, scenario_spec
from golem.selection import check_selected
from golem.workflows.recording import (
    Episode,
    RecordPlan,
    continuing_seeds,
    expert_plays,
    record,
    require_sensors,
    resolve_expert,
)
from golem_cli.options import (
    ExpertScenarioOpt,
    GeneratorOpt,
    MapsOpt,
    MaxStepsOpt,
    PluginOpt,
    ProcgenChoice,
    ProcgenPhaseOpt,
    SetOpt,
    StoreOpt,
    TagOpt,
    episodes_option,
    game_flags,
    seed_option,
    store_path,
    workers_option,
)
from golem_cli.progress import task_bar
from golem_cli.state import state

#: Episodes a person records when --episodes is not given (an expert records its scenario spec's).
HUMAN_EPISODES = 10


def _episodes_help() -> str:
    counts = sorted(spec.episodes for spec in SCENARIO_SPECS.values())
    return (
        f"Episodes to record (default: the scenario's with --expert, {counts[0]:,}–{counts[-1]:,} on the shipped "
        f"scenarios and {ScenarioSpec().episodes} on others; {HUMAN_EPISODES} with --human)."
    )


def default_episodes(scenario: str, human: bool) -> int:
    """Episodes to record when ``--episodes`` is not given: the scenario spec's for an expert, a few for a person."""
    return HUMAN_EPISODES if human else scenario_spec(scenario).episodes


def record_command(
    ctx: typer.Context,
    expert: Annotated[
        Optional[str], typer.Option("--expert", "-e", help="Scripted expert to record (see `golem plugins list`).")
    ] = None,
    human: Annotated[
        bool, typer.Option("--human", help="Record yourself: a game window opens, play with the game's keys.")
    ] = False,
    episodes: Annotated[Optional[int], episodes_option(_episodes_help())] = None,
    workers: Annotated[int, workers_option("Parallel engine processes (experts).")] = 1,
    scenario: ExpertScenarioOpt = None,
    seed: Annotated[Optional[int], seed_option()] = None,
    tag: TagOpt = None,
    max_steps: MaxStepsOpt = None,
    frame_skip: Annotated[
        Optional[int],
        typer.Option(
            "--frame-skip",
            min=1,
            max=35,
            help=(
                "Tics each expert decision holds its buttons (game.frame_skip; default: the scenario's, "
                "4 on most shipped scenarios); a model trained on the episodes plays at it."
            ),
        ),
    ] = None,
    procgen_phase: ProcgenPhaseOpt = None,
    maps: MapsOpt = 10,
    generator: GeneratorOpt = "builtin",
    store: StoreOpt = None,
    plugin: PluginOpt = None,
    set_: SetOpt = None,
) -> None:
    """Record demonstrations into the trajectory store. Ctrl-C keeps every completed episode.

    With --procgen-phase P the expert plays one episode on each of --maps generated maps of phase P
    (seeds from --seed, default 0; maps are built once under <data.root>/maps/).
    """
    st = state(ctx)
    if (expert is None) == (not human):
        raise GolemError("choose exactly one demonstrator: --expert NAME or --human")
    resolved = st.resolve(plugin=plugin, set_=set_, flags=game_flags(scenario, seed, frame_skip))
    settings = resolved.settings
    registry = st.host.registry
    check_selected(settings, registry, ["sensors"])
    require_sensors(settings)
    scenario_given = "game.scenario" in resolved.sources
    procgen = ProcgenChoice(procgen_phase, maps, generator)
    if procgen.given:
        if expert is None or scenario_given:
            raise GolemError(
                "--procgen-phase records an expert on generated maps: use it with --expert and without --scenario"
            )
        _record_maps(st, settings, registry, expert, procgen, seed or 0, tag, max_steps, store)
        return
    if expert is not None:
        _, scenario_name = resolve_expert(settings, registry, expert, scenario_given)
    else:
        scenario_name = settings.game.scenario
    # Fail on a bad scenario or a missing display before anything is created on disk.
    resolve_scenario(scenario_name, settings.game.doom_map)
    if expert is not None and "game.frame_skip" not in resolved.sources:  # a person plays every tic
        skip = scenario_spec(scenario_name).frame_skip
        settings = settings.model_copy(update={"game": settings.game.model_copy(update={"frame_skip": skip})})
    if human:
        check_display()
    if episodes is None:
        episodes = default_episodes(scenario_name, human)
    plan = RecordPlan(
        demonstrator="human" if human else "expert",
        expert=expert,
        episodes=episodes,
        workers=workers,
        tags=list(tag or []),
        max_steps=max_steps,
    )
    path = store_path(settings, store)
    frames = 0
    returns: list[float] = []
    progress = task_bar(
        st.err,
        "[bold]recording[/bold] {task.fields[what]}",
        "{task.fields[fps]:>6.0f} frames/s  mean return {task.fields[mean]:>8.2f}",
    )
    what = f"{expert or 'human'} on {scenario_name}"
    with TrajectoryStore.open_or_create(path) as opened, progress:
        if "game.seed" not in resolved.sources:  # no seed asked for: continue after the stored ones
            plan.seeds = continuing_seeds(opened, scenario_name, settings.game.seed, episodes)
        task = progress.add_task("record", total=episodes, what=what, fps=0.0, mean=0.0)
        started = progress.get_time()

        def on_episode(eid: int, episode: Episode) -> None:
            nonlocal frames
            frames += episode.meta.length
            returns.append(episode.meta.total_return)
            elapsed = max(progress.get_time() - started, 1e-9)
            progress.update(task, advance=1, fps=frames / elapsed, mean=sum(returns) / len(returns))

        try:
            ids = record(settings, registry, plan, opened, scenario_name, on_episode=on_episode)
        except KeyboardInterrupt:
            st.err.print(f"[yellow]interrupted: {len(returns)} completed episode(s) kept in {path}[/yellow]")
            raise typer.Exit(130) from None
    mean = sum(returns) / len(returns)
    every = _every(1 if human else settings.game.frame_skip)
    st.out.print(
        f"recorded {len(ids)} episode(s), {frames} frames{every}, mean return {mean:.2f} "
        f"→ {path} (ids {ids[0]}–{ids[-1]})"
    )


def _every(skip: int) -> str:
    """`` (a decision every k tics)`` when ``k > 1``, else nothing."""
    return f" (a decision every {skip} tics)" if skip > 1 else ""


def _record_maps(
    st,
    settings,
    registry,
    expert: str,
    procgen: ProcgenChoice,
    first_seed: int,
    tag: list[str] | None,
    max_steps: int | None,
    store,
) -> None:
    """One episode of ``expert`` on each of ``procgen.maps`` generated maps (map seeds from ``first_seed``)."""
    cls = registry.get("experts", expert).obj
    phase, generator = procgen.phase, procgen.generator
    made = procgen.build(settings, registry, first_seed)
    strangers = [m.scenario for m in made if not expert_plays(cls, m.scenario)]
    if strangers:
        hint = (
            "its maps have no navigation sidecar (the explorer plays the builtin generator's maps)"
            if getattr(cls, "procedural", False)
            else "use --expert explorer"
        )
        raise GolemError(f"expert {expert!r} does not play generated maps such as {strangers[0]}: {hint}")
    path = store_path(settings, store)
    frames, returns, exits, ids = 0, [], 0, []
    progress = task_bar(
        st.err,
        "[bold]recording[/bold] {task.fields[what]}",
        "exits {task.fields[exits]}  mean return {task.fields[mean]:>6.2f}",
    )
    tags = [*(tag or []), f"procgen-phase{phase}", f"generator:{generator}"]
    with TrajectoryStore.open_or_create(path) as opened, progress:
        task = progress.add_task("record", total=len(made), what=f"{expert} on phase-{phase} maps", exits=0, mean=0.0)
        try:
            for item in made:
                plan = RecordPlan(
                    demonstrator="expert",
                    expert=expert,
                    episodes=1,
                    workers=1,
                    tags=tags,
                    max_steps=max_steps,
                    seeds=[item.seed],
                )

                def on_episode(eid: int, episode: Episode) -> None:
                    nonlocal frames, exits
                    frames += episode.meta.length
                    returns.append(episode.meta.total_return)
                    exits += int(episode.counters.get("exited", 0.0) > 0)

                ids += record(settings, registry, plan, opened, item.scenario, on_episode=on_episode)
                progress.update(task, advance=1, exits=exits, mean=sum(returns) / len(returns))
        except KeyboardInterrupt:
            st.err.print(f"[yellow]interrupted: {len(ids)} completed episode(s) kept in {path}[/yellow]")
            raise typer.Exit(130) from None
    mean = sum(returns) / len(returns)
    st.out.print(
        f"recorded {len(ids)} episode(s) on {len(made)} phase-{phase} map(s), {exits} reached the exit, "
        f"{frames} frames, mean return {mean:.2f} "
        f"→ {path} (ids {ids[0]}–{ids[-1]})"
    )
