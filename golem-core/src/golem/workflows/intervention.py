"""Human DAgger: the model plays in a window, a person takes over with a hotkey, each take-over is stored.

The active model drives a visible game paced by the engine's clock
(``Mode.ASYNC_PLAYER``, 35 tics/s, no sleeps) through the one rollout loop.
While the person holds ``intervene.hotkey`` (LEFT SHIFT) the model's output is
suspended and the keys bound in ``intervene.bindings`` drive; the model still
sees every tic, so on release it takes over again with its carried state.

Each take-over becomes one episode in the store, ``source = "recovery"``,
written in one transaction when the person lets go (or the episode ends):

* with ``intervene.retroactive = "first-action"`` (the seed's rule) the last
  ``L`` autonomous tics before the take-over (a rolling ``collections.deque``,
  ``L`` = the model's training ``sequence_length``) come first, labelled with
  the person's first corrective buttons — the first tic of the take-over on
  which any button is pressed (all zeros if none ever is) — then the person's
  tics with the buttons they pressed: ``L + k`` steps;
* with ``"none"`` only the person's ``k`` tics.

Every sensor installed is recorded, not only those the model reads. The
metadata names the scenario, map and seed, the tic at which the take-over
began, and the checkpoint it corrected (path and SHA-256).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import structlog

from golem.errors import GolemError
from golem.runtime.rollout import EpisodeResult, Observer, Tic
from golem.sensors import Sensor

log = structlog.get_logger(__name__)

RETROACTIVE = ("first-action", "none")


class Intervener:
    """The policy: the model decides every tic; while the hotkey is held the person's keys are executed.

    Args:
        agent: the live model (:class:`golem.runtime.agent.Agent`), asked every tic so its state stays current.
        keyboard: anything with ``held(name)`` and ``buttons(action_names, bindings)``
            (:class:`golem.runtime.keyboard.Keyboard`).
        action_names: the profile's buttons.
        bindings: button → keys.
        hotkey: the key held to take over.

    Attributes:
        human: whether the person drove the last tic.
    """

    name = "intervention"

    def __init__(
        self, agent: Any, keyboard: Any, action_names: Sequence[str], bindings: Mapping[str, Sequence[str]], hotkey: str
    ) -> None:
        self.agent, self.keyboard, self.hotkey = agent, keyboard, hotkey
        self.action_names, self.bindings = tuple(action_names), dict(bindings)
        self.human = False

    def reset(self, game: Any) -> None:
        self.agent.reset(game)

    def act(self, game: Any, state: Any) -> list[int]:
        model = self.agent.act(game, state)
        self.human = bool(self.keyboard.held(self.hotkey))
        return self.keyboard.buttons(self.action_names, self.bindings) if self.human else model


@dataclass
class Segment:
    """One take-over being recorded: context tics first, then the person's."""

    start_tic: int
    steps: list[tuple[dict[str, np.ndarray], list[int], float]] = field(default_factory=list)
    context: int = 0


class InterventionRecorder(Observer):
    """Cuts every take-over of an episode into a recovery episode (see the module docstring).

    Args:
        intervener: the policy whose ``human`` flag says who drove each tic.
        sensors: every sensor to record (each reads the tic's state once).
        context: ``L``, the autonomous tics kept before a take-over.
        retroactive: ``first-action`` or ``none``.
        on_segment: called with ``(arrays, start_tic, context_tics)`` for each finished take-over:
            ``arrays`` holds ``actions`` uint8 ``[T, A]``, ``rewards`` float32 ``[T]``, ``tic``
            int32 ``[T]`` (the engine tic of each step) and one ``[T, *shape]`` array per sensor key.
    """

    def __init__(
        self,
        intervener: Intervener,
        sensors: Sequence[Sensor],
        context: int,
        retroactive: str,
        on_segment: Callable[[dict[str, np.ndarray], int, int], None],
    ) -> None:
        if retroactive not in RETROACTIVE:
            raise GolemError(f"intervene.retroactive must be one of {', '.join(RETROACTIVE)}, got {retroactive!r}")
        self.intervener, self.sensors = intervener, list(sensors)
        self.context, self.retroactive, self.on_segment = int(context), retroactive, on_segment
        self._recent: deque[tuple[dict[str, np.ndarray], list[int], float]] = deque(maxlen=max(self.context, 0))
        self._segment: Segment | None = None
        self._observed: dict[str, np.ndarray] = {}

    def begin(self, session: Any, seed: int) -> None:
        self._recent.clear()
        self._segment = None
        for sensor in self.sensors:
            sensor.reset()

    def before_tic(self, state: Any) -> None:
        self._observed = {s.key: s.extract(state) for s in self.sensors}
        tic = getattr(state, "tic", None)
        if tic is not None:  # the engine's clock: in real time a slow tic shows as a longer span
            self._observed["tic"] = np.asarray(tic, dtype=np.int32)

    def after_tic(self, tic: Tic) -> None:
        step = (self._observed, list(tic.executed), float(tic.reward))
        if self.intervener.human:
            if self._segment is None:  # the take-over starts: the deque's tics become its context
                context = list(self._recent) if self.retroactive == "first-action" else []
                self._segment = Segment(start_tic=tic.t, steps=context, context=len(context))
                self._recent.clear()
            self._segment.steps.append(step)
        else:
            self._flush()
            self._recent.append(step)

    def _flush(self) -> None:
        segment, self._segment = self._segment, None
        if segment is None or len(segment.steps) == segment.context:
            return
        actions = np.asarray([a for _, a, _ in segment.steps], dtype=np.uint8)
        if segment.context:  # the seed's retroactive correction, with the first buttons the person pressed
            human = actions[segment.context :]
            pressed = np.flatnonzero(human.any(axis=1))
            actions[: segment.context] = human[pressed[0]] if pressed.size else 0
        arrays = {key: np.stack([obs[key] for obs, _, _ in segment.steps]) for key in segment.steps[0][0]}
        arrays["actions"] = actions
        arrays["rewards"] = np.asarray([r for _, _, r in segment.steps], dtype=np.float32)
        self.on_segment(arrays, segment.start_tic, segment.context)

    def end(self, result: EpisodeResult) -> None:
        self._flush()

    def close(self) -> None:
        self._flush()  # interrupted mid take-over: what the person did so far is kept


@dataclass
class IntervenePlan:
    """What to run: the model, episodes, where."""

    model: Path
    episodes: int = 1
    scenario: str | None = None
    max_steps: int | None = None
    store: Path | None = None


def intervene(
    settings: Any,
    registry: Any,
    plan: IntervenePlan,
    *,
    on_intervention: Callable[[int, int], None] | None = None,
    on_episode: Callable[[EpisodeResult], None] | None = None,
) -> list[int]:
    """Play ``plan.episodes`` episodes of the model in a window, storing each take-over; returns the new episode ids.

    ``on_intervention(episode_id, steps)`` is called as each one is written.

    Raises:
        GolemError: no display, an unreadable keyboard, a model that does not fit the
            profile or sensors — one line.
    """
    from golem.data.arrays import array_rules
    from golem.data.store import EpisodeMeta, TrajectoryStore
    from golem.learning.checkpoints import checkpoint_sha256, read_metadata
    from golem.runtime.agent import load_agent, model_threshold
    from golem.runtime.keyboard import Keyboard
    from golem.runtime.rollout import run_episode
    from golem.runtime.session import Session
    from golem.scenarios import step_limit
    from golem.workflows.recording import build_sensors, recorded_settings, settings_actions

    cfg = settings.intervene
    bindings = {k: v for k, v in cfg.bindings.items() if k in settings_actions(settings)}  # others: unused here
    metadata = read_metadata(plan.model)
    L = int((metadata.get("training") or {}).get("sequence_length") or settings.training.window)
    agent = load_agent(plan.model, registry, model_threshold(metadata, settings.brain.activation))
    digest = checkpoint_sha256(plan.model)
    # every installed sensor is recorded, the model's among them
    names = list(dict.fromkeys([*settings.brain.sensors, *registry.names("sensors")]))
    sensors = build_sensors(
        settings.model_copy(update={"brain": settings.brain.model_copy(update={"sensors": names})}), registry
    )
    rules = array_rules(registry)
    scenario = plan.scenario or settings.game.scenario
    store_path = Path(plan.store) if plan.store is not None else settings.store_path()
    ids: list[int] = []
    keyboard = Keyboard()  # fails in one line without a display, before the store is touched
    with (
        TrajectoryStore.open_or_create(store_path) as store,
        keyboard,
        Session(settings, sensors, scenario=scenario, visible=True, realtime=True) as session,
    ):
        agent.check_session(session)
        intervener = Intervener(agent, keyboard, session.action_names, bindings, cfg.hotkey)
        for i in range(plan.episodes):
            seed = settings.game.seed + i

            def write(arrays: dict[str, np.ndarray], start_tic: int, context: int, seed: int = seed) -> None:
                meta = EpisodeMeta(
                    profile=settings.brain.profile,
                    action_names=list(session.action_names),
                    scenario=scenario,
                    source="recovery",
                    sensors=[s.name for s in sensors],
                    map=settings.game.doom_map,
                    seed=seed,
                    tags=["intervention"],
                    sensor_settings=recorded_settings(sensors),
                    frame_skip=1,
                    extra={
                        "intervention": True,
                        "start_tic": start_tic,
                        "context_tics": context,
                        "human_tics": int(len(arrays["actions"]) - context),
                        "retroactive": cfg.retroactive,
                        "model": str(plan.model),
                        "model_sha256": digest,
                    },
                )
                eid = store.write_episode(meta, arrays, rules)
                ids.append(eid)
                log.info("intervention.stored", episode=eid, steps=len(arrays["actions"]), start_tic=start_tic)
                if on_intervention is not None:
                    on_intervention(eid, len(arrays["actions"]))

            recorder = InterventionRecorder(intervener, session.sensors, L, cfg.retroactive, write)
            result = run_episode(
                session, intervener, seed, max_steps=step_limit(scenario, plan.max_steps), observers=[recorder]
            )
            if on_episode is not None:
                on_episode(result)
    return ids


__all__ = [
    "RETROACTIVE",
    "IntervenePlan",
    "InterventionRecorder",
    "Intervener",
    "Segment",
    "intervene",
]
