"""The policy's action distribution: one independent Bernoulli per button, from the head's logits.

The cloned head is multi-label (several buttons at once: strafe while firing), trained
with a per-button sigmoid, so the policy it defines is a product of Bernoullis:
``π(a | s) = Π_i σ(z_i)^{a_i} (1 − σ(z_i))^{1 − a_i}``. Rollouts sample each button
from its own probability; log-probabilities, entropies and KL divergences are sums over
the buttons. Everything is computed from log-sigmoids, so logits of any size stay finite,
and two equal logits give a KL of exactly 0.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def log_prob(logits: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    """``log π(a | s)``: ``logits[..., A]``, 0/1 ``actions[..., A]`` → ``[...]`` (nats)."""
    return -F.binary_cross_entropy_with_logits(logits, actions.to(logits.dtype), reduction="none").sum(-1)


def entropy(logits: torch.Tensor) -> torch.Tensor:
    """The policy's entropy: ``logits[..., A]`` → ``[...]`` (nats, summed over the buttons)."""
    p = torch.sigmoid(logits)
    return -(p * F.logsigmoid(logits) + (1.0 - p) * F.logsigmoid(-logits)).sum(-1)


def kl(logits_p: torch.Tensor, logits_q: torch.Tensor) -> torch.Tensor:
    """``KL(p ‖ q)`` of two products of Bernoullis: ``logits_p[..., A]``, ``logits_q[..., A]`` → ``[...]`` (nats).

    ``Σ_i p_i (log p_i − log q_i) + (1 − p_i)(log(1 − p_i) − log(1 − q_i))``; exactly 0 where the logits are equal.
    """
    p = torch.sigmoid(logits_p)
    on = F.logsigmoid(logits_p) - F.logsigmoid(logits_q)
    off = F.logsigmoid(-logits_p) - F.logsigmoid(-logits_q)
    return (p * on + (1.0 - p) * off).sum(-1)


def sample(logits: torch.Tensor, uniform: torch.Tensor) -> torch.Tensor:
    """Buttons drawn from ``logits[..., A]`` with the uniform draws ``uniform[..., A]`` in [0, 1): 0/1 uint8."""
    return (uniform < torch.sigmoid(logits)).to(torch.uint8)


__all__ = ["entropy", "kl", "log_prob", "sample"]
