"""A multiplayer match: several players, each in its own process with its own engine, in lockstep.

:func:`play_match` starts one process per local player (the first hosts
unless the match is joined), each running the one rollout loop
(:func:`golem.runtime.rollout.run_episode`) with its own policy, carried state
and sensors, on a :class:`LockstepSession` that hands the engine one tic per
pass of a :class:`golem_match.lockstep.TicBarrier` (whatever the player's
frame skip), and a :class:`TicLog` timing each decision. The calling process only watches:
it shows progress, notices a player that dies or a match that stops moving
(every wait has a timeout), calls the rest off, and makes sure no engine
outlives the match. Each player sends back its frags, deaths, tic log and,
when recording, its episode, which the caller writes into the store.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import structlog

from golem.errors import GolemError
from golem.runtime.bots import AddBots
from golem.runtime.netgame import (
    Address,
    Rules,
    check_port_free,
    host_args,
    host_port,
    join_args,
    time_limit_arg,
)
from golem.runtime.rollout import EpisodeResult, HumanPolicy, Observer, policy_name, run_episode
from golem.runtime.workers import die_with_parent
from golem_match.lockstep import MatchAborted, TicBarrier, episode_tics

log = structlog.get_logger(__name__)

Kind = Literal["model", "expert", "random", "human"]
#: Episode source stored for each kind of player.
SOURCE_OF: dict[str, str] = {"model": "agent", "random": "agent", "expert": "expert", "human": "human"}
#: Engine pids each player publishes in shared memory.
ENGINE_SLOTS = 4
#: Seconds a player that was called off gets to report and close its engine before it is killed.
ABORT_GRACE_S = 3.0


@dataclass(frozen=True)
class PlayerSpec:
    """One local player of a match.

    Attributes:
        name: its name in the game and the report (unique in the match).
        kind: ``model`` (a checkpoint), ``expert`` (a registered scripted expert), ``random`` or ``human``.
        ref: the checkpoint path (``model``) or the expert's name (``expert``).
        settings_json: the player's :class:`golem.settings.GolemSettings` as JSON (a model's carry its
            profile, sensors and sensor settings).
        threshold: a model's press threshold(s).
    """

    name: str
    kind: Kind
    ref: str | None
    settings_json: str
    threshold: float | list[float] = 0.5


@dataclass(frozen=True)
class MatchPlan:
    """What to play.

    Attributes:
        players: the local players; with ``join`` unset the first one hosts.
        slots: players in the whole match (local ones plus those who will join from elsewhere).
        bots: the engine's built-in bots added by the host.
        scenario, doom_map: the map (``cig``: a deathmatch map built for bots).
        rules: ``deathmatch`` or ``coop``.
        tics: match length in tics (35 per second): the local players' engines end the episode after
            exactly this many tics and the host sets the game's ``timelimit`` to end the map on the same tic,
            which ends the match for players who join from elsewhere; ``0`` (a joining command): the host's
            limit.
        frag_limit: end when a player reaches this many frags.
        port: the host's UDP port; ``None``: a random free one when every player starts here, else 5029
            (:func:`golem.runtime.netgame.host_port`).
        join: join the match hosted there instead of hosting.
        seed: engine seed.
        realtime: play at 35 tics/s of wall time (``ASYNC`` modes), as a person who joins needs.
        start_timeout: seconds for every engine to start and every player to join.
        stall_timeout: seconds without any player advancing a tic before the match is called off.
        record: send each player's episode back for the store.
        video: write the screens of player ``video_player`` (index into ``players``) to this file.
        tags: labels stored with recorded episodes.
        engine_log: append the engines' own output (netcode messages) to this file; ``None`` discards it.
        barrier: hold the local players' engines to one tic per pass of a :class:`TicBarrier` (``False``:
            the engine's netcode alone, as between machines — measured in ``bench/bench_match.py``).
    """

    players: list[PlayerSpec]
    slots: int
    bots: int = 0
    scenario: str = "cig"
    doom_map: str | None = None
    rules: Rules = "deathmatch"
    tics: int = 2100
    frag_limit: int | None = None
    port: int | None = None
    join: Address | None = None
    seed: int = 0
    realtime: bool = False
    start_timeout: float = 60.0
    stall_timeout: float = 10.0
    record: bool = False
    video: Path | None = None
    video_player: int = 0
    tags: list[str] = field(default_factory=list)
    engine_log: Path | None = None
    barrier: bool = True


@dataclass
class PlayerReport:
    """How one local player did.

    Attributes:
        name, kind, ref: as in its :class:`PlayerSpec`.
        slot: its player number in the game (1 = the host).
        frags, deaths: the engine's ``FRAGCOUNT`` / ``DEATHCOUNT`` at the end.
        kills: monsters killed (``KILLCOUNT``; cooperative play).
        tics: tics its engine advanced with the player alive (counted tic by tic, so a decision cut short by
            the end of the match counts the tics it held).
        decisions: decisions it made (one per ``game.frame_skip`` tics alive; a dead player presses USE one
            tic at a time until it respawns).
        decision_p50_ms, decision_p99_ms: its time to decide a tic (policy only, engine excluded).
        engine_pids: its engine's process ids (all gone when :func:`play_match` returns).
        episode_id: the stored episode, when recorded.
    """

    name: str
    kind: str
    ref: str | None
    slot: int
    frags: int
    deaths: int
    kills: int
    tics: int
    decisions: int
    decision_p50_ms: float
    decision_p99_ms: float
    engine_pids: list[int]
    episode_id: int | None = None


@dataclass
class MatchReport:
    """A played match.

    Attributes:
        players: the local players' reports, host first.
        bots: ``[{"slot", "frags"}]`` of the host's bots (empty when not hosting).
        game_tics: tics the game ran, from the episode's start to its end (the engine's tic counter,
            ``get_episode_time()``, less its value when the episode started).
        seconds: wall time from the first tic to the last.
        tics_per_second: ``game_tics / seconds``.
        lockstep: ``{"players", "advances", "max_tic_spread", "steps"}``: over the tics every local player's
            engine advanced (one per barrier pass: each tic of a held decision and every respawn press), the
            largest difference between two players' engine tics at the same pass (0 in lockstep) and the tic
            increments seen between passes (``[1]`` in lockstep).
        tic_log: per player ``{"tic": [...], "wall_ns": [...], "decide_ns": [...]}``: the engine's tic and the
            monotonic time before every tic its engine advanced, and each decision's duration.
    """

    scenario: str
    rules: str
    players: list[PlayerReport]
    bots: list[dict[str, int]]
    game_tics: int
    seconds: float
    tics_per_second: float
    lockstep: dict[str, Any]
    tic_log: dict[str, dict[str, list[int]]]

    def as_dict(self, *, tic_log: bool = False) -> dict[str, Any]:
        """JSON-ready; the per-tic log only with ``tic_log``."""
        out = asdict(self)
        if not tic_log:
            out.pop("tic_log")
        return out


# --- inside a player's process ------------------------------------------------------------


class TicLog:
    """Wraps a policy: how long each decision took, in nanoseconds (:attr:`decide_ns`)."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.name = policy_name(policy)
        self.decide_ns: list[int] = []
        if hasattr(policy, "label"):
            self.label = policy.label

    def reset(self, game: Any) -> None:
        self.policy.reset(game)

    def act(self, game: Any, state: Any) -> list[int] | None:
        started = time.perf_counter_ns()
        action = self.policy.act(game, state)
        self.decide_ns.append(time.perf_counter_ns() - started)
        return action


class _MatchConfig:
    """Configurer: the match's length, the mode (synchronous, or real time with a person), a window for a human.

    The host also gets the game's ``timelimit``, ending the map on the tic the episode time-out ends it
    (the engine's counter starts an episode at the scenario's start time, known once its config is loaded).
    """

    def __init__(self, tics: int, realtime: bool, human: bool, hosting: bool) -> None:
        self.tics, self.realtime, self.human, self.hosting = tics, realtime, human, hosting

    def configure(self, game: Any) -> None:
        import vizdoom as vzd

        if self.tics:
            game.set_episode_timeout(int(self.tics))
            if self.hosting:
                game.add_game_args(time_limit_arg(max(1, int(game.get_episode_start_time())) + int(self.tics)))
        if self.human:
            game.set_mode(vzd.Mode.ASYNC_SPECTATOR)
        elif self.realtime:
            game.set_mode(vzd.Mode.ASYNC_PLAYER)


class LockstepSession:
    """A player's session as the rollout loop sees it: the engine advances one tic per pass of ``pace``.

    A decision holds its buttons ``game.frame_skip`` tics and a dead player presses ``USE`` one tic at a
    time; if each advance passed the barrier once, players with different holds would pass it different
    numbers of times per tic and wait on each other for good. Here every call that advances the engine is
    split into single tics, each after one pass of ``pace``, so every engine steps exactly one tic per pass
    whatever the players' frame skips. Each tic updates the engine's state, so the episode's end (time or
    frag limit) is seen on the tic it happens, inside a hold too: the rest of the hold is dropped without
    passing the barrier, on the same tic for every player. Everything else is the wrapped
    :class:`golem.runtime.session.Session`'s.

    Args:
        session: the started session.
        pace: called before every tic (a :class:`TicBarrier`, or anything that logs or waits).

    Attributes:
        start_tic: the engine's tic counter when the episode started (``game.get_episode_time()``).
        alive_tics: tics the engine ran with the player alive before them (by the engine's counter).
    """

    def __init__(self, session: Any, pace: Callable[[], None]) -> None:
        self._session, self._pace = session, pace
        self.start_tic = 0
        self.alive_tics = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)

    def new_episode(self, seed: int | None = None) -> None:
        """Start the episode and note the engine's tic counter."""
        self._session.new_episode(seed)
        self.start_tic = int(self._session.game.get_episode_time())
        self.alive_tics = 0

    def act(self, action: Sequence[int], tics: int | None = None) -> float:
        """Hold ``action`` for ``tics`` tics (default ``game.frame_skip``), one barrier pass each; the reward summed."""
        hold = int(self._session.settings.game.frame_skip) if tics is None else int(tics)
        reward = 0.0
        for _ in range(hold):
            if self._finished():  # the match ended inside the hold: every player stops on this tic
                break
            reward += self._tic(lambda: self._session.act(action, 1))
        return reward

    def advance(self, tics: int = 1) -> None:
        """Advance ``tics`` tics without acting (a person drives), one barrier pass each."""
        for _ in range(int(tics)):
            if self._finished():
                break
            self._tic(lambda: self._session.advance(1))

    def _finished(self) -> bool:
        return bool(self._session.game.is_episode_finished())

    def _tic(self, advance: Callable[[], float | None]) -> float:
        """Pass ``pace``, advance the engine one call, count the tics it ran if the player was alive; the reward."""
        game = self._session.game
        alive, before = not game.is_player_dead(), int(game.get_episode_time())
        self._pace()
        reward = advance()
        if alive:  # the engine's counter: the netcode alone may run two tics in one call; the map's end reads 0
            after = int(game.get_episode_time())
            self.alive_tics += after - before if after > before else 1
        return float(reward or 0.0)


def _paced_by_session() -> None:
    """The rollout loop's ``pace``: nothing, :class:`LockstepSession` passes the barrier before every tic.

    Giving the loop a pace at all makes a dead player respawn through the session, one ``USE`` tic at a
    time, instead of ``respawn_player()``, which runs several tics on its own.
    """


def _policy(spec: PlayerSpec, settings: Any, registry: Any, seed: int) -> Any:
    if spec.kind == "model":
        from golem.runtime.agent import load_agent

        assert spec.ref is not None
        return load_agent(spec.ref, registry, spec.threshold)
    if spec.kind == "expert":
        from golem.workflows.recording import settings_actions

        return registry.get("experts", spec.ref).obj(settings_actions(settings), settings)
    if spec.kind == "random":
        from golem.runtime.random_policy import RandomPolicy
        from golem.workflows.recording import settings_actions

        return RandomPolicy(settings_actions(settings), seed=seed, p=0.3)
    return HumanPolicy()


def _engine_args(plan: MatchPlan, index: int, spec: PlayerSpec) -> list[str]:
    if plan.join is not None:
        return join_args(plan.join, name=spec.name)
    assert plan.port is not None, "play_match picks the port before any player starts"
    if index == 0:
        experts = any(p.kind == "expert" for p in plan.players)
        return host_args(
            plan.slots, plan.port, plan.rules, name=spec.name, frag_limit=plan.frag_limit, cheats_off=not experts
        )
    return join_args(Address("127.0.0.1", plan.port), name=spec.name)


def _player_main(
    parent: int, plan: MatchPlan, index: int, barrier: Any, progress: Any, engine_pids: Any, results: Any
) -> None:
    """A player's process: start its engine, play the match through the rollout loop, report."""
    die_with_parent(parent)
    from golem.logs import configure_logging

    configure_logging(level="warning")
    spec = plan.players[index]
    _route_engine_output(plan.engine_log)
    try:
        results.put(("done", index, _play(plan, index, spec, barrier, progress, engine_pids, results)))
        return
    except MatchAborted as exc:
        results.put(("aborted", index, str(exc)))
    except GolemError as exc:
        results.put(("error", index, str(exc)))
    except Exception as exc:  # a crash surfaces as one line in the caller
        results.put(("error", index, f"{spec.name}: {type(exc).__name__}: {exc}"))
    abort_barrier(barrier)  # nobody waits for a player that has stopped


def abort_barrier(barrier: Any, timeout: float = 1.0) -> None:
    """Break ``barrier`` so every waiting player raises, giving up after ``timeout`` seconds.

    A ``multiprocessing`` barrier is guarded by a semaphore; a player SIGKILLed while it held it leaves it
    locked for good, and ``abort()`` would block forever. The players stuck behind it are then killed by
    the caller after :data:`ABORT_GRACE_S`.
    """
    if barrier is None:
        return
    thread = threading.Thread(target=barrier.abort, name="golem-barrier-abort", daemon=True)
    thread.start()
    thread.join(timeout)


def _route_engine_output(path: Path | None) -> None:
    """Point this process's stdout and stderr, which its engine inherits, at ``path`` (or nowhere).

    The engine prints its netcode's progress ("Waiting for players", "Found p1") there; the player's own
    errors reach the caller through the results queue.
    """
    target = os.open(str(path) if path is not None else os.devnull, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    for fd in (1, 2):
        os.dup2(target, fd)
    os.close(target)


def _play(
    plan: MatchPlan, index: int, spec: PlayerSpec, barrier: Any, progress: Any, engine_pids: Any, results: Any
) -> dict[str, Any]:
    from vizdoom import GameVariable

    from golem.plugins import load_plugins
    from golem.runtime.session import Session
    from golem.runtime.video import VideoObserver, VideoWriter
    from golem.settings import GolemSettings
    from golem.workflows.recording import Recorder, build_sensors, episode_counters, recorded_settings

    settings = GolemSettings.model_validate_json(spec.settings_json)
    settings.game.start_timeout = plan.start_timeout
    registry = load_plugins().registry
    human = spec.kind == "human"
    policy = _policy(spec, settings, registry, plan.seed + index)
    wants_sensors = plan.record or spec.kind == "model"
    sensors = build_sensors(settings, registry) if wants_sensors else []
    hosting = plan.join is None and index == 0
    configurers: list[Any] = [_MatchConfig(plan.tics, plan.realtime, human, hosting)]
    if spec.kind == "expert":
        configurers.append(policy)
    try:
        session = Session(
            settings,
            sensors,
            scenario=plan.scenario,
            doom_map=plan.doom_map,
            seed=plan.seed,
            visible=human,
            configurers=configurers,
            extra_args=_engine_args(plan, index, spec),
        )
    except GolemError as exc:
        if "did not start within" in str(exc):
            where = (
                f"hosting {plan.slots} players on port {plan.port}" if hosting else f"joining {plan.join or plan.port}"
            )
            raise GolemError(
                f"{spec.name}: the match did not start within {plan.start_timeout:g}s ({where}); "
                + ("not every player joined" if hosting else "nobody answered: is a match hosted there?")
            ) from None
        raise
    with session:
        for k, pid in enumerate(sorted(session.engine_pids)[:ENGINE_SLOTS]):  # shared: read even if we are killed
            engine_pids[index * ENGINE_SLOTS + k] = pid
        results.put(("started", index, None))
        if spec.kind == "model":
            policy.check_session(session)
        timed = TicLog(policy)
        observers: list[Observer] = []
        if hosting and plan.bots:
            observers.append(AddBots(plan.bots))
        recorder = Recorder(plan.tics or None) if plan.record else None
        if recorder is not None:
            observers.append(recorder)
        writer = VideoWriter(plan.video) if plan.video is not None and plan.video_player == index else None
        if writer is not None:
            observers.append(VideoObserver(writer))
        pace = TicBarrier(barrier if not human else None, plan.stall_timeout, spec.name, session.game.get_episode_time)

        def step() -> None:  # the caller watches the shared counter (no message per tic)
            pace()
            progress[index] = pace.tic[-1]

        paced = LockstepSession(session, step)
        started = time.perf_counter()
        try:
            result = run_episode(paced, timed, plan.seed, observers=observers, pace=_paced_by_session)
        finally:
            if writer is not None:
                writer.close()
        seconds = time.perf_counter() - started
        game = session.game
        slot = int(game.get_game_variable(GameVariable.PLAYER_NUMBER)) + 1
        frags_by_slot = [
            int(game.get_game_variable(getattr(GameVariable, f"PLAYER{k}_FRAGCOUNT"))) for k in range(1, 17)
        ]
        out: dict[str, Any] = {
            "slot": slot,
            "frags": int(game.get_game_variable(GameVariable.FRAGCOUNT)),
            "deaths": int(game.get_game_variable(GameVariable.DEATHCOUNT)),
            "kills": result.kills,
            "tics": paced.alive_tics,
            "game_tics": episode_tics(int(game.get_episode_time()), pace.tic, paced.start_tic),
            "seconds": seconds,
            "frags_by_slot": frags_by_slot,
            "engine_pids": sorted(session.engine_pids),
            "tic": pace.tic,
            "wall_ns": pace.wall_ns,
            "decide_ns": timed.decide_ns,
            "decisions": len(timed.decide_ns),
            "episode": None,
        }
        if recorder is not None and recorder.arrays.get("actions") is not None and len(recorder.arrays["actions"]):
            out["episode"] = _episode(
                plan,
                spec,
                settings,
                session,
                sensors,
                result,
                recorder.arrays,
                recorded_settings(sensors),
                episode_counters(result) | {"frags": float(out["frags"]), "deaths": float(out["deaths"])},
            )
    return out


def _episode(
    plan: MatchPlan,
    spec: PlayerSpec,
    settings: Any,
    session: Any,
    sensors: Sequence[Any],
    result: EpisodeResult,
    arrays: dict[str, np.ndarray],
    sensor_settings: dict[str, Any],
    counters: dict[str, float],
) -> tuple[Any, dict[str, np.ndarray]]:
    from golem.data.store import EpisodeMeta

    meta = EpisodeMeta(
        profile=settings.brain.profile,
        action_names=list(session.action_names),
        scenario=plan.scenario,
        source=SOURCE_OF[spec.kind],  # type: ignore[arg-type]
        sensors=[s.name for s in sensors],
        map=plan.doom_map,
        seed=plan.seed,
        tags=[*plan.tags, "multiplayer", plan.rules],
        terminated=result.terminated,
        truncated=result.truncated,
        sensor_settings=sensor_settings,
        frame_skip=int(settings.game.frame_skip),
        extra={
            "player": spec.name,
            "kind": spec.kind,
            "ref": spec.ref,
            "match_slots": plan.slots,
            "bots": plan.bots,
            **counters,
        },
    )
    return meta, arrays


# --- in the caller ---------------------------------------------------------------------------


def _lockstep(logs: Sequence[dict[str, list[int]]]) -> dict[str, Any]:
    """Spread of the players' engine tics per advance and the increments between advances."""
    n = min((len(x["tic"]) for x in logs), default=0)
    if n == 0:
        return {"players": len(logs), "advances": 0, "max_tic_spread": None, "steps": []}
    tics = np.asarray([x["tic"][:n] for x in logs], dtype=np.int64)  # [P, n]
    spread = int((tics.max(axis=0) - tics.min(axis=0)).max())
    steps = sorted({int(s) for s in np.unique(np.diff(tics, axis=1))}) if n > 1 else []
    return {"players": len(logs), "advances": n, "max_tic_spread": spread, "steps": steps}


def _percentile_ms(values: Sequence[int], q: float) -> float:
    return round(float(np.percentile(np.asarray(values, dtype=np.float64) / 1e6, q)), 4) if values else 0.0


def _describe_exit(proc: Any) -> str:
    code = proc.exitcode
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


def _reap_engines(pids: set[int], timeout: float = 5.0) -> list[int]:
    """Make sure every engine pid is gone (their players' guards kill them; SIGKILL stragglers). Survivors."""
    from golem.runtime.engine_guard import ENGINE_COMM, is_alive

    def engine(pid: int) -> bool:
        try:
            with open(f"/proc/{pid}/comm") as fh:
                return fh.read().strip() == ENGINE_COMM and is_alive(pid)
        except OSError:
            return False

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = [p for p in pids if engine(p)]
        if not alive:
            return []
        if time.monotonic() > deadline - timeout / 2:
            for pid in alive:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        time.sleep(0.05)
    return [p for p in pids if engine(p)]


def play_match(
    plan: MatchPlan,
    on_progress: Callable[[int, int], None] | None = None,
    on_started: Callable[[], None] | None = None,
) -> tuple[MatchReport, list[tuple[Any, dict[str, np.ndarray]] | None]]:
    """Play ``plan``: one spawned process (and engine) per local player, watched until the end.

    Args:
        plan: the match.
        on_progress: ``(engine tic of the slowest local player, plan.tics)``, a few times a second.
        on_started: called once every local player's engine has started (all players joined).

    Returns:
        The :class:`MatchReport` and, per local player, its ``(EpisodeMeta, arrays)`` when recording.

    Raises:
        GolemError: the port is taken; a player failed to start, died (``SIGKILL``), failed or stopped
            advancing for ``plan.stall_timeout`` seconds — the others are called off and every engine is
            gone before this is raised (one line naming the player and the tic).
    """
    if not plan.players:
        raise GolemError("a match needs at least one local player")
    names = [p.name for p in plan.players]
    if len(set(names)) != len(names):
        raise GolemError(f"two players share a name: {', '.join(names)}")
    if plan.join is None:
        if plan.slots < len(plan.players):
            raise GolemError(f"--host {plan.slots} is fewer players than the {len(plan.players)} started here")
        plan = replace(plan, port=host_port(plan.port, all_local=plan.slots == len(plan.players)))
        assert plan.port is not None
        check_port_free(plan.port)
    ctx = mp.get_context("spawn")  # players run torch: never fork
    n = len(plan.players)
    barrier = ctx.Barrier(n) if n > 1 and plan.barrier else None
    progress = ctx.Array("q", n, lock=False)
    engine_pids = ctx.Array("q", n * ENGINE_SLOTS, lock=False)
    results: Any = ctx.Queue()
    parent = os.getpid()
    procs = [
        ctx.Process(
            target=_player_main,
            args=(parent, plan, i, barrier, progress, engine_pids, results),
            daemon=True,
            name=f"golem-player-{plan.players[i].name}",
        )
        for i in range(n)
    ]
    started: set[int] = set()
    done: dict[int, dict[str, Any]] = {}
    failure: str | None = None
    culprit: int | None = None  # the player whose death or error stopped the match
    aborted: dict[int, str] = {}
    t0 = time.monotonic()
    last_move, last_seen = t0, -1
    for proc in procs:
        proc.start()
    try:
        while len(done) + len(aborted) < n and failure is None:
            try:
                kind, index, payload = results.get(timeout=0.1)
            except queue.Empty:
                kind = None
            if kind == "started":
                started.add(index)
                if len(started) == n:
                    last_move = time.monotonic()
                    if on_started is not None:
                        on_started()
            elif kind == "done":
                done[index] = payload
            elif kind == "aborted":
                aborted[index] = payload
            elif kind == "error":
                failure, culprit = payload, index
                break
            now = time.monotonic()
            slowest = min(progress[i] for i in range(n))
            if slowest != last_seen:
                last_seen, last_move = slowest, now
                if on_progress is not None:
                    on_progress(slowest, plan.tics)
            for i, proc in enumerate(procs):
                if not proc.is_alive() and i not in done and i not in aborted and results.empty():
                    time.sleep(0.2)  # its last message may still be in flight
                    if results.empty():
                        culprit = i
                        failure = (
                            f"player {plan.players[i].name} ({plan.players[i].kind}) {_describe_exit(proc)} "
                            f"at tic {progress[i]}"
                        )
                        break
            if failure is not None:
                break
            if len(started) < n and now - t0 > plan.start_timeout + 15.0:
                failure = f"the match did not start within {plan.start_timeout:g}s"
            elif len(started) == n and now - last_move > plan.stall_timeout and len(done) < n:
                failure = (
                    f"the match stalled at tic {slowest}: no player advanced for {plan.stall_timeout:g}s "
                    "(a netcode deadlock or a player stuck in its engine)"
                )
        if failure is None and aborted:
            culprit, failure = next(iter(aborted.items()))
    finally:
        abort_barrier(barrier)
        deadline = time.monotonic() + (ABORT_GRACE_S if failure is not None else 10.0)
        for proc in procs:
            proc.join(timeout=max(0.0, deadline - time.monotonic()))
        for proc in procs:
            if proc.is_alive():
                proc.kill()
                proc.join(timeout=5)
        # Not from the queue: a player killed while sending leaves half a message there, and reading it blocks.
        survivors = _reap_engines({int(pid) for pid in engine_pids if pid > 0})
        if survivors:
            log.error("match_engines_survived", pids=survivors)
    if failure is not None:
        rest = [plan.players[i].name for i in range(n) if i not in done and i != culprit]
        ended = f"; {', '.join(rest)} called off" if rest else ""
        log.info("match_failed", reason=failure, seconds=round(time.monotonic() - t0, 2))
        raise GolemError(f"match stopped: {failure}{ended}; no engine is left running")
    return _report(plan, done)


def _report(plan: MatchPlan, done: dict[int, dict[str, Any]]) -> tuple[MatchReport, list[Any]]:
    players: list[PlayerReport] = []
    logs: dict[str, dict[str, list[int]]] = {}
    for i, spec in enumerate(plan.players):
        r = done[i]
        players.append(
            PlayerReport(
                name=spec.name,
                kind=spec.kind,
                ref=spec.ref,
                slot=r["slot"],
                frags=r["frags"],
                deaths=r["deaths"],
                kills=r["kills"],
                tics=r["tics"],
                decisions=r["decisions"],
                decision_p50_ms=_percentile_ms(r["decide_ns"], 50),
                decision_p99_ms=_percentile_ms(r["decide_ns"], 99),
                engine_pids=r["engine_pids"],
            )
        )
        logs[spec.name] = {"tic": r["tic"], "wall_ns": r["wall_ns"], "decide_ns": r["decide_ns"]}
    host = done[0] if plan.join is None else None
    bots: list[dict[str, int]] = []
    if host is not None and plan.bots:
        first = plan.slots  # bots take the slots after the players'
        bots = [{"slot": first + k + 1, "frags": host["frags_by_slot"][first + k]} for k in range(plan.bots)]
    seconds = max(r["seconds"] for r in done.values())
    game_tics = max(r["game_tics"] for r in done.values())
    report = MatchReport(
        scenario=plan.scenario,
        rules=plan.rules,
        players=players,
        bots=bots,
        game_tics=game_tics,
        seconds=round(seconds, 3),
        tics_per_second=round(game_tics / max(seconds, 1e-9), 1),
        lockstep=_lockstep([logs[p.name] for p in plan.players]),
        tic_log=logs,
    )
    episodes = [done[i]["episode"] for i in range(len(plan.players))]
    log.info("match_played", players=len(players), bots=len(bots), tics=game_tics, seconds=report.seconds)
    return report, episodes


__all__ = ["LockstepSession", "MatchPlan", "MatchReport", "PlayerReport", "PlayerSpec", "TicLog", "play_match"]
