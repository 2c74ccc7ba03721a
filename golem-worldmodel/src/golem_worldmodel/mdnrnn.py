"""The MDN-RNN (World Models' M): ``(z_t, a_t) → p(z_{t+1}), reward_t, done_t``.

Recurrence (the convention every other module relies on)::

    h_{t+1} = LSTM(h_t, [z_t, onehot(a_t)])          h_0 = 0 at an episode's first frame
    heads(h_{t+1}) → mixture over z_{t+1}, reward_t, done_logit_t

Label alignment, for a stored episode of ``T`` steps (frames ``0..T-1``,
action ``a_t`` taken on frame ``t``, ``rewards[t]`` the reward of that action):

* input ``t`` is ``(z_t, a_t)`` for ``t = 0..T-1``;
* the latent target of input ``t`` is ``z_{t+1}``, which exists for
  ``t = 0..T-2`` only; the last step has no next frame and is masked out of
  the mixture loss (``next_mask``);
* the reward target of input ``t`` is ``rewards[t]`` (the engine's reward for
  the tic ``t → t+1``);
* the done target of input ``t`` is 1 exactly when ``t = T-1`` and the player
  died: the death happened *during* ``t → t+1``. An episode cut by the time
  limit has no positive label.

Each latent dimension has its own mixture of ``K`` Gaussians, as in the paper.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


class MDNRNN(nn.Module):
    """LSTM + mixture-density, reward and done heads.

    Args:
        z_dim: latent size ``Z``.
        n_actions: discrete actions ``A`` (fed one-hot).
        hidden: LSTM units ``H``.
        gaussians: mixture components ``K`` per latent dimension.
    """

    def __init__(self, z_dim: int, n_actions: int, hidden: int = 512, gaussians: int = 5) -> None:
        super().__init__()
        self.z_dim, self.n_actions, self.hidden, self.gaussians = (
            int(z_dim),
            int(n_actions),
            int(hidden),
            int(gaussians),
        )
        self.lstm = nn.LSTM(self.z_dim + self.n_actions, self.hidden, batch_first=True)
        self.mdn = nn.Linear(self.hidden, 3 * self.z_dim * self.gaussians)
        self.reward = nn.Linear(self.hidden, 1)
        self.done = nn.Linear(self.hidden, 1)

    def initial_state(self, batch: int, device: torch.device | str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
        """Zero ``(h, c)``, each ``[1, B, H]``."""
        zeros = torch.zeros(1, batch, self.hidden, device=device)
        return zeros, zeros.clone()

    def inputs(self, z: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """``z [..., Z]`` and int ``actions [...]`` → ``[..., Z + A]``."""
        return torch.cat([z, F.one_hot(actions.long(), self.n_actions).to(z.dtype)], dim=-1)

    def heads(self, out: torch.Tensor) -> dict[str, torch.Tensor]:
        """LSTM outputs ``[..., H]`` → ``logit_pi, mu, log_sigma [..., Z, K]``, ``reward, done_logit [...]``."""
        return {
            **self.mixture(self.mdn(out)),
            "reward": self.reward(out)[..., 0],
            "done_logit": self.done(out)[..., 0],
        }

    def mixture(self, p: torch.Tensor) -> dict[str, torch.Tensor]:
        """The mixture head's raw output ``[..., 3·Z·K]`` → ``logit_pi, mu, log_sigma [..., Z, K]``."""
        p = p.unflatten(-1, (3, self.z_dim, self.gaussians))
        return {"logit_pi": p[..., 0, :, :], "mu": p[..., 1, :, :], "log_sigma": p[..., 2, :, :].clamp(-7.0, 5.0)}

    def advance(
        self, z: torch.Tensor, actions: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """The LSTM alone, one step: ``z [B, Z]``, ``actions [B]``, ``(h, c)`` → (output ``[B, H]``, ``(h', c')``)."""
        out, state = self.lstm(self.inputs(z, actions)[:, None], state)
        return out[:, 0], state

    def forward(
        self, z: torch.Tensor, actions: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor] | None = None
    ) -> tuple[dict[str, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]:
        """A sequence: ``z [B, T, Z]``, ``actions [B, T]`` → (heads ``[B, T, ...]``, final ``(h, c)``)."""
        out, state = self.lstm(self.inputs(z, actions), state)
        return self.heads(out), state

    def step(
        self, z: torch.Tensor, actions: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]
    ) -> tuple[dict[str, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]:
        """One step: ``z [B, Z]``, ``actions [B]``, ``(h, c) [1, B, H]`` → (heads ``[B, ...]``, ``(h', c')``).

        ``h'[0]`` is ``h_{t+1}``: the state that has consumed ``(z_t, a_t)``.
        """
        out, state = self.advance(z, actions, state)
        return self.heads(out), state


def mdn_nll(heads: dict[str, torch.Tensor], target: torch.Tensor) -> torch.Tensor:
    """Per-element negative log-likelihood of ``target [..., Z]`` under the mixture; ``[..., Z]`` nats."""
    log_pi = F.log_softmax(heads["logit_pi"], dim=-1)
    log_sigma = heads["log_sigma"]
    zt = target.unsqueeze(-1)
    log_n = -0.5 * ((zt - heads["mu"]) / log_sigma.exp()).pow(2) - log_sigma - LOG_SQRT_2PI
    return -torch.logsumexp(log_pi + log_n, dim=-1)


def sample_next(
    heads: dict[str, torch.Tensor],
    temperature: float = 1.0,
    generator: torch.Generator | None = None,
    noise: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> torch.Tensor:
    """Sample ``z_{t+1} [B, Z]`` from step heads at temperature ``τ``.

    The standard way (Ha & Schmidhuber): mixture logits divided by ``τ``,
    component standard deviations multiplied by ``√τ``. ``τ → 0`` approaches the
    most likely component's mean; ``τ > 1`` makes the dream more uncertain.
    ``noise = (u [B, Z] uniform in [0, 1), eps [B, Z] standard normal)``
    replaces the generator's draws (dreams that must share randomness).
    """
    tau = max(float(temperature), 1e-6)
    logit = heads["logit_pi"] / tau  # [B, Z, K]
    B, Z, K = logit.shape
    if noise is None:
        u = torch.rand((B, Z, 1), generator=generator, device=logit.device)
        eps = torch.randn((B, Z), generator=generator, device=logit.device)
    else:
        u, eps = noise
        u = u.reshape(B, Z, 1)
    # Inverse-CDF draw of one component per dim: k = #{j : cdf_j < u}.
    cdf = torch.softmax(logit, dim=-1).cumsum_(-1)
    k = (cdf < u).sum(-1, keepdim=True).clamp_(max=K - 1)
    mu = heads["mu"].gather(-1, k)[..., 0]
    sigma = heads["log_sigma"].gather(-1, k)[..., 0].exp() * math.sqrt(tau)
    return mu + sigma * eps


def rnn_loss(
    heads: dict[str, torch.Tensor],
    z_next: torch.Tensor,
    next_mask: torch.Tensor,
    reward: torch.Tensor,
    done: torch.Tensor,
    step_mask: torch.Tensor,
    done_pos_weight: float = 10.0,
    reward_weight: float = 1.0,
) -> dict[str, torch.Tensor]:
    """The three losses on a batch of sequences ``[B, T]``.

    Args:
        heads: :meth:`MDNRNN.forward` output.
        z_next: ``[B, T, Z]`` latent targets (``z_{t+1}``).
        next_mask: ``[B, T]`` 1 where ``z_{t+1}`` exists.
        reward, done: ``[B, T]`` targets of step ``t`` (see the module docstring).
        step_mask: ``[B, T]`` 1 on real (non-padding) steps.
        done_pos_weight: BCE weight of ``done = 1``; deaths are one step in ~200.

    Returns:
        ``total``, ``mdn`` (nats per latent dim), ``reward`` (MSE), ``done`` (weighted BCE).
    """
    nm = next_mask.float()
    sm = step_mask.float()
    mdn = (mdn_nll(heads, z_next).mean(-1) * nm).sum() / nm.sum().clamp(min=1)
    rew = ((heads["reward"] - reward) ** 2 * sm).sum() / sm.sum().clamp(min=1)
    bce = F.binary_cross_entropy_with_logits(
        heads["done_logit"],
        done.float(),
        reduction="none",
        pos_weight=torch.tensor(float(done_pos_weight), device=done.device),
    )
    dn = (bce * sm).sum() / sm.sum().clamp(min=1)
    return {"total": mdn + reward_weight * rew + dn, "mdn": mdn, "reward": rew, "done": dn}
