"""``golem run play``: the trained model plays, headless, in a window, or into a video."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any, Optional

import numpy as np
import typer
from rich.table import Table

from golem.profiles import PROFILES
from golem.runtime.agent import check_compatible, load_agent
from golem.runtime.rollout import EpisodeResult, run_episode
from golem.runtime.session import Session, check_display
from golem.runtime.video import VIDEO_FPS, VideoObserver, VideoWriter
from golem.workflows.recording import build_sensors
from golem_cli.options import (
    DecisionsOpt,
    FrameSkipOpt,
    JsonOpt,
    MaxStepsOpt,
    ModelScenarioOpt,
    PluginOpt,
    SetOpt,
    TemperatureOpt,
    checkpoint_option,
    episodes_option,
    sampled,
    seed_option,
)
from golem_cli.player import choose_player
from golem_cli.state import state


class RealTime:
    """Configurer: the engine runs at its own 35 Hz clock (``Mode.ASYNC_PLAYER``) so a person can watch."""

    def configure(self, game: Any) -> None:
        import vizdoom as vzd

        game.set_mode(vzd.Mode.ASYNC_PLAYER)
        game.set_ticrate(VIDEO_FPS)


def episode_line(index: int, result: EpisodeResult) -> str:
    """One episode's outcome for people."""
    seconds = result.tics / 35.0
    end = "died" if result.dead else "alive"
    return (
        f"episode {index}  seed {result.seed}  return {result.episode_return:8.2f}  kills {result.kills}  "
        f"health {result.health:.0f}  survived {result.tics} tics ({seconds:.1f} s)  {end}"
    )


def play_command(
    ctx: typer.Context,
    model: Annotated[Optional[Path], checkpoint_option("to play")] = None,
    scenario: ModelScenarioOpt = None,
    episodes: Annotated[int, episodes_option("Episodes to play.")] = 1,
    seed: Annotated[
        Optional[int], seed_option("Seed of the first episode; episode i uses seed+i (default: game.seed).")
    ] = None,
    max_steps: MaxStepsOpt = None,
    frame_skip: FrameSkipOpt = None,
    window: Annotated[
        bool, typer.Option("--window", help="Watch in a game window at real speed (needs a display).")
    ] = False,
    video: Annotated[
        Optional[Path],
        typer.Option("--video", help="Write the screens the model saw to a .gif or .mp4.", metavar="PATH"),
    ] = None,
    decisions: DecisionsOpt = None,
    temperature: TemperatureOpt = 1.0,
    json_: JsonOpt = False,
    plugin: PluginOpt = None,
    set_: SetOpt = None,
) -> None:
    """Let the trained model play and report each episode's return, kills, health and survival."""
    st = state(ctx)
    if window:
        check_display()
    registry = st.host.registry
    _, (path, _, scenario_name, threshold, settings) = choose_player(
        st, model, plugin, set_, scenario=scenario, seed=seed, frame_skip=frame_skip
    )
    writer = VideoWriter(video) if video is not None else None
    agent = load_agent(path, registry, threshold, sample=sampled(decisions), temperature=temperature)
    sensors = build_sensors(settings, registry)
    check_compatible(agent.spec, settings.brain.profile, PROFILES[settings.brain.profile], sensors)  # before the engine
    configurers = [RealTime()] if window else []
    results: list[EpisodeResult] = []
    started = time.perf_counter()
    try:
        with Session(settings, sensors, scenario=scenario_name, visible=window, configurers=configurers) as session:
            agent.check_session(session)
            observers = [VideoObserver(writer)] if writer is not None else []
            for i in range(episodes):
                if i == 0:
                    started = time.perf_counter()  # the engine is up: time the playing only
                result = run_episode(session, agent, settings.game.seed + i, max_steps=max_steps, observers=observers)
                results.append(result)
                if not json_:
                    st.out.print(episode_line(i + 1, result), highlight=False, soft_wrap=True)
    except KeyboardInterrupt:
        st.err.print(f"[yellow]interrupted after {len(results)} episode(s)[/yellow]")
        raise typer.Exit(130) from None
    finally:
        if writer is not None:
            writer.close()
    seconds = time.perf_counter() - started
    latency = agent.latency_ms()
    if json_:
        out = {
            "model": str(path),
            "scenario": scenario_name,
            "threshold": threshold,
            "decisions": "sample" if agent.sample else "threshold",  # how the buttons were chosen
            "temperature": agent.temperature,
            "episodes": [r.as_dict() for r in results],
            "seconds": round(seconds, 3),
            "latency_ms": latency,
            "video": str(video) if video is not None else None,
        }
        st.out.print_json(json.dumps(out))
        return
    if len(results) > 1:
        table = Table(title=f"{path.name} on {scenario_name}", show_edge=False)
        for col in ("mean return", "mean kills", "mean survival (tics)", "deaths"):
            table.add_column(col, justify="right")
        table.add_row(
            f"{np.mean([r.episode_return for r in results]):.2f}",
            f"{np.mean([r.kills for r in results]):.2f}",
            f"{np.mean([r.tics for r in results]):.0f}",
            f"{sum(r.dead for r in results)}/{len(results)}",
        )
        st.out.print(table)
    if latency:
        st.out.print(
            f"decision time per tic: p50 {latency['total_p50_ms']:.2f} ms, p99 {latency['total_p99_ms']:.2f} ms "
            f"(a tic is 28.6 ms)",
            highlight=False,
            soft_wrap=True,
        )
    if writer is not None:
        st.out.print(f"video: {writer.frames} frames → {video}", highlight=False, soft_wrap=True)
