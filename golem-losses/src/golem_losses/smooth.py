"""``smooth``: binary cross-entropy with label smoothing.

Targets are pulled toward ½ by ε: y' = y · (1 − ε) + ε / 2, then

    L = −mean[ y' · log σ(z) + (1 − y') · log(1 − σ(z)) ]

``ε = 0`` is BCE. Stable at logits of ±100 through ``logsigmoid``.

Setting: ``loss.smooth.epsilon``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from pydantic import Field

from golem import hookimpl
from golem.settings import ComponentSettings, GolemSettings, section
from golem_losses.base import MultiLabelLoss


class SmoothBCELoss(MultiLabelLoss):
    """Label-smoothed BCE with smoothing ``epsilon`` in [0, 1)."""

    def __init__(self, epsilon: float = 0.1) -> None:
        super().__init__()
        if not 0.0 <= epsilon < 1.0:
            raise ValueError(f"label smoothing epsilon must be in [0, 1), got {epsilon}")
        self.epsilon = float(epsilon)

    def elementwise(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """``[..., A]`` → ``[..., A]``: BCE against the smoothed targets y(1 − ε) + ε/2."""
        soft = targets * (1.0 - self.epsilon) + self.epsilon / 2.0
        return -(soft * F.logsigmoid(logits) + (1.0 - soft) * F.logsigmoid(-logits))

    def extra_repr(self) -> str:
        return f"epsilon={self.epsilon}"


class SmoothSettings(ComponentSettings):
    """``loss.smooth``: the label smoothing."""

    key = "loss.smooth"
    epsilon: float = Field(0.1, ge=0.0, lt=1.0, description="label smoothing")


def build_smooth(settings: GolemSettings, n_actions: int) -> SmoothBCELoss:
    """The ``smooth`` loss from ``settings.loss.smooth``."""
    return SmoothBCELoss(epsilon=section(settings, SmoothSettings).epsilon)


@hookimpl
def register_losses(register) -> None:
    register("smooth", build_smooth, settings=SmoothSettings)
