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


@torch.no_grad()
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
) -> dict[str, Any]:
    """Play ``episodes`` real episodes; ``policy=None`` plays uniformly random discrete actions each tic.

    Returns ``survival`` (list of tics per episode), ``dead`` (list of 0/1), and
    with ``record_frames`` the first episode's ``frames [T, 3, 64, 64]`` uint8.
    """
    vae.eval()
    sensor = VisualSensor(settings)
    rng = np.random.default_rng(seed)
    survival: list[int] = []
    dead: list[int] = []
    frames: list[np.ndarray] = []
    with Session(settings, [sensor], scenario=scenario) as session:
        table = button_table(session.action_names)
        rec = RealRecurrence(rnn)
        for ep in range(episodes):
            session.new_episode(seed + ep)
            rec.reset()
            t = 0
            while not session.episode_finished and t < max_steps:
                frame = session.observe()[sensor.key]
                if record_frames and ep == 0:
                    frames.append(frame)
                if policy is None:
                    a = torch.tensor([int(rng.integers(0, len(table)))])
                else:
                    mu, _ = vae.encode(frames_to_input(torch.from_numpy(frame[None].copy())))
                    a = policy(rec.observe(mu))
                    rec.advance(a)
                session.act([int(b) for b in table[int(a[0])]])
                t += 1
            survival.append(t)
            dead.append(int(session.is_player_dead))
            if on_episode is not None:
                on_episode(ep + 1, float(t))
    log.info("dream.real.done", episodes=episodes, mean=float(np.mean(survival)), std=float(np.std(survival)))
    out: dict[str, Any] = {"survival": survival, "dead": dead}
    if record_frames:
        out["frames"] = np.stack(frames) if frames else np.zeros((0, 3, 64, 64), np.uint8)
    return out
