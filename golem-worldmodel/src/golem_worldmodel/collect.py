"""Random rollouts into a trajectory store, as World Models collected them.

The policy picks one of the three discrete actions (:mod:`golem_worldmodel.actions`)
uniformly and holds it for a uniform 1–10 tics; episodes shorter than
``min_length`` steps are dropped (deleted as soon as they are written). The
core's :func:`golem.workflows.recording.record` runs the engines in parallel worker
processes, the calling process being the single writer.
Resumable: episodes already in the store with the ``wm-random`` tag count
toward the target, and new seeds continue after the largest one stored.

Then ``probe_episodes`` more, tagged ``wm-probe`` as well, whose actions are
held ``probe_hold_min..probe_hold_max`` tics: where a held action leads (the
player at a wall, standing in the line of fire) is in M's data, not only in
its dreams.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import structlog
from pydantic import Field

from golem.data.store import TrajectoryStore
from golem.experts import Expert
from golem.registry import Registry
from golem.settings import ComponentSettings, GolemSettings, section, with_section
from golem.workflows.recording import Episode, RecordPlan, record
from golem_worldmodel.actions import N_ACTIONS, button_table
from golem_worldmodel.presets import Preset

log = structlog.get_logger("golem_worldmodel.collect")

TAG = "wm-random"
#: Second tag of the probe episodes (long holds); they carry :data:`TAG` too, so M trains on them.
PROBE_TAG = "wm-probe"
#: The episodes of ``golem dream iterate``'s rounds (:mod:`golem_worldmodel.explore`) carry this tag too.
ROUND_TAG = "wm-controller"
EXPERT_NAME = "random-hold"


class RandomHoldSettings(ComponentSettings):
    """``experts.random_hold``: how long a random action is held, in tics."""

    key = "experts.random_hold"
    hold_min: int = Field(1, ge=1, le=1000)
    hold_max: int = Field(10, ge=1, le=1000)
    screen_flashes: bool = Field(False, description="render the red damage flash (take_cover's config turns it off)")


class RandomHolds:
    """Uniformly random discrete actions, each held ``hold_min..hold_max`` tics, for an expert to play.

    The generator is seeded from the engine's episode seed on the first tic, so an
    episode is reproducible from its stored seed; ``screen_flashes`` renders the
    damage flash (configured before ``init()``).
    """

    hold_min: int
    hold_max: int
    screen_flashes: bool
    #: Chance per tic, when no action is held, that a new one is drawn (1: always).
    chance: float = 1.0

    def _holds(self, hold_min: int, hold_max: int, screen_flashes: bool, chance: float = 1.0) -> None:
        self.hold_min, self.hold_max = hold_min, max(hold_min, hold_max)
        self.screen_flashes, self.chance = screen_flashes, chance
        self._rng: np.random.Generator | None = None
        self._left = 0
        self._action = 0

    def configure(self, game: Any) -> None:
        if self.screen_flashes:
            game.set_render_screen_flashes(True)

    def reset(self, game: Any) -> None:
        self._rng = None
        self._left = 0

    def held(self, game: Any) -> int | None:
        """This tic's random action: the one being held, else (with probability :attr:`chance`) a new one held
        from now; ``None``: no random action this tic."""
        if self._rng is None:
            self._rng = np.random.default_rng(int(game.get_seed()))
        if self._left <= 0 and (self.chance >= 1.0 or self._rng.random() < self.chance):
            self._action = int(self._rng.integers(0, N_ACTIONS))
            self._left = int(self._rng.integers(self.hold_min, self.hold_max + 1))
        if self._left <= 0:
            return None
        self._left -= 1
        return self._action


class RandomHoldPolicy(RandomHolds, Expert):
    """Uniform random discrete action (noop / left / right), held for ``hold_min..hold_max`` tics.

    Seeded from the engine's episode seed on the first tic, so an episode is
    reproducible from its stored seed.
    """

    name = EXPERT_NAME
    scenarios = ("take_cover", "defend_the_center", "health_gathering")
    #: The world model's collector, not an expert a scoreboard scores against.
    reference = False
    settings_model = RandomHoldSettings

    def __init__(self, action_names: Sequence[str], settings: GolemSettings | None = None) -> None:
        super().__init__(action_names, settings)
        hold = section(self.settings, RandomHoldSettings)
        self._holds(hold.hold_min, hold.hold_max, hold.screen_flashes)
        self.table = button_table(action_names)

    def act(self, game: Any, state: Any) -> list[int]:
        action = self.held(game)
        assert action is not None  # chance 1: an action is always held
        return [int(b) for b in self.table[action]]


def collected(store: TrajectoryStore, scenario: str, min_length: int = 1, probes: bool = False) -> tuple[int, int]:
    """``(episodes of at least min_length steps, largest seed)`` of this pipeline's rollouts of ``scenario`` in
    ``store``.

    ``probes`` counts the probe episodes instead of the random ones; the largest seed is over both. Episodes an
    iterative round's controller played (:data:`ROUND_TAG`) count toward neither.
    """
    infos = [i for i in store.episodes() if TAG in i.meta.tags and i.meta.scenario == scenario]
    seeds = [int(i.meta.seed) for i in infos if i.meta.seed is not None]
    infos = [
        i
        for i in infos
        if i.length >= min_length and (PROBE_TAG in i.meta.tags) == probes and ROUND_TAG not in i.meta.tags
    ]
    return len(infos), (max(seeds) if seeds else -1)


def record_long_enough(
    settings: GolemSettings,
    registry: Registry,
    plan: RecordPlan,
    store: TrajectoryStore,
    scenario: str,
    min_length: int,
    on_episode: Callable[[int, Episode | None], None] | None = None,
    before: int = 0,
) -> tuple[int, int, int]:
    """Record ``plan`` into ``store``, deleting at once every episode shorter than ``min_length`` steps.

    ``on_episode(kept, episode_or_None)`` follows each finished episode (``None``: dropped), ``kept`` counting
    from ``before``. Returns ``(kept, dropped, steps)`` of this recording (steps: the kept episodes' tics).
    """
    kept = dropped = steps = 0

    def written(eid: int, episode: Episode) -> None:
        nonlocal kept, dropped, steps
        n = len(episode.arrays["actions"])
        if n < min_length:
            store.delete([eid])
            dropped += 1
            if on_episode is not None:
                on_episode(before + kept, None)
            return
        kept += 1
        steps += n
        if on_episode is not None:
            on_episode(before + kept, episode)

    record(settings, registry, plan, store, scenario, on_episode=written)
    return kept, dropped, steps


def collect(
    settings: GolemSettings,
    registry: Registry,
    store_path: Path,
    preset: Preset,
    scenario: str,
    seed: int = 0,
    on_episode: Callable[[int, Episode | None], None] | None = None,
) -> dict[str, Any]:
    """Fill ``store_path`` with ``preset.episodes`` random rollouts of ``scenario`` (at least ``min_length`` steps).

    ``on_episode(kept, episode_or_None)`` is called after every finished
    episode (``None`` for a dropped one). Returns counts: ``kept``, ``dropped``,
    ``existing``, ``steps``.
    """
    phases = [(False, preset.episodes, preset.hold_min, preset.hold_max, [TAG])]
    if preset.probe_episodes:
        phases.append((True, preset.probe_episodes, preset.probe_hold_min, preset.probe_hold_max, [TAG, PROBE_TAG]))
    kept_all = dropped = steps = existing_all = 0
    with TrajectoryStore.open_or_create(store_path) as store:
        for probes, target, hold_min, hold_max, tags in phases:
            held = with_section(
                settings, RandomHoldSettings(hold_min=hold_min, hold_max=hold_max, screen_flashes=preset.screen_flashes)
            )
            existing, last_seed = collected(store, scenario, preset.min_length, probes=probes)
            next_seed = max(seed, last_seed + 1)
            kept, dropped_here = existing, 0
            while kept < target:
                want = target - kept
                seeds = list(range(next_seed, next_seed + want))
                next_seed += want
                plan = RecordPlan(
                    demonstrator="expert",
                    expert=EXPERT_NAME,
                    episodes=want,
                    workers=min(preset.workers, want),
                    seeds=seeds,
                    tags=tags,
                    max_steps=preset.max_steps,
                )
                got, lost, n = record_long_enough(
                    held, registry, plan, store, scenario, preset.min_length, on_episode, before=kept_all + kept
                )
                kept, dropped_here, steps = kept + got, dropped_here + lost, steps + n
                if dropped_here > 20 * target:
                    break  # a scenario where random play never lasts min_length steps
            kept_all += kept
            existing_all += existing
            dropped += dropped_here
    log.info(
        "dream.collect.done", kept=kept_all, dropped=dropped, existing=existing_all, steps=steps, store=str(store_path)
    )
    return {"kept": kept_all, "dropped": dropped, "existing": existing_all, "steps": steps}
