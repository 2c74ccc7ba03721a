"""World Models' C: one linear layer on ``obs_t = [z_t, h_pre_t]`` → a steering value → a discrete action.

``s = tanh(w · obs_t + b)``; ``s < -1/3`` → MOVE_LEFT (1), ``s > 1/3`` →
MOVE_RIGHT (2), otherwise stand still (0) — the Doom controller of the paper.
A candidate is the flat vector ``[w (Z + H), b]``, so a population is a
``[P, Z + H + 1]`` matrix and one batched matmul acts for every dream of
every candidate at once.
"""

from __future__ import annotations

import numpy as np
import torch

THRESHOLD = 1.0 / 3.0


def n_params(z_dim: int, hidden: int) -> int:
    """Parameters of one controller: ``Z + H`` weights and a bias."""
    return int(z_dim) + int(hidden) + 1


def steer_to_action(s: torch.Tensor) -> torch.Tensor:
    """Steering values in [-1, 1] → int64 discrete actions (0 noop, 1 left, 2 right)."""
    a = torch.zeros(s.shape, dtype=torch.long, device=s.device)
    a[s < -THRESHOLD] = 1
    a[s > THRESHOLD] = 2
    return a


def act_population(
    params: torch.Tensor, obs: torch.Tensor, rows: torch.Tensor | None = None, rollouts: int | None = None
) -> torch.Tensor:
    """Actions of ``P`` candidates, each on its own ``R`` dreams.

    Args:
        params: ``[P, D + 1]`` candidates (``D = Z + H``).
        obs: ``[P * R, D]`` controller inputs, candidate-major (rows ``p*R .. p*R+R-1``
            are candidate ``p``'s); or ``[n, D]`` for the dreams ``rows`` only.
        rows: indices (into ``P * R``) of the dreams ``obs`` belongs to; needs ``rollouts``.

    Returns:
        ``[P * R]`` (or ``[n]``) int64 actions.
    """
    if rows is None:
        P = params.shape[0]
        o = obs.reshape(P, -1, obs.shape[-1])
        s = torch.tanh(torch.einsum("prd,pd->pr", o, params[:, :-1]) + params[:, -1:])
        return steer_to_action(s.reshape(-1))
    if rollouts is None:
        raise ValueError("act_population needs rollouts with rows")
    w = params[rows // rollouts]  # [n, D + 1]: each dream's own candidate
    return steer_to_action(torch.tanh((obs * w[:, :-1]).sum(-1) + w[:, -1]))


class LinearController:
    """One candidate as a callable policy: ``obs [B, Z + H]`` → actions ``[B]``."""

    def __init__(self, params: np.ndarray | torch.Tensor, z_dim: int, hidden: int) -> None:
        p = torch.as_tensor(np.asarray(params, dtype=np.float32))
        if p.shape != (n_params(z_dim, hidden),):
            raise ValueError(f"controller needs {n_params(z_dim, hidden)} parameters, got {tuple(p.shape)}")
        self.params, self.z_dim, self.hidden = p, int(z_dim), int(hidden)

    def __call__(self, obs: torch.Tensor, rows: torch.Tensor | None = None) -> torch.Tensor:
        """``obs [n, Z + H]`` → int64 actions ``[n]`` (``rows`` is accepted and ignored: one controller for all)."""
        return steer_to_action(torch.tanh(obs @ self.params[:-1] + self.params[-1]))
