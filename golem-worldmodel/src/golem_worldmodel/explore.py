"""The evolved controller as a collector: what an iterative round records (World Models §5, iterative training).

The first data are random play, so M has seen little of where a good
controller goes (standing in a corner, dodging late); a controller evolved
in that dream finds what M never saw. A round therefore plays the kept
controller in the real engine — the same recurrence as the evaluation
(:mod:`golem_worldmodel.real_runner`) — with exploration noise: on each tic,
with probability ``epsilon``, a uniformly random action is held
``hold_min..hold_max`` tics instead of the controller's (the recurrence
consumes the action actually played). Episodes go into the run's store
tagged ``wm-random`` (V and M train on every such episode), ``wm-controller``
and ``wm-round-<r>``; a round's collection resumes by counting its own tag.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import structlog
import torch
from pydantic import Field

from golem.data.store import TrajectoryStore
from golem.errors import GolemError
from golem.experts import Expert
from golem.registry import Registry
from golem.settings import ComponentSettings, GolemSettings, section, with_section
from golem.workflows.recording import Episode, RecordPlan
from golem_worldmodel.actions import button_table
from golem_worldmodel.collect import ROUND_TAG, TAG, RandomHolds, record_long_enough
from golem_worldmodel.presets import Preset

log = structlog.get_logger("golem_worldmodel.explore")

#: Every episode a round's controller played carries this tag (besides :data:`TAG` and :func:`round_tag`).
CONTROLLER_TAG = ROUND_TAG
EXPERT_NAME = "dream-controller"
#: Engine seeds of round ``r``'s episodes start at ``ROUND_SEEDS + r * ROUND_SEED_STRIDE`` (unseen by the
#: evaluation's 100,000+, the checks' 50,000+, calibration's 60,000+ and the round checks' 70,000+).
ROUND_SEEDS = 200_000
ROUND_SEED_STRIDE = 10_000


def round_tag(r: int) -> str:
    """The tag of round ``r``'s episodes."""
    return f"wm-round-{r}"


class DreamControllerSettings(ComponentSettings):
    """``experts.dream_controller``: the run whose V, M and controller play, and the exploration noise."""

    key = "experts.dream_controller"
    run: str = Field("", description="the world-model run folder (its vae and mdnrnn files)")
    controller: str = Field("", description="the controller file to play (default: the run's controller)")
    epsilon: float = Field(0.03, ge=0.0, le=1.0, description="chance per tic that a random action is held")
    hold_min: int = Field(1, ge=1, le=1000)
    hold_max: int = Field(10, ge=1, le=1000)
    screen_flashes: bool = Field(False, description="render the red damage flash, as the run's data were collected")


class DreamControllerPolicy(RandomHolds, Expert):
    """The run's controller on ``[z_t, h_pre_t]`` with ε-random holds, as an expert the recorder can run.

    Seeded from the engine's episode seed on the first tic, so an episode is reproducible from its stored seed.
    Not a reference expert: no scoreboard scores against it.
    """

    name = EXPERT_NAME
    scenarios = ("take_cover", "defend_the_center", "health_gathering")
    reference = False
    #: Plays a trained run's files (``experts.dream_controller.run``): the shared contract test cannot build it
    #: bare; golem-worldmodel's end-to-end test runs the contract on a trained run.
    needs_run = True
    settings_model = DreamControllerSettings

    def __init__(self, action_names: Sequence[str], settings: GolemSettings | None = None) -> None:
        from golem.builtin.visual import VisualSensor
        from golem_worldmodel.evolution import load_controller
        from golem_worldmodel.paths import RunPaths
        from golem_worldmodel.real_runner import RealRecurrence
        from golem_worldmodel.training import controller_reader, load_rnn, load_vae, vae_reader

        super().__init__(action_names, settings)
        s = section(self.settings, DreamControllerSettings)
        if not s.run:
            raise GolemError("the dream-controller expert needs experts.dream_controller.run: a world-model run folder")
        torch.set_num_threads(1)  # one engine per worker process: more threads only contend
        paths = RunPaths(Path(s.run))
        controller = Path(s.controller) if s.controller else paths.controller
        reader = controller_reader(paths, controller)
        self.vae, rnn = load_vae(vae_reader(paths, reader)), load_rnn(reader)
        self.policy, _ = load_controller(controller, "mean")
        self.recurrence = RealRecurrence(rnn)
        self.sensor = VisualSensor(self.settings)
        self.table = button_table(action_names)
        self._holds(s.hold_min, s.hold_max, s.screen_flashes, chance=s.epsilon)
        self.random_tics = 0

    def reset(self, game: Any) -> None:
        super().reset(game)
        self.recurrence.reset()

    @torch.no_grad()
    def act(self, game: Any, state: Any) -> list[int]:
        from golem_worldmodel.vae import frames_to_input

        frame = self.sensor.extract(state)  # uint8 [3, 64, 64]
        mu, _ = self.vae.encode(frames_to_input(torch.from_numpy(frame[None].copy())))
        action = self.policy(self.recurrence.observe(mu))
        random_action = self.held(game)
        if random_action is not None:
            self.random_tics += 1
            action = torch.tensor([random_action])
        self.recurrence.advance(action)
        return [int(b) for b in self.table[int(action[0])]]


def round_episodes(store: TrajectoryStore, scenario: str, r: int) -> list[Any]:
    """Round ``r``'s stored episodes of ``scenario``."""
    tag = round_tag(r)
    return [i for i in store.episodes() if tag in i.meta.tags and i.meta.scenario == scenario]


def collect_round(
    settings: GolemSettings,
    registry: Registry,
    run: Path,
    controller: Path,
    preset: Preset,
    scenario: str,
    r: int,
    on_episode: Callable[[int, Episode | None], None] | None = None,
) -> dict[str, Any]:
    """Top round ``r`` up to ``preset.round_episodes`` episodes of ``controller`` (with ε-random holds).

    Episodes shorter than ``preset.min_length`` are dropped, as the random ones are. Resumable: the round's
    stored episodes count, and their seeds are not played again. Workers are spawned (the caller has run
    torch). Returns ``kept``, ``existing``, ``dropped``, ``steps`` (the new episodes' tics).
    """
    from golem_worldmodel.paths import RunPaths

    paths = RunPaths(run)
    played = with_section(
        settings,
        DreamControllerSettings(
            run=str(run),
            controller=str(controller),
            epsilon=preset.explore_epsilon,
            hold_min=preset.hold_min,
            hold_max=preset.hold_max,
            screen_flashes=preset.screen_flashes,
        ),
    )
    first = ROUND_SEEDS + r * ROUND_SEED_STRIDE
    dropped = steps = 0
    with TrajectoryStore.open_or_create(paths.store) as store:
        stored = round_episodes(store, scenario, r)
        existing = kept = len(stored)
        next_seed = max([first - 1, *(int(i.meta.seed) for i in stored)]) + 1
        while kept < preset.round_episodes:
            want = preset.round_episodes - kept
            if next_seed + want > first + ROUND_SEED_STRIDE:
                break  # a controller whose episodes are nearly all too short: stop, do not run into the next round
            seeds = list(range(next_seed, next_seed + want))
            next_seed += want
            plan = RecordPlan(
                demonstrator="expert",
                expert=EXPERT_NAME,
                episodes=want,
                workers=min(preset.workers, want),
                seeds=seeds,
                tags=[TAG, CONTROLLER_TAG, round_tag(r)],
                max_steps=preset.max_steps,
                spawn=True,
            )
            got, lost, n = record_long_enough(
                played, registry, plan, store, scenario, preset.min_length, on_episode, before=kept
            )
            kept, dropped, steps = kept + got, dropped + lost, steps + n
    log.info("dream.round.collected", round=r, kept=kept, existing=existing, dropped=dropped, steps=steps)
    return {"kept": kept, "existing": existing, "dropped": dropped, "steps": steps}
