"""``golem run record``: demonstrations from a scripted expert or a human into the store."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

from golem.errors import GolemError
from golem.data.recording import (
    Episode, RecordPlan, continuing_seeds, expert_plays, record, require_sensors, resolve_expert,
)
from golem.runtime.generated import generated_maps
from golem.runtime.scenarios import scenario_spec, resolve_scenario
from golem.selection import check_selected
from golem.runtime.session import check_display
from golem.data.store import TrajectoryStore
from golem_cli.progress import LineProgress
from golem_cli.options import GeneratorOpt, MapsOpt, MaxStepsOpt, PluginOpt, ProcgenPhaseOpt, SetOpt, StoreOpt
from golem_cli.state import state


def record_command(
    ctx: typer.Context,
    expert: Annotated[Optional[str], typer.Option("--expert", "-e", help="Scripted expert to record (see `golem plugins list`).")] = None,
    human: Annotated[bool, typer.Option("--human", help="Record yourself: a game window opens, play with the game's keys.")] = False,
    episodes: Annotated[int, typer.Option("--episodes", "-n", min=1, help="Episodes to record.")] = 10,
    workers: Annotated[int, typer.Option("--workers", "-w", min=1, max=64, help="Parallel engine processes (experts).")] = 1,
    scenario: Annotated[Optional[str], typer.Option("--scenario", "-s", help="Scenario name, .cfg or .wad (default: the expert's own).")] = None,
    seed: Annotated[Optional[int], typer.Option("--seed", min=0, help="Seed of the first episode; episode i uses seed+i.")] = None,
    tag: Annotated[Optional[list[str]], typer.Option("--tag", help="Label stored with each episode. Repeatable.")] = None,
    max_steps: MaxStepsOpt = None,
    frame_skip: Annotated[Optional[int], typer.Option("--frame-skip", min=1, max=35, help="Tics each expert decision holds its buttons (game.frame_skip; default: the scenario's, 4 on most shipped scenarios); a model trained on the episodes plays at it.")] = None,
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
    resolved = st.resolve(plugin=plugin, set_=set_,
                          flags={"game.scenario": scenario, "game.seed": seed, "game.frame_skip": frame_skip})
    settings = resolved.settings
    registry = st.host.registry
    check_selected(settings, registry, ["sensors"])
    require_sensors(settings)
    scenario_given = "game.scenario" in resolved.sources
    if procgen_phase is not None:
        if expert is None or scenario_given:
            raise GolemError("--procgen-phase records an expert on generated maps: use it with --expert and without --scenario")
        _record_maps(st, settings, registry, expert, procgen_phase, maps, generator, seed or 0, tag, max_steps, store)
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
    plan = RecordPlan(
        demonstrator="human" if human else "expert", expert=expert, episodes=episodes, workers=workers,
        tags=list(tag or []), max_steps=max_steps,
    )
    path = store if store is not None else settings.store_path()
    frames = 0
    returns: list[float] = []
    progress = LineProgress(
        TextColumn("[bold]recording[/bold] {task.fields[what]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[fps]:>6.0f} frames/s  mean return {task.fields[mean]:>8.2f}"),
        TimeElapsedColumn(),
        console=st.err,
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
        f"recorded {len(ids)} episode(s), {frames} frames{every}, mean return {mean:.2f} → {path} (ids {ids[0]}–{ids[-1]})"
    )


def _every(skip: int) -> str:
    """`` (a decision every k tics)`` when ``k > 1``, else nothing."""
    return f" (a decision every {skip} tics)" if skip > 1 else ""


def _record_maps(
    st, settings, registry, expert: str, phase: int, count: int, generator: str, first_seed: int,
    tag: list[str] | None, max_steps: int | None, store,
) -> None:
    """One episode of ``expert`` on each of ``count`` generated maps of ``phase`` (map seeds from ``first_seed``)."""
    cls = registry.get("experts", expert).obj
    made = generated_maps(settings, registry, phase, count, first_seed, generator)
    strangers = [m.scenario for m in made if not expert_plays(cls, m.scenario)]
    if strangers:
        hint = ("its maps have no navigation sidecar (the explorer plays the builtin generator's maps)"
                if getattr(cls, "procedural", False) else "use --expert explorer")
        raise GolemError(f"expert {expert!r} does not play generated maps such as {strangers[0]}: {hint}")
    path = store if store is not None else settings.store_path()
    frames, returns, exits, ids = 0, [], 0, []
    progress = LineProgress(
        TextColumn("[bold]recording[/bold] {task.fields[what]}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("exits {task.fields[exits]}  mean return {task.fields[mean]:>6.2f}"), TimeElapsedColumn(),
        console=st.err,
    )
    tags = [*(tag or []), f"procgen-phase{phase}", f"generator:{generator}"]
    with TrajectoryStore.open_or_create(path) as opened, progress:
        task = progress.add_task("record", total=len(made), what=f"{expert} on phase-{phase} maps", exits=0, mean=0.0)
        try:
            for item in made:
                plan = RecordPlan(demonstrator="expert", expert=expert, episodes=1, workers=1, tags=tags,
                                  max_steps=max_steps, seeds=[item.seed])

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
        f"recorded {len(ids)} episode(s) on {len(made)} phase-{phase} map(s), {exits} reached the exit, {frames} frames, "
        f"mean return {mean:.2f} "
        f"→ {path} (ids {ids[0]}–{ids[-1]})"
    )
