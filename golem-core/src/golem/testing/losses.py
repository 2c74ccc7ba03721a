"""Contract checks for loss plugins: ``assert_loss_contract(builder)``.

A loss builder is ``builder(settings, n_actions) -> nn.Module`` whose forward maps
``(logits[B, T, A], targets[B, T, A] in {0, 1})`` to a scalar mean loss. Plugin
authors call :func:`assert_loss_contract` from their own tests.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from golem.settings import GolemSettings

LossBuilder = Callable[[GolemSettings, int], nn.Module]

#: Logit magnitude the loss must survive with finite values and gradients.
EXTREME = 100.0


def _loss(module: nn.Module, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    out = module(logits, targets)
    assert isinstance(out, torch.Tensor), f"loss returned {type(out).__name__}, expected a torch.Tensor"
    assert out.shape == torch.Size([]), f"loss must be a scalar, got shape {tuple(out.shape)}"
    assert out.is_floating_point(), f"loss must be floating point, got {out.dtype}"
    return out


def _value_and_grad(module: nn.Module, logits: torch.Tensor, targets: torch.Tensor) -> tuple[float, torch.Tensor]:
    z = logits.detach().clone().requires_grad_(True)
    out = _loss(module, z, targets)
    out.backward()
    assert z.grad is not None, "loss is not differentiable with respect to the logits"
    return float(out.detach()), z.grad


def assert_loss_contract(
    builder: LossBuilder,
    settings: GolemSettings | None = None,
    n_actions: int = 8,
    *,
    batch: int = 3,
    steps: int = 5,
    seed: int = 0,
) -> nn.Module:
    """Check that ``builder`` yields a well-behaved multi-label loss; return the built module.

    Checks, on ``logits[batch, steps, n_actions]`` and 0/1 ``targets`` of the same shape:

    * the builder returns an ``nn.Module``; the loss is a finite, non-negative float scalar;
    * it is a mean: repeating the batch twice leaves it unchanged;
    * its gradient with respect to the logits is finite and not all zero;
    * logits of ±``EXTREME`` (100), right and wrong, give a finite loss and finite gradients;
    * moving logits toward the targets lowers it: L(wrong, −2) > L(0) > L(right, +2);
    * confident correct logits (±6) cost less than half of the uncertain L(0).

    Raises:
        AssertionError: naming the first property that fails.
    """
    settings = settings if settings is not None else GolemSettings()
    module = builder(settings, n_actions)
    assert isinstance(module, nn.Module), f"loss builder returned {type(module).__name__}, expected an nn.Module"

    gen = torch.Generator().manual_seed(seed)
    shape = (batch, steps, n_actions)
    logits = torch.randn(shape, generator=gen) * 2.0
    targets = (torch.rand(shape, generator=gen) < 0.3).float()
    targets[0, 0, 0], targets[0, 0, 1] = 1.0, 0.0  # both classes present
    sign = targets * 2.0 - 1.0  # +1 where the action is pressed, −1 where not

    value, grad = _value_and_grad(module, logits, targets)
    assert torch.isfinite(torch.tensor(value)), f"loss is not finite on ordinary logits: {value}"
    assert value >= 0.0, f"loss is negative on ordinary logits: {value}"
    assert torch.isfinite(grad).all(), "gradient is not finite on ordinary logits"
    assert grad.abs().sum() > 0, "gradient is all zero on ordinary logits"

    doubled = _loss(module, torch.cat([logits, logits]), torch.cat([targets, targets]))
    assert torch.isclose(doubled, torch.tensor(value), rtol=1e-5, atol=1e-7), (
        f"loss is not a mean over elements: {value} on the batch, {float(doubled)} on the batch repeated twice"
    )

    for label, z in (("right", EXTREME * sign), ("wrong", -EXTREME * sign), ("mixed", EXTREME * torch.sign(logits))):
        v, g = _value_and_grad(module, z, targets)
        assert torch.isfinite(torch.tensor(v)), f"loss is not finite at logits of ±{EXTREME:g} ({label}): {v}"
        assert v >= 0.0, f"loss is negative at logits of ±{EXTREME:g} ({label}): {v}"
        assert torch.isfinite(g).all(), f"gradient is not finite at logits of ±{EXTREME:g} ({label})"

    with torch.no_grad():
        wrong = float(_loss(module, -2.0 * sign, targets))
        unsure = float(_loss(module, torch.zeros(shape), targets))
        right = float(_loss(module, 2.0 * sign, targets))
        confident = float(_loss(module, 6.0 * sign, targets))
    assert wrong > unsure > right, (
        f"loss does not fall as logits move toward the targets: L(-2)={wrong:.4g}, L(0)={unsure:.4g}, L(+2)={right:.4g}"
    )
    assert confident < 0.5 * unsure, (
        f"confident correct logits (±6) still cost {confident:.4g}, not under half of L(0)={unsure:.4g}"
    )
    return module


__all__ = ["assert_loss_contract", "EXTREME"]
