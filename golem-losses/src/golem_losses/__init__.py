"""Golem's multi-label losses over action logits: ``bce``, ``focal``, ``asymmetric``, ``smooth``.

Each module is a plugin (an entry point in the ``golem`` group) that registers
one loss builder through ``register_losses``. A builder is called as
``builder(settings, n_actions)`` and returns an ``nn.Module`` mapping
``(logits[B, T, A], targets[B, T, A])`` to the scalar mean loss.
"""

from __future__ import annotations

from golem_losses.asymmetric import AsymmetricLoss
from golem_losses.bce import BCELoss
from golem_losses.focal import FocalLoss
from golem_losses.smooth import SmoothBCELoss

__all__ = ["AsymmetricLoss", "BCELoss", "FocalLoss", "SmoothBCELoss"]
