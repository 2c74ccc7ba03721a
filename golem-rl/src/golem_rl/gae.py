"""Generalized advantage estimation (Schulman et al., 2016) over rollout segments.

Hand-written rather than TorchRL's ``generalized_advantage_estimate``: TorchRL 0.14.1 installs
beside torch 2.14.1 (it would not replace it), and gives the same advantages to the last bit,
but this loop is as fast or faster at the sizes a rollout has, and saves the workspace two
dependencies (torchrl, tensordict) for twelve lines. Measured on this 2-core machine (one
thread, median of 7 × 20 calls): B×T = 2×64: 0.37 ms here, 1.07 ms TorchRL (0.35 ms its
``vec_`` variant); 8×128: 0.83 / 2.05 / 0.92 ms; 16×256: 1.13 / 7.48 / 1.94 ms; a torch
loop over the same steps took 3.6–15.5 ms. An update's forward and backward passes take
seconds, so either is noise there.
"""

from __future__ import annotations

import numpy as np
import torch


def advantages(
    rewards: torch.Tensor, values: torch.Tensor, dones: torch.Tensor, gamma: float, lam: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """GAE advantages and the value targets of ``B`` segments of ``T`` decisions.

    Args:
        rewards: ``[B, T]`` reward of each decision (after any scaling).
        values: ``[B, T + 1]`` the value estimate of each decision's state, and of the state after the
            last one (the bootstrap).
        dones: ``[B, T]`` 1 where the episode ended with that decision (no bootstrap across it), else 0.
        gamma: discount per decision.
        lam: GAE λ (0: one-step TD errors, 1: Monte-Carlo returns minus the value).

    Returns:
        ``(advantages[B, T], returns[B, T])`` with ``returns = advantages + values[:, :T]``, float32.

    ``δ_t = r_t + γ V_{t+1} (1 − d_t) − V_t``, ``A_t = δ_t + γ λ (1 − d_t) A_{t+1}``.
    """
    r = rewards.detach().cpu().numpy().astype(np.float32)
    v = values.detach().cpu().numpy().astype(np.float32)
    alive = 1.0 - dones.detach().cpu().numpy().astype(np.float32)
    batch, steps = r.shape
    if v.shape != (batch, steps + 1) or alive.shape != (batch, steps):
        raise ValueError(f"values {v.shape} and dones {alive.shape} do not fit rewards {r.shape}")
    out = np.empty_like(r)
    last = np.zeros(batch, dtype=np.float32)
    for t in range(steps - 1, -1, -1):
        delta = r[:, t] + gamma * v[:, t + 1] * alive[:, t] - v[:, t]
        last = delta + gamma * lam * alive[:, t] * last
        out[:, t] = last
    adv = torch.from_numpy(out)
    return adv, adv + torch.from_numpy(v[:, :steps])


__all__ = ["advantages"]
