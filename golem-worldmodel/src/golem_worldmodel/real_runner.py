"""The controller in the real engine, with the dream's recurrence.

Per tic ``t`` (the same convention as :class:`golem_worldmodel.dream_env.DreamEnv`)::

    z_t      = encode(frame_t).mu                  the posterior mean, as dream starts use
    obs_t    = [z_t, h_pre_t]                      h_pre_0 = 0: nothing has happened before tic 0
    a_t      = controller(obs_t)
    engine   ← a_t for one tic
    h_pre_{t+1} = LSTM(h_pre_t, [z_t, a_t])

The survival of an episode is the number of tics played before death or the
``max_steps`` limit (take_cover's living reward is +1 per tic, so it equals
the episode return).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import structlog
import torch

from golem.builtin.visual import VisualSensor
from golem.runtime.rollout import Observer, run_episode
from golem.runtime.session import Session
from golem.settings import GolemSettings
from golem_worldmodel.actions import button_table
from golem_worldmodel.mdnrnn import MDNRNN
from golem_worldmodel.vae import ConvVAE, frames_to_input

log = structlog.get_logger("golem_worldmodel.real_runner")


class RealRecurrence:
    """The controller-input recurrence over real latents, one environment.

    ``observe(z_t)`` returns ``obs_t = [z_t, h_pre_t]`` (``[1, Z + H]``);
    ``advance(a_t)`` consumes ``(z_t, a_t)`` and makes ``h_pre_{t+1}``.
    """

    def __init__(self, rnn: MDNRNN) -> None:
        self.rnn = rnn.eval()
        self.reset()

    def reset(self) -> None:
        """``h_pre_0 = 0``: the start of a real episode."""
        self.state = self.rnn.initial_state(1)
        self.z: torch.Tensor | None = None

    def observe(self, z: torch.Tensor) -> torch.Tensor:
        """``z [1, Z]`` → ``obs [1, Z + H]``."""
        self.z = z
        return torch.cat([z, self.state[0][0]], dim=-1)

    @torch.no_grad()
    def advance(self, action: torch.Tensor) -> None:
        """Consume ``(z_t, a_t)`` (``action [1]`` int64)."""
        assert self.z is not None, "observe(z_t) before advance(a_t)"
        _, self.state = self.rnn.step(self.z, action.long(), self.state)


class ControllerPolicy:
    """The world model's controller (or, without one, uniform random discrete actions) as a rollout policy.

    Each tic it reads the frame through the session's visual sensor, encodes
    it (posterior mean), acts on ``[z_t, h_pre_t]`` and advances the
    recurrence; the discrete action becomes the profile's buttons through ``table``.
    """

    def __init__(
        self,
        vae: ConvVAE,
        rnn: MDNRNN,
        policy: Callable[[torch.Tensor], torch.Tensor] | None,
        sensor: VisualSensor,
        table: np.ndarray,
        rng: np.random.Generator,
    ) -> None:
        self.name = "controller" if policy is not None else "random"
        self.vae, self.policy, self.sensor, self.table, self.rng = vae.eval(), policy, sensor, table, rng
        self.recurrence = RealRecurrence(rnn)

    def reset(self, game: Any) -> None:
        """``h_pre_0 = 0``."""
        self.recurrence.reset()

    @torch.no_grad()
    def act(self, game: Any, state: Any) -> list[int]:
        """The buttons of this tic's discrete action."""
        if self.policy is None:
            a = torch.tensor([int(self.rng.integers(0, len(self.table)))])
        else:
            frame = self.sensor.extract(state)  # uint8 [3, 64, 64]
            mu, _ = self.vae.encode(frames_to_input(torch.from_numpy(frame[None].copy())))
            a = self.policy(self.recurrence.observe(mu))
            self.recurrence.advance(a)
        return [int(b) for b in self.table[int(a[0])]]


class ScreenFlashes:
    """A session configurer that renders the red damage flash (:attr:`Preset.screen_flashes`)."""

    def configure(self, game: Any) -> None:
        game.set_render_screen_flashes(True)


class FrameObserver(Observer):
    """Keeps every tic's stored frame (uint8 ``[3, 64, 64]``) of one episode."""

    def __init__(self, sensor: VisualSensor) -> None:
        self.sensor = sensor
        self.frames: list[np.ndarray] = []

    def before_tic(self, state: Any) -> None:
        self.frames.append(self.sensor.extract(state))


def play_real(
    settings: GolemSettings,
    vae: ConvVAE,
    rnn: MDNRNN,
    policy: Callable[[torch.Tensor], torch.Tensor] | None,
    episodes: int,
    scenario: str,
    seed: int = 10_000,
    max_steps: int = 2100,
    record_frames: bool = False,
    on_episode: Callable[[int, float], None] | None = None,
    screen_flashes: bool = False,
) -> dict[str, Any]:
    """Play ``episodes`` real episodes through the rollout loop; ``policy=None`` plays uniformly random discrete
    actions.

    ``screen_flashes`` renders the damage flash, as the run's data were collected (:attr:`Preset.screen_flashes`).

    Returns ``survival`` (list of tics per episode), ``dead`` (list of 0/1), and
    with ``record_frames`` the first episode's ``frames [T, 3, 64, 64]`` uint8.
    """
    sensor = VisualSensor(settings)
    rng = np.random.default_rng(seed)
    survival: list[int] = []
    dead: list[int] = []
    frames = FrameObserver(sensor)
    with Session(
        settings, [sensor], scenario=scenario, configurers=[ScreenFlashes()] if screen_flashes else ()
    ) as session:
        player = ControllerPolicy(vae, rnn, policy, sensor, button_table(session.action_names), rng)
        for ep in range(episodes):
            observers = [frames] if record_frames and ep == 0 else []
            result = run_episode(session, player, seed + ep, max_steps=max_steps, observers=observers)
            survival.append(result.tics)
            dead.append(int(result.dead))
            if on_episode is not None:
                on_episode(ep + 1, float(result.tics))
    log.info("dream.real.done", episodes=episodes, mean=float(np.mean(survival)), std=float(np.std(survival)))
    out: dict[str, Any] = {"survival": survival, "dead": dead}
    if record_frames:
        out["frames"] = np.stack(frames.frames) if frames.frames else np.zeros((0, 3, 64, 64), np.uint8)
    return out
