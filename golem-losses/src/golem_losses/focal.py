"""``focal``: focal loss with logits (Lin et al., 2017), multi-label.

With p = σ(z), y ∈ {0, 1}, α a scalar or one weight per action and γ ≥ 0:

    L = −mean[ α · y · (1 − p)^γ · log p + (1 − α) · (1 − y) · p^γ · log(1 − p) ]

the mean running over every element (B · T · A). ``γ = 0, α = 0.5`` is exactly
half of BCE. Stable at logits of ±100: ``log p = logsigmoid(z)``,
``log(1 − p) = logsigmoid(−z)``, ``p^γ = exp(γ · logsigmoid(z))``.

Settings: ``loss.focal.alpha`` (a float, or a list with one value per action of
the profile) and ``loss.focal.gamma``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from pydantic import Field

from golem import hookimpl
from golem.errors import SettingsError
from golem.settings import ComponentSettings, GolemSettings, section
from golem_losses.base import MultiLabelLoss


class FocalLoss(MultiLabelLoss):
    """Focal loss; ``alpha`` broadcasts over the last (action) axis."""

    alpha: torch.Tensor

    def __init__(self, alpha: float | Sequence[float] = 0.25, gamma: float = 2.0) -> None:
        super().__init__()
        if gamma < 0:
            raise ValueError(f"focal gamma must be >= 0, got {gamma}")
        self.register_buffer("alpha", torch.as_tensor(alpha, dtype=torch.float32), persistent=False)
        self.gamma = float(gamma)

    def elementwise(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """``[..., A]`` → ``[..., A]`` focal terms (non-negative)."""
        log_p = F.logsigmoid(logits)
        log_q = F.logsigmoid(-logits)  # log(1 − p)
        if self.gamma == 0.0:
            w_pos = w_neg = torch.ones_like(logits)
        else:
            w_pos = torch.exp(self.gamma * log_q)  # (1 − p)^γ
            w_neg = torch.exp(self.gamma * log_p)  # p^γ
        alpha = self.alpha.to(device=logits.device, dtype=logits.dtype)
        return -(alpha * targets * w_pos * log_p + (1.0 - alpha) * (1.0 - targets) * w_neg * log_q)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha.tolist()}, gamma={self.gamma}"


class FocalSettings(ComponentSettings):
    """``loss.focal``: the focal loss's weights."""

    key = "loss.focal"
    alpha: float | list[float] = Field(0.25, description="positive weight, scalar or one per action")
    gamma: float = Field(2.0, ge=0.0, le=10.0, description="focusing exponent")


def build_focal(settings: GolemSettings, n_actions: int) -> FocalLoss:
    """The ``focal`` loss from ``settings.loss.focal``.

    Raises:
        SettingsError: ``loss.focal.alpha`` is a list whose length is not ``n_actions``.
    """
    cfg = section(settings, FocalSettings)
    alpha = cfg.alpha
    if isinstance(alpha, list) and len(alpha) != n_actions:
        raise SettingsError(
            f"loss.focal.alpha has {len(alpha)} values but the action profile has n_actions={n_actions}; "
            f"give one value per action or a single number"
        )
    return FocalLoss(alpha=alpha, gamma=cfg.gamma)


@hookimpl
def register_losses(register) -> None:
    register("focal", build_focal, settings=FocalSettings)
