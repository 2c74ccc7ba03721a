"""``bce``: binary cross-entropy with logits.

    L = −mean[ y · log σ(z) + (1 − y) · log(1 − σ(z)) ]

with ``log σ(z)`` and ``log(1 − σ(z)) = log σ(−z)`` computed by ``logsigmoid``,
so logits of ±100 give finite values and gradients.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from golem import hookimpl
from golem.settings import GolemSettings
from golem_losses.base import MultiLabelLoss


class BCELoss(MultiLabelLoss):
    """Binary cross-entropy over action logits, mean over all elements."""

    def elementwise(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """``[..., A]`` → ``[..., A]``: −(y log σ(z) + (1 − y) log σ(−z))."""
        return -(targets * F.logsigmoid(logits) + (1.0 - targets) * F.logsigmoid(-logits))


def build_bce(settings: GolemSettings, n_actions: int) -> BCELoss:
    """The ``bce`` loss; it has no settings."""
    return BCELoss()


@hookimpl
def register_losses(register) -> None:
    register("bce", build_bce)
