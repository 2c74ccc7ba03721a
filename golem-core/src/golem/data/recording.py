"""Recording demonstrations: a policy plays, every tic's sensors and buttons go to the store.

Two kinds of demonstrator share one loop: a scripted expert (reads privileged
state and acts) and a human (spectator mode, the engine reports what was
pressed). With ``workers > 1`` several engine processes play in parallel and
send finished episodes to the single writer in the calling process; an episode
is written in one transaction, so an interrupted recording keeps every
episode that completed.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import structlog

from golem.errors import GolemError
from golem.experts import Expert
from golem.plugins import load_plugins
from golem.registry import Registry
from golem.sensors import Sensor
from golem.runtime.session import Session
from golem.settings import GolemSettings
from golem.data.store import EpisodeMeta, TrajectoryStore
from golem.runtime.workers import run_pool, serve

log = structlog.get_logger(__name__)


@dataclass
class RecordPlan:
    """What to record.

    Attributes:
        demonstrator: ``"expert"`` or ``"human"``.
        expert: expert component name (for ``demonstrator == "expert"``).
        episodes: how many episodes.
        workers: parallel engine processes (experts only; a human plays in one window).
        seeds: one engine seed per episode (defaults to ``game.seed + i``).
        tags: free labels stored with every episode (``--module`` selects by them).
        max_steps: stop an episode after this many tics (``None``: the scenario's own timeout).
    """

    demonstrator: Literal["expert", "human"]
    episodes: int
    expert: str | None = None
    workers: int = 1
    seeds: list[int] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    max_steps: int | None = None


@dataclass
class Episode:
    """One finished episode: metadata plus ``[T, …]`` arrays (``actions``, ``rewards``, sensor keys)."""

    meta: EpisodeMeta
    arrays: dict[str, np.ndarray]
    counters: dict[str, float]


def build_sensors(settings: GolemSettings, registry: Registry) -> list[Sensor]:
    """Instances of the enabled sensors (``brain.sensors``), in order; unknown names fail listing the known."""
    return [registry.get("sensors", name).obj(settings) for name in settings.brain.sensors]


def resolve_expert(settings: GolemSettings, registry: Registry, name: str, scenario_given: bool) -> tuple[type[Expert], str]:
    """The expert class and the scenario it will play.

    Without an explicit scenario, an expert plays its own (first) scenario;
    an explicit scenario the expert was not written for is an error.
    """
    cls = registry.get("experts", name).obj
    if not scenario_given:
        return cls, cls.scenarios[0]
    scenario = settings.game.scenario
    if scenario not in cls.scenarios:
        raise GolemError(
            f"expert {name!r} plays {', '.join(cls.scenarios)}, not {scenario!r}; "
            f"pass --scenario {cls.scenarios[0]} or choose another expert"
        )
    return cls, scenario


def play_episode(
    session: Session,
    seed: int,
    act: Callable[[Any, Any], list[int]] | None,
    max_steps: int | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Play one episode and return its arrays and end-of-episode counters.

    The sensors read each tic's state on a helper thread while this thread
    acts and the engine (another process; ``make_action`` releases the GIL)
    computes the next tic; the helper also writes each step into arrays sized
    for the whole episode (the episode timeout, else grown by doubling), so no
    stacking is left for the end. It takes the states in order and the
    engine's state arrays are copies, so the arrays equal those of reading
    each state before acting.

    Args:
        session: a started session; its sensors are read every tic.
        seed: engine seed for this episode.
        act: ``act(game, state) -> list[int]`` for a scripted policy, or ``None``
            for spectator mode (a human plays; the engine reports the buttons).
        max_steps: cut the episode after this many tics.

    Returns:
        ``arrays``: ``actions`` uint8 ``[T, A]``, ``rewards`` float32 ``[T]`` and one
        ``[T, *shape]`` array per sensor key; ``counters``: ``kills``, ``health``,
        ``tics`` (survival) and ``dead`` (0/1) at the end.
    """

    import vizdoom as vzd

    game = session.game
    session.new_episode(seed)
    bounds = [n for n in (max_steps, int(game.get_episode_timeout())) if n]
    capacity = min(bounds) if bounds else 1024  # steps the first arrays hold
    columns: dict[str, np.ndarray] = {}  # sensor key → [capacity, *shape]
    states: queue.SimpleQueue[Any] = queue.SimpleQueue()
    backlog = 64  # states waiting for the sensors, at most (about 100 KB each)
    failed: list[BaseException] = []

    def keep(key: str, t: int, value: np.ndarray) -> None:
        column = columns.get(key)
        if column is None or t == len(column):  # first step, or full: double
            grown = np.empty((capacity if column is None else 2 * t, *value.shape), dtype=value.dtype)
            if column is not None:
                grown[:t] = column
            column = columns[key] = grown
        column[t] = value

    def read_sensors() -> None:
        t = 0
        while (state := states.get()) is not None:
            try:
                if not failed:
                    for sensor in session.sensors:
                        keep(sensor.key, t, sensor.extract(state))
                    t += 1
            except BaseException as exc:  # raised in the caller's thread below
                failed.append(exc)

    reader = threading.Thread(target=read_sensors, name="golem-sensors", daemon=True)
    reader.start()
    actions: list[list[int]] = []
    rewards: list[float] = []
    try:
        while not game.is_episode_finished() and not failed:
            state = game.get_state()
            while states.qsize() >= backlog and not failed:  # the sensors fell behind: let them catch up
                time.sleep(0.001)
            action = act(game, state) if act is not None else None
            states.put(state)  # queued just before the engine runs, so the two threads rarely want the GIL at once
            if action is None:
                game.advance_action(1)
                action = [int(v != 0) for v in game.get_last_action()]
                reward = float(game.get_last_reward())
            else:
                reward = session.act(action)
            actions.append(action)
            rewards.append(reward)
            if max_steps is not None and len(actions) >= max_steps:
                break
    finally:
        states.put(None)
        reader.join()
    if failed:
        raise failed[0]
    if not actions:
        raise GolemError(f"episode with seed {seed} ended before its first tic")
    arrays = {key: column[: len(actions)] for key, column in columns.items()}
    arrays["actions"] = np.asarray(actions, dtype=np.uint8)
    arrays["rewards"] = np.asarray(rewards, dtype=np.float32)
    counters = {
        "kills": float(game.get_game_variable(vzd.GameVariable.KILLCOUNT)),
        "health": float(game.get_game_variable(vzd.GameVariable.HEALTH)),
        "tics": float(len(actions)),
        "dead": float(game.is_player_dead()),
    }
    return arrays, counters


def _episodes_in_process(
    settings: GolemSettings, registry: Registry, plan: RecordPlan, scenario: str, seeds: Sequence[int]
) -> Iterator[Episode]:
    sensors = build_sensors(settings, registry)
    expert: Expert | None = None
    if plan.demonstrator == "expert":
        assert plan.expert is not None
        expert = registry.get("experts", plan.expert).obj(settings_actions(settings))
    human = plan.demonstrator == "human"
    configurers = [expert] if expert is not None else []
    with Session(settings, sensors, scenario=scenario, visible=human, spectator=human, configurers=configurers) as session:
        for seed in seeds:
            act = None
            if expert is not None:
                expert.reset(session.game)
                act = expert.act
            arrays, counters = play_episode(session, seed, act, plan.max_steps)
            meta = EpisodeMeta(
                profile=settings.brain.profile,
                action_names=list(session.action_names),
                scenario=scenario,
                source="human" if human else "expert",
                sensors=list(settings.brain.sensors),
                map=settings.game.doom_map,
                seed=int(seed),
                tags=list(plan.tags),
                extra={"expert": plan.expert, **counters} if expert is not None else dict(counters),
            )
            yield Episode(meta=meta, arrays=arrays, counters=counters)


def settings_actions(settings: GolemSettings) -> tuple[str, ...]:
    """The action names of ``settings.brain.profile``."""
    from golem.profiles import PROFILES

    return PROFILES[settings.brain.profile]


def _worker(
    settings_json: str, registry: Registry | None, plan: RecordPlan, scenario: str, tasks: Any, results: Any
) -> None:
    """Worker process: record the episodes of the seeds it takes from ``tasks``.

    ``registry`` is inherited when the worker is forked; a spawned worker loads the plugins itself.
    """
    settings = GolemSettings.model_validate_json(settings_json)

    def produce(seeds: Iterator[int]) -> Iterator[Episode]:
        reg = registry if registry is not None else load_plugins().registry
        yield from _episodes_in_process(settings, reg, plan, scenario, seeds)

    serve(tasks, results, produce, "recording")


def record(
    settings: GolemSettings,
    registry: Registry,
    plan: RecordPlan,
    store: TrajectoryStore,
    scenario: str,
    on_episode: Callable[[int, Episode], None] | None = None,
) -> list[int]:
    """Record ``plan.episodes`` episodes into ``store``; returns the new episode ids.

    Each finished episode is written at once (one transaction), so an
    interruption (``KeyboardInterrupt``) keeps every completed episode.
    ``on_episode(episode_id, episode)`` is called after each write (progress).
    """
    seeds = plan.seeds or [settings.game.seed + i for i in range(plan.episodes)]
    if plan.workers > 1 and plan.demonstrator == "human":
        raise GolemError("--workers applies to experts; a human records in one window")
    if plan.workers > 1:
        # Recording runs no tensor maths in this process, so workers may fork (fast, plugins inherited).
        source: Iterator[Episode] = run_pool(
            _worker, (settings.model_dump_json(), registry, plan, scenario), seeds, plan.workers,
            start_method="fork", what="recording",
        )
    else:
        source = _episodes_in_process(settings, registry, plan, scenario, seeds)
    ids: list[int] = []
    started = time.perf_counter()
    try:
        for episode in source:
            eid = store.write_episode(episode.meta, episode.arrays)
            ids.append(eid)
            if on_episode is not None:
                on_episode(eid, episode)
    finally:
        source.close()  # stops workers and engines now, also on Ctrl-C
    log.info("record.done", episodes=len(ids), seconds=round(time.perf_counter() - started, 2))
    return ids
