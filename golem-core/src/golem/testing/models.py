"""Contract checks for model plugins: ``assert_model_contract(builder, spec)``.

A model builder is ``builder(spec: ModelSpec) -> nn.Module`` whose module has

* ``forward(inputs, hx) -> (logits[B, T, A], hx[B, S])`` with ``inputs[sensor name] = [B, T, *shape]``
  float network tensors and ``hx=None`` meaning zeros;
* ``initial_state(batch_size, device) -> hx[B, S]`` (zeros);
* ``reset_rows(hx, mask[B] bool) -> hx`` zeroing the rows that start an episode;
* ``step(inputs_one_tic, hx) -> (logits[B, A], hx)`` with ``inputs[name] = [B, *shape]``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from golem.learning.modelspec import ModelSpec

ModelBuilder = Callable[[ModelSpec], nn.Module]


def random_inputs(spec: ModelSpec, batch: int, steps: int, seed: int = 0) -> dict[str, torch.Tensor]:
    """Network inputs ``{sensor name: [batch, steps, *shape]}``: random stored arrays through ``to_network``."""
    gen = torch.Generator().manual_seed(seed)
    out: dict[str, torch.Tensor] = {}
    for sensor in spec.sensors:
        size = (batch, steps, *sensor.shape)
        if np.dtype(sensor.dtype) == np.uint8:
            stored = torch.randint(0, 256, size, generator=gen, dtype=torch.uint8)
        else:
            stored = torch.rand(size, generator=gen)
        out[sensor.name] = sensor.to_network(stored)
    return out


def _close(a: torch.Tensor, b: torch.Tensor, what: str) -> None:
    assert a.shape == b.shape, f"{what}: shapes differ, {tuple(a.shape)} vs {tuple(b.shape)}"
    assert torch.allclose(a, b, rtol=1e-4, atol=1e-5), f"{what}: max difference {float((a - b).abs().max()):.3g}"


def _slice(inputs: dict[str, torch.Tensor], index) -> dict[str, torch.Tensor]:
    return {name: x[index] for name, x in inputs.items()}


def assert_model_contract(
    builder: ModelBuilder, spec: ModelSpec, *, batch: int = 3, steps: int = 4, seed: int = 0
) -> nn.Module:
    """Check that ``builder(spec)`` honours the model interface; return the built module (eval mode).

    Checks: logits ``[B, T, A]`` finite and a state tensor ``[B, S]``; ``hx=None``
    equals ``initial_state`` (zeros); ``step`` equals ``forward`` on one tic and
    stepping a sequence equals one forward over it; state carried across two calls
    equals one call over the concatenation; ``reset_rows`` zeroes exactly the masked
    rows without touching its input, and a reset row behaves as a fresh episode;
    gradients reach every parameter and are finite.

    Raises:
        AssertionError: naming the first property that fails.
    """
    assert steps >= 2 and batch >= 2, "the contract needs batch >= 2 and steps >= 2"
    torch.manual_seed(seed)
    model = builder(spec)
    assert isinstance(model, nn.Module), f"model builder returned {type(model).__name__}, expected an nn.Module"
    for method in ("forward", "step", "initial_state", "reset_rows"):
        assert callable(getattr(model, method, None)), f"model lacks {method}()"
    model.eval()
    inputs = random_inputs(spec, batch, steps, seed)

    with torch.no_grad():
        logits, hx = model(inputs, None)
        assert isinstance(logits, torch.Tensor) and logits.shape == (batch, steps, spec.n_actions), (
            f"logits must be [B, T, A] = {(batch, steps, spec.n_actions)}, got {tuple(getattr(logits, 'shape', ()))}"
        )
        assert torch.isfinite(logits).all(), "logits are not finite"
        assert isinstance(hx, torch.Tensor) and hx.dim() == 2 and hx.shape[0] == batch, (
            f"state must be a tensor [B, S], got {type(hx).__name__} {tuple(getattr(hx, 'shape', ()))}"
        )
        zeros = model.initial_state(batch, logits.device)
        assert zeros.shape == hx.shape and not zeros.any(), "initial_state must be zeros shaped like the state"
        _close(model(inputs, zeros)[0], logits, "hx=None vs initial_state")

        start = torch.randn(hx.shape, generator=torch.Generator().manual_seed(seed + 1)) * 0.5
        whole, h_whole = model(inputs, start)
        first, h1 = model(_slice(inputs, (slice(None), slice(None, 1))), start)
        rest, h2 = model(_slice(inputs, (slice(None), slice(1, None))), h1)
        _close(torch.cat([first, rest], dim=1), whole, "state carried across two calls vs one call")
        _close(h2, h_whole, "final state carried across two calls vs one call")

        step_logits, h_step = model.step(_slice(inputs, (slice(None), 0)), start)
        _close(step_logits, first[:, 0], "step vs forward on one tic")
        _close(h_step, h1, "step state vs forward state on one tic")
        h, outs = start, []
        for t in range(steps):
            out, h = model.step(_slice(inputs, (slice(None), t)), h)
            outs.append(out)
        _close(torch.stack(outs, dim=1), whole, "stepping a sequence vs forward over it")

        mask = torch.zeros(batch, dtype=torch.bool)
        mask[::2] = True
        kept = start.clone()
        reset = model.reset_rows(start, mask)
        _close(start, kept, "reset_rows must not modify its input")
        assert not reset[mask].any(), "reset_rows left a masked row non-zero"
        _close(reset[~mask], start[~mask], "reset_rows changed an unmasked row")
        after, _ = model(inputs, reset)
        _close(after[mask], model(_slice(inputs, mask), None)[0], "a reset row vs a fresh episode")

    model.train()
    logits, hx = model(inputs, None)
    (logits.square().mean() + hx.square().mean()).backward()
    for name, param in model.named_parameters():
        if param.requires_grad:
            assert param.grad is not None, f"no gradient reaches parameter {name}"
            assert torch.isfinite(param.grad).all(), f"gradient of {name} is not finite"
    model.zero_grad(set_to_none=True)
    return model.eval()


__all__ = ["assert_model_contract", "random_inputs"]
