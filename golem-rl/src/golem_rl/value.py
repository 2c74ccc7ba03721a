"""The value head beside the cloned policy, and one pass of both over rollout segments.

The value head is one linear layer on the recurrent core's outputs, the same features the
policy's head maps to logits (``model.features``, golem-models' ``DoomNet``), so the critic
shares the cortices and the core with the actor. It is not part of the policy's checkpoint:
play, evaluation and tuning load the fine-tuned file like any other model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch
from torch import nn

from golem.errors import GolemError


class ValueHead(nn.Module):
    """``Linear(features, 1)``: core outputs ``[B, T, H]`` → state values ``[B, T]`` (normalised return units).

    Starts at zero, so the first advantages are the returns themselves and the value loss
    does not push random gradients into the shared core.
    """

    def __init__(self, features: int) -> None:
        super().__init__()
        self.linear = nn.Linear(features, 1)
        nn.init.zeros_(self.linear.weight)
        nn.init.zeros_(self.linear.bias)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.linear(features).squeeze(-1)


def check_model(model: nn.Module, name: str) -> int:
    """The width ``H`` of ``model``'s core outputs; a one-line error unless it exposes what fine-tuning needs.

    Raises:
        GolemError: the model has no ``features(inputs, hx, timespans, starts)`` and ``head`` (a
            model plugin other than golem-models' ``cfc``/``lstm``).
    """
    head = getattr(model, "head", None)
    if not callable(getattr(model, "features", None)) or not isinstance(getattr(head, "in_features", None), int):
        raise GolemError(
            f"model {name!r} cannot be fine-tuned: it needs features(inputs, hx, timespans, starts) and a linear "
            "head (as golem-models' cfc and lstm have)"
        )
    return int(head.in_features)


@torch.no_grad()
def centre_head(model: nn.Module, thresholds: float | Sequence[float]) -> None:
    """Shift ``model.head``'s biases by ``−logit(threshold)`` per button (in place).

    A button the source presses when ``σ(z) > τ`` is then pressed when ``σ(z') > 0.5``: the sampled policy
    presses it more often than not exactly where the source's play does, and its mode is that play.

    Raises:
        GolemError: a threshold outside (0, 1), or not one per button.
    """
    bias = model.head.bias
    tau = torch.as_tensor(thresholds, dtype=bias.dtype)
    if tau.dim() == 0:
        tau = tau.expand(bias.shape)
    if tau.shape != bias.shape or not bool(((tau > 0) & (tau < 1)).all()):
        raise GolemError(
            f"centring needs one press threshold in (0, 1) per button ({bias.numel()}), got {tau.tolist()}"
        )
    bias.sub_(torch.logit(tau))


@torch.no_grad()
def sharpen_head(model: nn.Module, factor: float) -> None:
    """Multiply ``model.head``'s weights and biases by ``factor`` (in place): every logit scales by it, so each
    button's probability moves away from 0.5 and its likelier value — the mode, and play at 0.5 — stays."""
    model.head.weight.mul_(factor)
    model.head.bias.mul_(factor)


def policy_and_value(
    model: nn.Module,
    value_head: ValueHead | None,
    inputs: Mapping[str, torch.Tensor],
    hx: torch.Tensor,
    starts: torch.Tensor,
    timespans: torch.Tensor,
    *,
    detach_value: bool = False,
) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor]:
    """The policy's logits and the values over segments, from each segment's initial state.

    Args:
        model: the policy network (``features`` + ``head``).
        value_head: the critic (``None``: no values, e.g. for the frozen cloned policy).
        inputs: ``{sensor name: [B, T, *shape]}`` float network inputs.
        hx: ``[B, S]`` the state before each segment's first decision.
        starts: ``[B, T]`` bool, decisions that begin an episode (the state is zeroed before them).
        timespans: ``[B, T]`` engine tics since each row's previous decision (1 at an episode's start).
        detach_value: the value head's gradient stops at the features (value warm-up: the policy stays).

    Returns:
        ``(logits[B, T, A], values[B, T] or None, hx[B, S])``.
    """
    features, hx = model.features(inputs, hx, timespans, starts)
    logits = model.head(features)
    if value_head is None:
        return logits, None, hx
    values = value_head(features.detach() if detach_value else features)
    return logits, values, hx


__all__ = ["ValueHead", "check_model", "policy_and_value"]
