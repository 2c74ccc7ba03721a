"""Recording demonstrations: a policy plays, every tic's sensors and buttons go to the store.

Two kinds of demonstrator play through the one rollout loop
(:func:`golem.runtime.rollout.run_episode`) with a :class:`Recorder` watching:
a scripted expert (reads privileged state and acts) and a human (spectator
mode, the engine reports what was pressed). With ``workers > 1`` several engine processes play in parallel and
send finished episodes to the single writer in the calling process; an episode
is written in one transaction, so an interrupted recording keeps every
episode that completed.
"""

from __future__ import annotations

import queue
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import structlog

from golem.data.arrays import array_rules
from golem.data.store import EpisodeMeta, TrajectoryStore
from golem.errors import GolemError
from golem.experts import Expert, expert_plays
from golem.plugins import load_plugins
from golem.registry import Registry
from golem.runtime.generated import GeneratedMap, WorldPlan, build_world, map_generator
from golem.runtime.rollout import EpisodeResult, HumanPolicy, MixingPolicy, Observer, Policy, Tic, run_episode
from golem.runtime.session import Session
from golem.runtime.workers import run_pool, serve
from golem.scenarios import step_limit
from golem.sensors import build_sensors, recorded_settings
from golem.settings import GolemSettings

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
        max_steps: stop an episode after this many tics (``None``: the scenario's own time-out, or
            its default limit when it has none: :func:`golem.scenarios.step_limit`).
        learner: a checkpoint path: DAgger data. Per tic the expert's buttons are executed with
            probability ``beta`` and the learner's otherwise (its state carried through every tic);
            the expert's are recorded, and episodes are stored with ``source = "recovery"``.
        beta: the expert's share of executed tics (with ``learner``).
        dagger_round: the DAgger round the episodes belong to (stored in ``extra``).
        worlds: play every episode on a map of its own, built for its seed (a curriculum phase's generated
            map, or a variant of the scenario): :class:`golem.runtime.generated.WorldPlan`. The map's generator,
            phase, seed and configuration hash go into the episode's ``extra["world"]``, its tags into ``tags``.
        spawn: start workers as fresh interpreters even without a learner: a caller that has run tensor maths in
            this process (a training before, as the curriculum does) must not fork.
    """

    demonstrator: Literal["expert", "human"]
    episodes: int
    expert: str | None = None
    workers: int = 1
    seeds: list[int] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    max_steps: int | None = None
    learner: str | None = None
    beta: float = 1.0
    dagger_round: int | None = None
    worlds: WorldPlan | None = None
    spawn: bool = False


@dataclass
class Episode:
    """One finished episode: metadata plus ``[T, …]`` arrays (``actions``, ``rewards``, sensor keys)."""

    meta: EpisodeMeta
    arrays: dict[str, np.ndarray]
    counters: dict[str, float]


def resolve_expert(
    settings: GolemSettings, registry: Registry, name: str, scenario_given: bool
) -> tuple[type[Expert], str]:
    """The expert class and the scenario it will play.

    Without an explicit scenario, an expert plays its own (first) scenario;
    an explicit scenario the expert was not written for is an error.
    """
    cls = registry.get("experts", name).obj
    if not scenario_given:
        if getattr(cls, "procedural", False):
            raise GolemError(
                f"expert {name!r} plays generated maps: pass --procgen-phase P --maps N, or --scenario MAP.cfg"
            )
        return cls, cls.scenarios[0]
    scenario = settings.game.scenario
    if not expert_plays(cls, scenario):
        raise GolemError(
            f"expert {name!r} plays {', '.join(cls.scenarios)}, not {scenario!r}; "
            f"pass --scenario {cls.scenarios[0]} or choose another expert"
        )
    return cls, scenario


class Recorder(Observer):
    """The rollout observer that records an episode: every tic's sensors, label buttons and reward.

    The sensors read each tic's state on a helper thread while the loop's
    thread decides and the engine (another process; ``make_action`` releases
    the GIL) computes the tic; the helper writes each step into arrays sized
    for the whole episode (``max_steps`` or the engine's time-out, else grown
    by doubling), so nothing is stacked at the end. It takes the states in
    order and the engine's state arrays are copies, so the arrays equal those
    of reading each state before acting.

    After the episode, :attr:`arrays` holds ``actions`` uint8 ``[T, A]`` (the
    *label* buttons), ``rewards`` float32 ``[T]``, ``tic`` int32 ``[T]`` (the
    engine tic each step was decided on: the ODE's clock, see ``game.frame_skip``)
    and one ``[T, *shape]`` array per sensor key of the session.
    """

    #: States waiting for the sensors, at most (about 100 KB each).
    BACKLOG = 64

    def __init__(self, max_steps: int | None = None) -> None:
        self.max_steps = max_steps
        self.arrays: dict[str, np.ndarray] = {}
        self._thread: threading.Thread | None = None

    def begin(self, session: Session, seed: int) -> None:
        bounds = [n for n in (self.max_steps, int(session.game.get_episode_timeout())) if n]
        self._capacity = min(bounds) if bounds else 1024  # steps the first arrays hold
        self._sensors = list(session.sensors)
        self._columns: dict[str, np.ndarray] = {}  # sensor key → [capacity, *shape]
        self._states: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._failed: list[BaseException] = []
        self._actions: list[list[int]] = []
        self._rewards: list[float] = []
        self._tics: list[int | None] = []
        self.arrays = {}
        self._thread = threading.Thread(target=self._read_sensors, name="golem-sensors", daemon=True)
        self._thread.start()

    def _keep(self, key: str, t: int, value: np.ndarray) -> None:
        column = self._columns.get(key)
        if column is None or t == len(column):  # first step, or full: double
            grown = np.empty((self._capacity if column is None else 2 * t, *value.shape), dtype=value.dtype)
            if column is not None:
                grown[:t] = column
            column = self._columns[key] = grown
        column[t] = value

    def _read_sensors(self) -> None:
        t = 0
        while (state := self._states.get()) is not None:
            try:
                if not self._failed:
                    for sensor in self._sensors:
                        self._keep(sensor.key, t, sensor.extract(state))
                    t += 1
            except BaseException as exc:  # raised in the loop's thread by before_tic / end
                self._failed.append(exc)

    def _raise_failure(self) -> None:
        if self._failed:
            raise self._failed[0]

    def before_tic(self, state: Any) -> None:
        while self._states.qsize() >= self.BACKLOG and not self._failed:  # the sensors fell behind
            time.sleep(0.001)
        self._raise_failure()
        # Queued just before the engine runs, so the two threads rarely want the GIL at once.
        self._states.put(state)

    def after_tic(self, tic: Tic) -> None:
        self._actions.append(tic.label)
        self._rewards.append(tic.reward)
        self._tics.append(getattr(tic.state, "tic", None))

    def _stop(self) -> None:
        if self._thread is not None:
            self._states.put(None)  # ends the reader, also one that has yet to run
            try:
                self._thread.join()
            except RuntimeError:  # Ctrl-C landed inside begin's start(): nothing to wait for yet
                pass
            self._thread = None

    def end(self, result: EpisodeResult) -> None:
        self._stop()
        self._raise_failure()
        n = len(self._actions)
        self.arrays = {key: column[:n] for key, column in self._columns.items()}
        self.arrays["actions"] = np.asarray(self._actions, dtype=np.uint8)
        self.arrays["rewards"] = np.asarray(self._rewards, dtype=np.float32)
        if self._tics and None not in self._tics:
            self.arrays.setdefault("tic", np.asarray(self._tics, dtype=np.int32))

    def close(self) -> None:
        self._stop()


def episode_counters(result: EpisodeResult) -> dict[str, float]:
    """End-of-episode counters stored in an episode's metadata: ``kills``, ``health``, ``tics``, ``dead`` and
    ``exited`` (0/1: the goal was reached, e.g. a generated map's exit)."""
    return {
        "kills": float(result.kills),
        "health": result.health,
        "tics": float(result.tics),
        "dead": float(result.dead),
        "exited": float(result.exited),
    }


def require_sensors(settings: GolemSettings) -> None:
    """Refuse to record episodes without observations.

    Raises:
        GolemError: ``brain.sensors`` is empty (e.g. ``--plugin no:visual`` alone).
    """
    if not settings.brain.sensors:
        raise GolemError(
            "no sensor is enabled (brain.sensors is empty): the episodes would hold no observations; "
            "enable one, e.g. --plugin visual"
        )


def continuing_seeds(store: TrajectoryStore, scenario: str, first: int, n: int) -> list[int]:
    """``n`` seeds from ``first``, or from after the largest seed stored or reserved for ``scenario`` if that is later.

    Recording again into a store then adds new episode starts instead of
    byte-identical copies of the old ones; the seeds are reserved in the
    store's write transaction (:meth:`TrajectoryStore.reserve_seeds`), so
    recorders running at once on one store each get their own.
    """
    return store.reserve_seeds(scenario, first, n)


@contextmanager
def _interrupts_deferred() -> Iterator[None]:
    """Hold a Ctrl-C (SIGINT) that arrives inside the block until it ends, then raise it.

    Around writing an episode and counting it, so an interrupt during the
    commit cannot leave an episode stored but uncounted. Outside the main
    thread (where no handler can be installed) the block runs as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


def _episodes_in_process(
    settings: GolemSettings, registry: Registry, plan: RecordPlan, scenario: str, seeds: Sequence[int]
) -> Iterator[Episode]:
    """The episodes of ``seeds``, played in this process: on ``scenario`` in one engine, or each on its own
    built map (``plan.worlds``) in an engine of its own."""
    sensors = build_sensors(settings, registry)
    expert: Expert | None = None
    if plan.demonstrator == "expert":
        assert plan.expert is not None
        expert = registry.get("experts", plan.expert).obj(settings_actions(settings), settings)
    learner = _load_learner(plan, registry) if plan.learner is not None else None
    play = _Player(settings, plan, sensors, expert, learner)
    if plan.worlds is None:
        yield from play.episodes(scenario, seeds, scenario)
        return
    worlds = plan.worlds
    generator = map_generator(settings, registry, worlds.generator, sampling=worlds.phase is not None)
    for seed in seeds:
        world = build_world(settings, registry, worlds, int(seed), generator=generator)
        check_world_expert(plan, registry, world)
        yield from play.episodes(world.scenario, [seed], worlds.scenario or world.scenario, world)


def check_world_expert(plan: RecordPlan, registry: Registry, world: GeneratedMap) -> None:
    """Refuse a built map the plan's expert does not play (e.g. a generated map without navigation).

    Raises:
        GolemError: one line naming the expert and the map.
    """
    if plan.demonstrator != "expert" or plan.expert is None:
        return
    cls = registry.get("experts", plan.expert).obj
    if not expert_plays(cls, world.scenario):
        if world.phase is None:
            what, hint = "variants", "record a variant with the expert of the scenario it varies"
        elif getattr(cls, "procedural", False):
            what, hint = (
                "generated maps",
                "its maps have no navigation sidecar (`golem procgen nav WAD` builds one from a map)",
            )
        else:
            what, hint = "generated maps", "use --expert explorer"
        raise GolemError(f"expert {plan.expert!r} does not play {what} such as {world.scenario}: {hint}")


@dataclass
class _Player:
    """Plays a plan's episodes on one scenario at a time, with the same demonstrator throughout."""

    settings: GolemSettings
    plan: RecordPlan
    sensors: list[Any]
    expert: Expert | None
    learner: Any

    def episodes(
        self, scenario: str, seeds: Sequence[int], stored_as: str, world: GeneratedMap | None = None
    ) -> Iterator[Episode]:
        """One engine on ``scenario`` plays ``seeds``; episodes are stored as of scenario ``stored_as``."""
        settings, plan, expert, learner = self.settings, self.plan, self.expert, self.learner
        human = plan.demonstrator == "human"
        configurers = [expert] if expert is not None else []
        dagger_extra = _dagger_extra(plan) if learner is not None else {}
        tags = list(plan.tags) + ([t for t in plan.worlds.episode_tags() if t not in plan.tags] if world else [])
        with Session(
            settings, self.sensors, scenario=scenario, visible=human, spectator=human, configurers=configurers
        ) as session:
            policy: Policy = expert if expert is not None else HumanPolicy()
            if learner is not None:
                learner.check_session(session)
            max_steps = step_limit(stored_as, plan.max_steps)
            for seed in seeds:
                recorder = Recorder(max_steps)
                mixing = MixingPolicy(learner, policy, plan.beta, seed=int(seed)) if learner is not None else None
                result = run_episode(session, mixing or policy, seed, max_steps=max_steps, observers=[recorder])
                arrays, counters = recorder.arrays, episode_counters(result)
                if mixing is not None:
                    counters = {
                        **counters,
                        "executed_expert": mixing.executed_labeller,
                        "disagreements": mixing.disagreements,
                    }
                extra = ({"expert": plan.expert, **counters} if expert is not None else dict(counters)) | dagger_extra
                if world is not None:
                    extra["world"] = world.describe()
                meta = EpisodeMeta(
                    profile=settings.brain.profile,
                    action_names=list(session.action_names),
                    scenario=stored_as,
                    source="human" if human else ("recovery" if mixing is not None else "expert"),
                    sensors=list(settings.brain.sensors),
                    map=settings.game.doom_map,
                    seed=int(seed),
                    tags=tags,
                    terminated=result.terminated,
                    truncated=result.truncated,
                    sensor_settings=recorded_settings(self.sensors),
                    frame_skip=1 if human else int(settings.game.frame_skip),
                    extra=extra,
                )
                yield Episode(meta=meta, arrays=arrays, counters=counters)


def _load_learner(plan: RecordPlan, registry: Registry) -> Any:
    """The DAgger learner: the checkpoint as a live agent, with its calibrated press thresholds."""
    from golem.learning.checkpoints import read_metadata
    from golem.runtime.agent import load_agent, model_threshold

    assert plan.learner is not None
    metadata = read_metadata(plan.learner)
    return load_agent(plan.learner, registry, model_threshold(metadata))


def _dagger_extra(plan: RecordPlan) -> dict[str, Any]:
    """What a DAgger episode corrected: the learner checkpoint (path and SHA-256), β and the round."""
    from golem.learning.checkpoints import checkpoint_sha256

    assert plan.learner is not None
    return {
        "dagger_round": plan.dagger_round,
        "beta": plan.beta,
        "learner": plan.learner,
        "learner_sha256": checkpoint_sha256(plan.learner),
    }


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
    if registry is None:  # spawned: a fresh interpreter, logging unconfigured
        from golem.logs import configure_logging

        configure_logging(level="warning")

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

    Episodes are written in seed order, each in one transaction as soon as
    the ones before it are written, so an interruption (``KeyboardInterrupt``)
    keeps every completed episode and parallel workers give the same store as one.
    ``on_episode(episode_id, episode)`` is called after each write (progress).
    """
    require_sensors(settings)
    if plan.seeds:
        seeds = list(plan.seeds)
        store.reserve_seeds(scenario, min(seeds), max(seeds) - min(seeds) + 1, exact=True)
    else:  # asked for: game.seed + i, reproducible; reserved so that continuing recorders pass them by
        seeds = store.reserve_seeds(scenario, settings.game.seed, plan.episodes, exact=True)
    if plan.workers > 1 and plan.demonstrator == "human":
        raise GolemError("--workers applies to experts; a human records in one window")
    if plan.workers > 1 and (plan.learner is not None or plan.spawn):
        # A learner runs torch in the workers, or the caller trained before: spawn, never fork.
        source: Iterator[Episode] = run_pool(
            _worker,
            (settings.model_dump_json(), None, plan, scenario),
            seeds,
            plan.workers,
            start_method="spawn",
            what="recording",
        )
    elif plan.workers > 1:
        # Recording runs no tensor maths in this process, so workers may fork (fast, plugins inherited).
        source = run_pool(
            _worker,
            (settings.model_dump_json(), registry, plan, scenario),
            seeds,
            plan.workers,
            start_method="fork",
            what="recording",
        )
    else:
        source = _episodes_in_process(settings, registry, plan, scenario, seeds)
    rules = array_rules(registry)
    ids: list[int] = []
    started = time.perf_counter()
    # Workers finish out of order; episodes are written in seed order, so a store's ids (and the
    # training run built on them) do not depend on which engine was faster.
    slots: dict[int, list[int]] = {}
    for index, seed in enumerate(seeds):
        slots.setdefault(int(seed), []).append(index)
    pending: dict[int, Episode] = {}
    next_index = 0

    def write(episode: Episode) -> None:
        with _interrupts_deferred():  # stored, listed and reported together, or not at all
            eid = store.write_episode(episode.meta, episode.arrays, rules)
            ids.append(eid)
            if on_episode is not None:
                on_episode(eid, episode)

    try:
        for episode in source:
            pending[slots[int(episode.meta.seed)].pop(0)] = episode
            while next_index in pending:
                write(pending.pop(next_index))
                next_index += 1
    finally:
        source.close()  # stops workers and engines now, also on Ctrl-C
        for index in sorted(pending):  # interrupted: every completed episode is still kept
            write(pending.pop(index))
    log.info("record.done", episodes=len(ids), seconds=round(time.perf_counter() - started, 2))
    return ids
