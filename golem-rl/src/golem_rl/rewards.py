"""Reward scale: rewards divided by the running standard deviation of the discounted return.

Scenarios pay on very different scales (``basic``: −1 a tic and about +100 a kill;
``take_cover``: +1 a tic; ``defend_the_center``: +1 a kill), and a value head that starts
at zero learns returns of order 1 far better than returns of order 1,000. As Gymnasium's
``NormalizeReward`` (and cleanrl's PPO) does, each row keeps its discounted return
``G ← γ G + r`` (zeroed after an episode ends) and rewards are divided by the running
standard deviation of ``G``; they are not centred, so the sign of a reward is kept.
"""

from __future__ import annotations

from collections.abc import Callable

import torch


class ReturnScale:
    """The running scale of ``rows`` streams' discounted returns.

    Args:
        rows: parallel streams (segments per update on this rank).
        gamma: discount per decision.
        eps: added to the variance before the square root.
    """

    def __init__(self, rows: int, gamma: float, eps: float = 1e-8) -> None:
        self.gamma, self.eps = float(gamma), float(eps)
        self.returns = torch.zeros(rows, dtype=torch.float64)
        self.count, self.mean, self.var = 1e-4, 0.0, 1.0

    @property
    def scale(self) -> float:
        """The divisor of the rewards now: √(var + eps)."""
        return float((self.var + self.eps) ** 0.5)

    def __call__(
        self,
        rewards: torch.Tensor,
        dones: torch.Tensor,
        reduce: Callable[[torch.Tensor], torch.Tensor] | None = None,
    ) -> torch.Tensor:
        """``rewards[B, T]`` / the running return scale, after folding this update's returns into it.

        Args:
            rewards: ``[B, T]`` raw rewards.
            dones: ``[B, T]`` 1. where an episode ended.
            reduce: sums a tensor over the ranks (data-parallel runs), so every rank keeps the same scale.
        """
        seen = []
        r, d = rewards.double(), dones.double()
        for t in range(r.shape[1]):
            self.returns = self.returns * self.gamma + r[:, t]
            seen.append(self.returns.clone())
            self.returns = self.returns * (1.0 - d[:, t])
        g = torch.stack(seen, dim=1)
        moments = torch.stack([torch.tensor(float(g.numel()), dtype=torch.float64), g.sum(), (g * g).sum()])
        if reduce is not None:
            moments = reduce(moments)
        n, total, squares = (float(v) for v in moments)
        batch_mean = total / n
        batch_var = max(squares / n - batch_mean**2, 0.0)
        delta, merged = batch_mean - self.mean, self.count + n
        m2 = self.var * self.count + batch_var * n + delta**2 * self.count * n / merged
        self.mean, self.var, self.count = self.mean + delta * n / merged, m2 / merged, merged
        return (rewards / self.scale).float()


__all__ = ["ReturnScale"]
