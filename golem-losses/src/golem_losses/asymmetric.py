"""``asymmetric``: asymmetric loss (ASL, Ridnik et al., 2021) for multi-label actions.

With p = σ(z), a probability margin m (``clip``) and the shifted probability
p_m = max(p − m, 0) for negatives:

    L+ = (1 − p)^γ+ · log p
    L− = p_m^γ− · log(1 − p_m)
    L  = −mean[ y · L+ + (1 − y) · L− ]

the mean over every element. ``γ+ = γ− = 0`` with ``m = 0`` is BCE. Negatives
with p ≤ m contribute nothing (hard threshold on easy negatives).

Stable at logits of ±100: ``log p = logsigmoid(z)``; for m > 0,
``log(1 − p_m) = log(σ(−z) + m)`` (≥ log m) where p > m, else 0; for m = 0 it is
``logsigmoid(−z)``.

Settings: ``loss.asymmetric.gamma_neg``, ``gamma_pos``, ``clip``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from pydantic import Field

from golem import hookimpl
from golem.settings import ComponentSettings, GolemSettings, section
from golem_losses.base import MultiLabelLoss


class AsymmetricLoss(MultiLabelLoss):
    """ASL with focusing exponents ``gamma_neg``/``gamma_pos`` and probability margin ``clip``."""

    def __init__(self, gamma_neg: float = 4.0, gamma_pos: float = 1.0, clip: float = 0.05) -> None:
        super().__init__()
        if gamma_neg < 0 or gamma_pos < 0:
            raise ValueError(f"ASL gammas must be >= 0, got gamma_neg={gamma_neg}, gamma_pos={gamma_pos}")
        if not 0.0 <= clip < 1.0:
            raise ValueError(f"ASL clip must be in [0, 1), got {clip}")
        self.gamma_neg = float(gamma_neg)
        self.gamma_pos = float(gamma_pos)
        self.clip = float(clip)

    def elementwise(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """``[..., A]`` → ``[..., A]`` ASL terms (non-negative)."""
        log_p = F.logsigmoid(logits)
        log_q = F.logsigmoid(-logits)  # log(1 − p)
        pos = log_p if self.gamma_pos == 0.0 else torch.exp(self.gamma_pos * log_q) * log_p
        if self.clip == 0.0:
            log_1m_pm = log_q
            w_neg = torch.ones_like(logits) if self.gamma_neg == 0.0 else torch.exp(self.gamma_neg * log_p)
        else:
            p = torch.sigmoid(logits)
            shifted = p > self.clip
            # log(1 − (p − m)) = log(σ(−z) + m), computed without forming 1 − p.
            log_1m_pm = torch.where(shifted, torch.logaddexp(log_q, torch.full_like(log_q, math.log(self.clip))), 0.0)
            if self.gamma_neg == 0.0:
                w_neg = torch.ones_like(logits)
            else:
                # double where: no pow(0, γ) gradient (inf · 0 = nan) in the unselected branch
                p_m = torch.where(shifted, p - self.clip, 1.0)
                w_neg = torch.where(shifted, p_m.pow(self.gamma_neg), 0.0)
        neg = w_neg * log_1m_pm
        return -(targets * pos + (1.0 - targets) * neg)

    def extra_repr(self) -> str:
        return f"gamma_neg={self.gamma_neg}, gamma_pos={self.gamma_pos}, clip={self.clip}"


class AsymmetricSettings(ComponentSettings):
    """``loss.asymmetric``: the focusing exponents and the negatives' probability margin."""

    key = "loss.asymmetric"
    gamma_neg: float = Field(4.0, ge=0.0, le=10.0)
    gamma_pos: float = Field(1.0, ge=0.0, le=10.0)
    clip: float = Field(0.05, ge=0.0, lt=1.0, description="probability margin shifted off negatives")


def build_asymmetric(settings: GolemSettings, n_actions: int) -> AsymmetricLoss:
    """The ``asymmetric`` loss from ``settings.loss.asymmetric``."""
    cfg = section(settings, AsymmetricSettings)
    return AsymmetricLoss(gamma_neg=cfg.gamma_neg, gamma_pos=cfg.gamma_pos, clip=cfg.clip)


@hookimpl
def register_losses(register) -> None:
    register("asymmetric", build_asymmetric, settings=AsymmetricSettings)
