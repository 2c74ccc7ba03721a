"""Rollouts on many engines: worker processes step the engines, the learner steps the policy over all at once.

Each worker process runs one engine and plays episodes through the project's one rollout loop,
:func:`golem.runtime.rollout.run_episode`, with a :class:`RemotePolicy` as both the policy and an
observer: every decision it sends the learner the sensors' stored arrays (plus the previous
decision's reward — the scenario's and the shapers' — and whether it ended the episode), and
plays the buttons the learner answers. The learner's :class:`Actor` steps the policy once per
decision over every engine at once (a batch of ``rl.workers``, the recurrent state carried per
engine and zeroed where an episode starts), samples each button from its probability, and
keeps ``rl.segment`` decisions per engine as one :class:`Segment`. Episodes run across
segments; each segment stores the state it started from, so the update can re-run it exactly
(truncated BPTT over the segment). Between segments the engines wait for their next buttons:
no weights travel to the workers.

Why the policy is batched in the learner rather than copied into each worker: measured on this
2-core machine, one forward pass over both engines' frames costs less than two passes of one
(1.55 ms against 1.23 ms each); the batched rollout loop used 7–30 % less CPU time per frame in
every run of ``bench/bench_rl_throughput.py`` (its frames/s swung either way with the machine's
other load), and ``golem rl finetune`` built each way ran 15–37 % more frames/s batched
(``docs/research/2026-12-06-rl-finetuning.md``). With a GPU it is the only sensible placement.

Workers die with their parent (``PR_SET_PDEATHSIG``, as :mod:`golem.runtime.workers`'), ignore
Ctrl-C (the learner handles it and stops them), and every wait on them has a time-out.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from typing import Any

import numpy as np
import structlog
import torch

from golem.errors import GolemError
from golem.runtime.generated import WorldPlan
from golem.runtime.rollout import Observer, Tic

log = structlog.get_logger(__name__)

#: The first engine seed of the rollouts: far from recording (0…), tuning (5,000…), evaluation (10,000…) and
#: fine-tuning's held-out evaluation (:data:`golem_rl.selection.EVAL_START_SEED`).
ROLLOUT_START_SEED = 100_000
#: Seconds between the learner's checks that its workers are alive while it waits for them.
POLL_S = 1.0


@dataclass
class Step:
    """What a worker sends the learner before each decision.

    Attributes:
        worker: the worker's index on its rank (its row).
        observation: ``{sensor name: stored array}`` of the state to decide on.
        first: the decision begins an episode (its recurrent state starts at zero).
        elapsed: engine tics since the previous decision of the episode (1 at its start).
        reward: the previous decision's reward, the scenario's plus the shapers' (0 before the first).
        done: the previous decision ended its episode.
        frames: tics the previous decision held (0 before the first).
        episodes: ``EpisodeResult.as_dict()`` of the episode that ended with the previous decision.
    """

    worker: int
    observation: dict[str, np.ndarray]
    first: bool
    elapsed: float
    reward: float = 0.0
    done: bool = False
    frames: int = 0
    episodes: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Segment:
    """``T`` consecutive decisions of one engine (episodes may end and start inside).

    Attributes:
        worker: the worker's index on its rank (its row in every update).
        observations: ``{sensor name: [T + 1, *shape]}`` stored arrays (uint8 frames …); the last is the state
            after the last decision (the bootstrap).
        actions: uint8 ``[T, A]`` the buttons executed.
        rewards: float32 ``[T]`` the scenario's reward plus the shapers', per decision.
        dones: bool ``[T]`` the episode ended with this decision.
        starts: bool ``[T + 1]`` the decision begins an episode (its state starts at zero).
        timespans: float32 ``[T + 1]`` engine tics since the previous decision of the episode (1 at its start).
        hx: float32 ``[S]`` the policy's state before the first decision.
        frames: engine tics the decisions held.
        episodes: ``EpisodeResult.as_dict()`` of the episodes that ended in the segment.
    """

    worker: int
    observations: dict[str, np.ndarray]
    actions: np.ndarray
    rewards: np.ndarray
    dones: np.ndarray
    starts: np.ndarray
    timespans: np.ndarray
    hx: np.ndarray
    frames: int = 0
    episodes: list[dict[str, Any]] = field(default_factory=list)


class _Stop(Exception):
    """The worker is told to stop: unwinds the rollout loop from inside the policy."""


class RemotePolicy(Observer):
    """A worker's policy and observer in :func:`~golem.runtime.rollout.run_episode`: the learner decides.

    Args:
        conn: the worker's end of its pipe to the learner: it sends ``("step", Step)`` and receives a
            button list, or ``None`` (stop).
        sensors: ``(name, sensor)`` of the session's sensors the model reads.
        shaping: the run's weighted shapers (:class:`golem_rl.shapers.Shaping`; falsy: none).
        worker: the worker's index.
        hold: tics each decision holds its buttons (the frame skip).
        engine_timespans: the model integrates the engine's tics between decisions (``game.timespans``).
    """

    name = "rl"

    def __init__(
        self,
        conn: Any,
        sensors: list[tuple[str, Any]],
        shaping: Any,
        worker: int,
        hold: int = 1,
        engine_timespans: bool = True,
    ) -> None:
        self.conn, self.sensors, self.shaping, self.worker = conn, sensors, shaping, worker
        self.hold, self.engine_timespans = int(hold), engine_timespans
        self._game: Any = None
        self._first = True
        self._last_tic: int | None = None
        self._before: dict[str, float] = {}
        self._reward, self._done, self._frames = 0.0, False, 0
        self._episodes: list[dict[str, Any]] = []

    def reset(self, game: Any) -> None:
        """An episode starts (or the player died): the next decision starts from a zero state."""
        self._first = True
        self._last_tic = None

    def act(self, game: Any, state: Any) -> list[int]:
        """Send the learner this state (and the previous decision's outcome); play the buttons it answers."""
        from golem_rl.shapers import read_variables

        tic = getattr(state, "tic", None)
        elapsed = 1.0
        if tic is not None:
            if self._last_tic is not None and self.engine_timespans:
                elapsed = float(max(int(tic) - self._last_tic, 1))
            self._last_tic = int(tic)
        step = Step(
            worker=self.worker,
            observation={name: sensor.extract(state) for name, sensor in self.sensors},
            first=self._first,
            elapsed=elapsed,
            reward=self._reward,
            done=self._done,
            frames=self._frames,
            episodes=self._episodes,
        )
        self._first, self._reward, self._done, self._frames, self._episodes = False, 0.0, False, 0, []
        self.conn.send(("step", step))
        buttons = self.conn.recv()  # the learner answers, or dies (and this process with it)
        if buttons is None:
            raise _Stop
        if self.shaping:
            self._before = read_variables(game, self.shaping.variables)
        return buttons

    def begin(self, session: Any, seed: int) -> None:
        self._game = session.game
        if self.shaping:  # the first decision's "before" is read at the episode's start
            from golem_rl.shapers import read_variables

            self.shaping.begin()
            self._before = read_variables(self._game, self.shaping.variables)

    def after_tic(self, tic: Tic) -> None:
        reward = float(tic.reward)
        if self.shaping:
            from golem_rl.shapers import read_variables

            reward += self.shaping(self._before, read_variables(self._game, self.shaping.variables))
        self._reward, self._frames = reward, self.hold

    def end(self, result: Any) -> None:
        self._done = True
        self._episodes.append(result.as_dict())


class Actor:
    """The learner's side of the rollouts: the policy stepped over every engine at once, segments kept.

    Args:
        rows: engines (B).
        names: the model's sensor names, in order.
        rng: the generator of the sampling.
    """

    def __init__(self, rows: int, names: Sequence[str], rng: np.random.Generator) -> None:
        self.rows, self.names, self.rng = rows, list(names), rng
        self.hx: torch.Tensor | None = None
        self.pending: list[Step] | None = None  # the states the engines wait on, by worker

    def collect(
        self,
        model: torch.nn.Module,
        sensors: Sequence[Any],
        length: int,
        exchange: Callable[[list[list[int]]], list[Step]],
    ) -> list[Segment]:
        """``length`` decisions of every engine, played by ``model``; one :class:`Segment` per engine, by worker.

        Args:
            model: the policy (``step(inputs[B, *shape], hx[B, S], timespans[B])``).
            sensors: the model's sensors, in :attr:`names` order (their ``to_network``).
            length: decisions per segment (T).
            exchange: sends each engine its buttons and returns the steps that come back, by worker.
        """
        assert self.pending is not None, "Actor.collect before the engines' first states"
        if self.hx is None:
            self.hx = model.initial_state(self.rows)
        hx0 = self.hx.numpy().copy()
        observations: list[list[dict[str, np.ndarray]]] = [[] for _ in range(self.rows)]
        rewards = np.zeros((self.rows, length), dtype=np.float32)
        dones = np.zeros((self.rows, length), dtype=bool)
        starts = np.zeros((self.rows, length + 1), dtype=bool)
        spans = np.ones((self.rows, length + 1), dtype=np.float32)
        frames = [0] * self.rows
        episodes: list[list[dict[str, Any]]] = [[] for _ in range(self.rows)]
        chosen = []
        for t in range(length + 1):
            steps = self.pending
            for b, step in enumerate(steps):
                starts[b, t], spans[b, t] = step.first, step.elapsed
                if t == length:
                    observations[b].append(step.observation)  # the bootstrap: the next segment's first state
            if t == length:
                break
            for b, step in enumerate(steps):
                observations[b].append(step.observation)
            with torch.inference_mode():
                inputs = {
                    name: sensor.to_network(torch.from_numpy(np.stack([s.observation[name] for s in steps])))
                    for name, sensor in zip(self.names, sensors)
                }
                hx = model.reset_rows(self.hx, torch.from_numpy(starts[:, t]))
                logits, self.hx = model.step(inputs, hx, torch.from_numpy(spans[:, t]))
                probs = torch.sigmoid(logits.float()).numpy()
            buttons = (self.rng.random(probs.shape) < probs).astype(np.uint8)
            chosen.append(buttons)
            self.pending = exchange([row.tolist() for row in buttons])
            for b, step in enumerate(self.pending):
                rewards[b, t], dones[b, t] = step.reward, step.done
                frames[b] += step.frames
                episodes[b] += step.episodes
        actions = np.stack(chosen, axis=1)
        return [
            Segment(
                worker=b,
                observations={n: np.stack([o[n] for o in observations[b]]) for n in self.names},
                actions=actions[b],
                rewards=rewards[b],
                dones=dones[b],
                starts=starts[b],
                timespans=spans[b],
                hx=hx0[b],
                frames=frames[b],
                episodes=episodes[b],
            )
            for b in range(self.rows)
        ]


@dataclass(frozen=True)
class WorkerPlan:
    """What every rollout worker of a rank plays.

    Attributes:
        settings_json: the run's settings (``game.frame_skip`` is the decisions' hold).
        model_path: the cloned checkpoint (which sensors the policy reads; workers run no network).
        scenario: scenario name or ``.cfg``/``.wad`` path.
        max_steps: tics after which an episode is cut (``None``: the scenario's time-out).
        shapers: ``{shaper name: weight}`` (``rl.shapers``).
        bots: the engine's bots added to every episode (``rl.bots``); with bots, or on a multiplayer-only map,
            each engine hosts a deathmatch of its own player.
        seed: ``rl.seed``: the episodes' seeds derive from it.
        first_worker: the global index of this rank's worker 0 (``rank × workers``).
        stride: workers of the whole run (``world × workers``): global worker ``g`` plays seeds ``g``, ``g + stride``, …
        timeout: seconds any wait on an engine may last.
        world: where each episode plays when not on ``scenario``: a map built for its seed from a curriculum phase
            of a generator (:class:`golem.runtime.generated.WorldPlan`), the engine restarted on it; ``None``:
            every episode on ``scenario``.
    """

    settings_json: str
    model_path: str
    scenario: str
    max_steps: int | None
    shapers: dict[str, float]
    bots: int = 0
    seed: int = 0
    first_worker: int = 0
    stride: int = 1
    timeout: float = 300.0
    world: WorldPlan | None = None

    def episode_seed(self, worker: int, k: int) -> int:
        """The engine seed of episode ``k`` of this rank's worker ``worker``."""
        return ROLLOUT_START_SEED + self.seed * 1_000_000 + self.first_worker + worker + k * self.stride


def _worker_main(parent: int, index: int, plan: WorkerPlan, conn: Any) -> None:
    """A rollout worker process: tie its life to the learner's, then play until told to stop."""
    from golem.allocator import keep_freed_memory
    from golem.logs import configure_logging
    from golem.runtime.workers import die_with_parent

    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the learner's to handle; it then stops us
    keep_freed_memory()
    configure_logging(level="warning")
    try:
        _play(index, plan, conn)
    except (_Stop, EOFError, BrokenPipeError):  # told to stop, or the learner is gone
        pass
    except GolemError as exc:
        conn.send(("error", f"rollout worker {index}: {exc}"))
    except Exception as exc:  # a crash surfaces as one line in the learner
        conn.send(("error", f"rollout worker {index} failed: {type(exc).__name__}: {exc}"))


def _play(index: int, plan: WorkerPlan, conn: Any) -> None:
    """Start the engine and play episodes one after another, the learner deciding."""
    from golem.learning.checkpoints import read_metadata
    from golem.learning.modelspec import ModelSpec
    from golem.plugins import load_plugins
    from golem.profiles import PROFILES
    from golem.runtime.agent import check_compatible
    from golem.runtime.bots import AddBots, solo_game_args
    from golem.runtime.rollout import run_episode
    from golem.runtime.session import Session
    from golem.scenarios import resolve_scenario
    from golem.sensors import build_sensors
    from golem.settings import GolemSettings
    from golem_rl.shapers import build_shaping

    settings = GolemSettings.model_validate_json(plan.settings_json)
    registry = load_plugins().registry
    spec = ModelSpec.from_metadata(read_metadata(plan.model_path)["spec"], registry)
    sensors = build_sensors(settings, registry)
    check_compatible(spec, settings.brain.profile, PROFILES[settings.brain.profile], sensors)
    by_name = {s.name: s for s in sensors}
    policy = RemotePolicy(
        conn,
        [(name, by_name[name]) for name in spec.sensor_names],
        build_shaping(settings, registry, plan.shapers),
        index,
        hold=settings.game.frame_skip,
        engine_timespans=settings.game.timespans == "engine",
    )
    if plan.world is not None:  # a map of its own per episode: built for the seed, the engine restarted on it
        from golem.runtime.generated import build_world, map_generator

        builder = map_generator(settings, registry, plan.world.generator, sampling=plan.world.phase is not None)
        k = 0
        while True:
            seed = plan.episode_seed(index, k)
            built = build_world(settings, registry, plan.world, seed, generator=builder)
            with Session(settings, sensors, scenario=built.scenario) as session:
                run_episode(session, policy, seed, max_steps=plan.max_steps, observers=[policy])
            k += 1
    scenario = resolve_scenario(plan.scenario, settings.game.doom_map)
    network = solo_game_args(scenario, plan.bots, name=f"golem-rl-{index}")
    observers = [AddBots(plan.bots), policy] if plan.bots else [policy]
    with Session(settings, sensors, scenario=plan.scenario, extra_args=network) as session:
        k = 0
        while True:
            seed = plan.episode_seed(index, k)
            run_episode(session, policy, seed, max_steps=plan.max_steps, observers=observers)
            k += 1


class RolloutWorkers:
    """One rank's engines: worker processes that play what the learner's :class:`Actor` decides.

    Args:
        plan: what the workers play.
        workers: how many (one engine each).
        sensors: the model's sensors (their ``to_network``), in the model's order.
        rng: the sampling's generator.

    Use as a context manager: the workers start on entry (the engines started, their first states
    received) and stop on exit however the block ends; none outlives the learner.
    """

    def __init__(self, plan: WorkerPlan, workers: int, sensors: Sequence[Any], rng: np.random.Generator) -> None:
        self.plan, self.workers, self.sensors = plan, workers, list(sensors)
        self.actor = Actor(workers, [s.name for s in self.sensors], rng)
        self._ctx = mp.get_context("spawn")  # the learner has run tensor maths: no fork
        self._procs: list[Any] = []
        self._conns: list[Any] = []

    def __enter__(self) -> RolloutWorkers:
        parent = os.getpid()
        try:
            for i in range(self.workers):
                mine, theirs = self._ctx.Pipe()
                proc = self._ctx.Process(
                    target=_worker_main, args=(parent, i, self.plan, theirs), daemon=True, name=f"golem-rl-worker-{i}"
                )
                proc.start()
                theirs.close()
                self._procs.append(proc)
                self._conns.append(mine)
            self.actor.pending = self._receive("start its engine")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def collect(self, model: torch.nn.Module, length: int) -> list[Segment]:
        """``length`` decisions of every engine played by ``model``; one :class:`Segment` per engine, by worker.

        Raises:
            GolemError: a worker's error line, a worker that died, or one that did not answer within
                ``plan.timeout``.
        """
        return self.actor.collect(model, self.sensors, length, self._exchange)

    def _exchange(self, buttons: list[list[int]]) -> list[Step]:
        for conn, row in zip(self._conns, buttons):
            try:
                conn.send(row)
            except (BrokenPipeError, OSError):
                pass  # the worker is gone: _receive says so
        return self._receive("play a decision")

    def _receive(self, doing: str) -> list[Step]:
        got: dict[int, Step] = {}
        deadline = time.monotonic() + self.plan.timeout
        while len(got) < self.workers:
            waiting = [c for i, c in enumerate(self._conns) if i not in got]
            for conn in wait(waiting, timeout=POLL_S):
                index = self._conns.index(conn)
                try:
                    kind, payload = conn.recv()
                except (EOFError, OSError):
                    self._died(index)
                if kind == "error":
                    raise GolemError(payload)
                got[index] = payload
            if len(got) < self.workers:
                for i, proc in enumerate(self._procs):
                    if i not in got and not proc.is_alive() and not self._conns[i].poll():
                        self._died(i)
                if time.monotonic() > deadline:
                    raise GolemError(
                        f"{self.workers - len(got)} rollout worker(s) did not {doing} within "
                        f"{self.plan.timeout:g} s (rl.timeout)"
                    )
        return [got[i] for i in range(self.workers)]

    def _died(self, index: int) -> None:
        proc = self._procs[index]
        proc.join(timeout=1)
        raise GolemError(
            f"rollout worker {index} died (exit code {proc.exitcode}); the run stopped, the checkpoints written so "
            "far are kept"
        )

    def __exit__(self, *exc: Any) -> None:
        for conn in self._conns:
            try:
                conn.send(None)
            except (BrokenPipeError, OSError):
                pass
        deadline = time.monotonic() + 10.0
        for proc in self._procs:
            proc.join(timeout=max(0.1, deadline - time.monotonic()))
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=10)
        for conn in self._conns:
            conn.close()


__all__ = ["ROLLOUT_START_SEED", "Actor", "RemotePolicy", "RolloutWorkers", "Segment", "Step", "WorkerPlan"]
