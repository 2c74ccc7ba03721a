"""``golem run record``: demonstrations from a scripted expert or a human into the store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Optional

import typer

from golem.data.store import TrajectoryStore
from golem.errors import GolemError
from golem.runtime.generated import WorldPlan, build_world, spec_variation, variation_plan
from golem.runtime.session import check_display
from golem.scenarios import (
    SCENARIO_SPECS,
    ScenarioSpec,
    generated_spec,
    is_scenario_name,
    resolve_scenario,
    scenario_spec,
)
from golem.selection import check_selected
from golem.sensors import with_default_sensors
from golem.workflows.recording import (
    Episode,
    RecordPlan,
    check_world_expert,
    continuing_seeds,
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
    vary: Annotated[
        Optional[str],
        typer.Option(
            "--vary",
            metavar="MODS",
            help=(
                "Play every episode on a variant of the scenario of its own, built from the episode's seed: "
                "comma-separated modifications of its look, e.g. textures,monsters,light "
                "(see `golem procgen vary --help`; golem-procgen). Variants are built once under <data.root>/maps/. "
                "Default: the scenario spec's (`defend_the_center` records on variants); none: the shipped map."
            ),
        ),
    ] = None,
    store: StoreOpt = None,
    plugin: PluginOpt = None,
    set_: SetOpt = None,
) -> None:
    """Record demonstrations into the trajectory store. Ctrl-C keeps every completed episode.

    With --procgen-phase P the expert plays one episode on each of --maps generated maps of phase P
    (seeds from --seed, default 0; maps are built once under <data.root>/maps/, in --workers processes).
    Phase 1 decides every four tics and records the automap beside the screen unless --frame-skip or a
    sensor (--plugin) is given.
    With --vary MODS every episode plays on a look-alike variant of the scenario built from its seed.
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
        if expert is None or scenario_given or vary is not None:
            raise GolemError(
                "--procgen-phase records an expert on generated maps: use it with --expert, "
                "without --scenario and --vary"
            )
        assert procgen.phase is not None
        settings, notes = _generated_defaults(settings, registry, procgen.phase, resolved.sources)
        worlds = WorldPlan(generator=procgen.generator, phase=procgen.phase, tags=tuple(tag or []))
        _record_worlds(
            st, settings, registry, expert, worlds, seed or 0, procgen.maps, workers, max_steps, store, notes
        )
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
    worlds = None
    if vary is None and expert is not None:
        worlds = spec_variation(scenario_name, registry)  # the scenario's randomised recording, unless --vary says
        if worlds is not None:
            st.err.print(
                f"every episode on a variant of {scenario_name} of its own "
                f"({','.join((worlds.config or {})['modifications'])}: the scenario's default); "
                "--vary none records on the shipped map",
                highlight=False,
                soft_wrap=True,
            )
    elif vary is not None and vary.strip().lower() != "none":
        if not is_scenario_name(scenario_name):
            raise GolemError(f"--vary makes variants of a shipped scenario, not of {scenario_name}")
        mods = [m.strip() for m in vary.split(",") if m.strip()]
        if not mods:
            raise GolemError("--vary needs at least one modification, e.g. --vary textures")
        worlds = variation_plan(scenario_name, mods)
    if worlds is not None:
        check_world(settings, registry, worlds, expert)
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
        worlds=worlds,
    )
    path = store_path(settings, store)
    frames = 0
    returns: list[float] = []
    progress = task_bar(
        st.err,
        "[bold]recording[/bold] {task.fields[what]}",
        "{task.fields[fps]:>6.0f} frames/s  mean return {task.fields[mean]:>8.2f}",
    )
    what = f"{expert or 'human'} on {scenario_name if worlds is None else worlds.label()}"
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


def _generated_defaults(settings, registry, phase: int, given) -> tuple[Any, list[str]]:
    """``settings`` with the phase's spec (:func:`golem.scenarios.generated_spec`) where the user set none: its
    frame skip and the sensors it records beside the screen; and the lines that say what was taken (printed
    once the maps and the expert are checked)."""
    spec = generated_spec(phase)
    taken: list[str] = []
    if "game.frame_skip" not in given and spec.frame_skip != settings.game.frame_skip:
        game = settings.game.model_copy(update={"frame_skip": spec.frame_skip})
        settings = settings.model_copy(update={"game": game})
        taken.append(f"a decision every {spec.frame_skip} tics (--frame-skip)")
    settings, added, missing = with_default_sensors(settings, registry, spec.sensors, given)
    taken += [f"the {name} sensor beside the screen (--plugin no:{name})" for name in added]
    notes = [f"phase-{phase} maps: {' and '.join(taken)}: the generated maps' defaults"] if taken else []
    notes += [
        f"[yellow]phase-{phase} maps record the {name} sensor by default, but no installed plugin registers it: "
        "recording without it[/yellow]"
        for name in missing
    ]
    return settings, notes


def _every(skip: int) -> str:
    """`` (a decision every k tics)`` when ``k > 1``, else nothing."""
    return f" (a decision every {skip} tics)" if skip > 1 else ""


def check_world(settings, registry, worlds: WorldPlan, expert: str | None, seed: int = 0) -> None:
    """Build (or find) the first map of ``worlds`` and check the expert plays it, before any store is opened:
    an unknown generator, modification or phase, or an expert for other maps, is one line and nothing stored.
    """
    plan = RecordPlan(demonstrator="expert" if expert else "human", episodes=1, expert=expert, worlds=worlds)
    check_world_expert(plan, registry, build_world(settings, registry, worlds, seed))


def _record_worlds(
    st,
    settings,
    registry,
    expert: str,
    worlds: WorldPlan,
    first_seed: int,
    count: int,
    workers: int,
    max_steps: int | None,
    store,
    notes: Sequence[str] = (),
) -> None:
    """One episode of ``expert`` on each of ``count`` built maps (map seeds from ``first_seed``), in ``workers``
    engine processes; each worker builds the maps of the seeds it takes (once: they are cached). ``notes``:
    lines printed once the first map and the expert are checked (the defaults the phase took)."""
    check_world(settings, registry, worlds, expert, first_seed)
    for line in notes:
        st.err.print(line, highlight=False, soft_wrap=True)
    path = store_path(settings, store)
    frames, returns, exits = 0, [], 0
    progress = task_bar(
        st.err,
        "[bold]recording[/bold] {task.fields[what]}",
        "exits {task.fields[exits]}  {task.fields[fps]:>6.0f} frames/s  mean return {task.fields[mean]:>6.2f}",
    )
    plan = RecordPlan(
        demonstrator="expert",
        expert=expert,
        episodes=count,
        workers=workers,
        max_steps=max_steps,
        seeds=list(range(first_seed, first_seed + count)),
        worlds=worlds,
    )
    ids: list[int] = []
    with TrajectoryStore.open_or_create(path) as opened, progress:
        task = progress.add_task(
            "record", total=count, what=f"{expert} on {worlds.label()}", exits=0, fps=0.0, mean=0.0
        )
        started = progress.get_time()

        def on_episode(eid: int, episode: Episode) -> None:
            nonlocal frames, exits
            ids.append(eid)
            frames += episode.meta.length
            returns.append(episode.meta.total_return)
            exits += int(episode.counters.get("exited", 0.0) > 0)
            elapsed = max(progress.get_time() - started, 1e-9)
            progress.update(task, advance=1, exits=exits, fps=frames / elapsed, mean=sum(returns) / len(returns))

        try:
            record(settings, registry, plan, opened, worlds.seed_key, on_episode=on_episode)
        except KeyboardInterrupt:
            st.err.print(f"[yellow]interrupted: {len(ids)} completed episode(s) kept in {path}[/yellow]")
            raise typer.Exit(130) from None
    mean = sum(returns) / len(returns)
    st.out.print(
        f"recorded {len(ids)} episode(s) on {count} {worlds.label()}, {exits} reached the exit, "
        f"{frames} frames, mean return {mean:.2f} "
        f"→ {path} (ids {ids[0]}–{ids[-1]})"
    )
