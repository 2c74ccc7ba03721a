"""The shared shape of every Golem loss: an element-wise term averaged over all elements."""

from __future__ import annotations

from abc import ABC, abstractmethod

import torch
from torch import nn


class MultiLabelLoss(nn.Module, ABC):
    """A loss over independent binary action channels, mean-reduced.

    Subclasses implement :meth:`elementwise`; :meth:`forward` checks shapes and
    averages over every element (``B · T · A``).
    """

    @abstractmethod
    def elementwise(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Per-element loss ``[..., A]`` (non-negative) from logits and 0/1 targets of the same shape."""

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """``logits[B, T, A]`` (raw scores), ``targets[B, T, A]`` in {0, 1} → scalar mean loss.

        Any leading shape works as long as both tensors agree.
        """
        if logits.shape != targets.shape:
            raise ValueError(f"logits {tuple(logits.shape)} and targets {tuple(targets.shape)} differ in shape")
        return self.elementwise(logits, targets.to(logits.dtype)).mean()
