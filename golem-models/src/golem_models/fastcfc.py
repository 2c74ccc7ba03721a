"""A fast forward and backward pass for ``ncps``' fully connected CfC cell, numerically the same network.

``ncps.torch.CfC`` steps through time in Python and lets autograd record about
twenty small operations per step, each recomputing the input's share of the
backbone. This module runs the same cell (mode ``default``, one backbone
layer, LeCun tanh, no wiring mask) as one :class:`torch.autograd.Function`:

* the input half of the backbone's first linear layer, ``x @ W_xᵀ + b``, is one
  matmul over all ``B·T`` steps, outside the loop (ordinary autograd);
* the recurrent half (``h @ W_hᵀ``), the backbone activation and the four heads
  fused into one ``[4H, U]`` matmul run in a TorchScript loop that keeps what
  the backward pass needs;
* the backward pass is written out by hand in a second TorchScript loop; the
  weight gradients of the recurrent half and of the heads are one matmul each
  over all steps once the loop is done.

Per step the cell computes, with ``ts`` the step's elapsed time::

    z  = x_t W_xᵀ + b + h W_hᵀ            a = 1.7159 · tanh(0.666 · z)
    f1 = tanh(a W_1ᵀ + b_1)               f2 = tanh(a W_2ᵀ + b_2)
    s  = σ((a W_aᵀ + b_a) · ts + a W_bᵀ + b_b)
    h' = f1 · (1 − s) + s · f2

The parameters stay in the ``ncps`` module (same names, so checkpoints load
unchanged); ``tests`` check outputs and gradients against ``ncps`` itself.
Hand-written because it measures faster than autograd over the same loop
(``bench/bench_train.py``, "core f+b").
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import torch

LECUN_SCALE = 1.7159
LECUN_SLOPE = 0.666


def _forward_loop(
    pre: torch.Tensor,
    h: torch.Tensor,
    ts: torch.Tensor,
    unit_time: bool,
    w_h: torch.Tensor,
    w_g: torch.Tensor,
    b_g: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The cell over ``T`` steps, scales already folded into the weights.

    ``pre[T, B, U]`` is ``0.666 (x W_xᵀ + b)``, ``w_h[U, H]`` is ``0.666 W_h``, ``w_g[G·H, U]`` the heads
    times 1.7159 (``G = 3`` with unit time: f1, f2, t_a + t_b; ``G = 4`` otherwise), ``ts[T, B, 1]``.

    Returns ``(ys[T, B, H], th[T, B, U], f12[T, B, 2H], s[T, B, H], h[B, H])``: every state, the
    backbone's ``tanh``, the two tanh heads, the gate and the final state.
    """
    steps, batch, units = pre.shape
    hidden = h.shape[1]
    w_h_t = w_h.t()
    w_g_t = w_g.t()
    ys = torch.empty(steps, batch, hidden, dtype=pre.dtype, device=pre.device)
    ths = torch.empty_like(pre)
    f12s = torch.empty(steps, batch, 2 * hidden, dtype=pre.dtype, device=pre.device)
    ss = torch.empty_like(ys)
    for t in range(steps):
        th = torch.tanh(torch.addmm(pre[t], h, w_h_t), out=ths[t])
        g = torch.addmm(b_g, th, w_g_t)
        f12 = torch.tanh(g[:, : 2 * hidden], out=f12s[t])
        if unit_time:
            s = torch.sigmoid(g[:, 2 * hidden :], out=ss[t])
        else:
            s = torch.sigmoid(torch.addcmul(g[:, 3 * hidden :], g[:, 2 * hidden : 3 * hidden], ts[t]), out=ss[t])
        f1 = f12[:, :hidden]
        h = torch.addcmul(f1, s, f12[:, hidden:] - f1, out=ys[t])
    return ys, ths, f12s, ss, h


def _backward_loop(
    dys: torch.Tensor, dh: torch.Tensor, k: torch.Tensor, d: torch.Tensor, w_h: torch.Tensor, w_g: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Back through time with the per-step factors precomputed.

    ``dys[T, B, H]`` (gradient of every output state), ``dh[B, H]`` (of the last state), ``k[T, B, G, H]``
    (``∂g/∂h'`` per head), ``d[T, B, U]`` (``1 − th²``). Returns ``(dz[T, B, U], dg[T, B, G·H], dh0[B, H])``.
    """
    steps, batch, heads, hidden = k.shape
    dzs = torch.empty_like(d)
    dgs = torch.empty(steps, batch, heads * hidden, dtype=k.dtype, device=k.device)
    for t in range(steps - 1, -1, -1):
        dh = dh + dys[t]
        dg = torch.mul(k[t], dh.unsqueeze(1), out=dgs[t].view(batch, heads, hidden)).view(batch, heads * hidden)
        dz = torch.mul(torch.mm(dg, w_g), d[t], out=dzs[t])
        dh = torch.mm(dz, w_h)
    return dzs, dgs, dh


def _script(fn: Callable[..., Any]) -> Callable[..., Any]:
    """TorchScript ``fn`` (quiet about TorchScript's deprecation notice; it still measures fastest here)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return torch.jit.script(fn)


LOOPS = {"script": (_script(_forward_loop), _script(_backward_loop)), "eager": (_forward_loop, _backward_loop)}


class _CfCScan(torch.autograd.Function):
    """``(pre[T, B, U], h0[B, H], ts[T, B, 1], unit_time, W_h[U, H], W_g[G·H, U], b_g[G·H]) →
    (ys[T, B, H], h[B, H])``."""

    @staticmethod
    def forward(
        ctx: Any,
        pre: torch.Tensor,
        h0: torch.Tensor,
        ts: torch.Tensor,
        unit_time: bool,
        w_h: torch.Tensor,
        w_g: torch.Tensor,
        b_g: torch.Tensor,
        loops: str,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        ys, th, f12, s, h = LOOPS[loops][0](pre, h0, ts, unit_time, w_h, w_g, b_g)
        ctx.loops = loops
        ctx.save_for_backward(h0, ys, th, f12, s, ts, w_h, w_g)
        ctx.unit_time = unit_time
        return ys, h

    @staticmethod
    def backward(ctx: Any, dys: torch.Tensor | None, dh_last: torch.Tensor | None) -> tuple[Any, ...]:
        h0, ys, th, f12, s, ts, w_h, w_g = ctx.saved_tensors
        if dys is None:
            dys = torch.zeros_like(ys)
        if dh_last is None:
            dh_last = torch.zeros_like(h0)
        # Every factor that does not depend on the incoming gradient, for all steps at once:
        # h' = f1 + s (f2 − f1) ⇒ ∂h'/∂f1pre = (1 − s)(1 − f1²), ∂h'/∂f2pre = s (1 − f2²),
        # ∂h'/∂(gate argument) = (f2 − f1) s (1 − s), times ts for t_a.
        hidden = h0.shape[1]
        f1, f2 = f12[..., :hidden], f12[..., hidden:]
        gate = (f2 - f1) * s * (1.0 - s)
        parts = [(1.0 - s) * (1.0 - f1 * f1), s * (1.0 - f2 * f2)]
        parts += [gate] if ctx.unit_time else [gate * ts, gate]
        k = torch.stack(parts, dim=2)  # [T, B, G, H]
        d = 1.0 - th * th
        dz, dg, dh0 = LOOPS[ctx.loops][1](dys.contiguous(), dh_last.contiguous(), k, d, w_h, w_g)
        steps, batch, units = th.shape
        h_prev = torch.cat([h0.unsqueeze(0), ys[:-1]]).reshape(steps * batch, -1)
        dg_flat = dg.reshape(steps * batch, -1)
        d_w_h = dz.reshape(steps * batch, units).t() @ h_prev
        d_w_g = dg_flat.t() @ th.reshape(steps * batch, units)
        return dz, dh0, None, None, d_w_h, d_w_g, dg_flat.sum(0), None  # time spans are data: no gradient


def cfc_scan(
    cell: torch.nn.Module,
    x: torch.Tensor,
    hx: torch.Tensor,
    timespans: torch.Tensor | None = None,
    loops: str = "script",
) -> tuple[torch.Tensor, torch.Tensor]:
    """Run ``ncps``' ``CfCCell`` ``cell`` over a sequence with the fast path.

    Args:
        cell: an ``ncps.torch.CfCCell`` for which :func:`supports_fast_path` holds.
        x: inputs ``[B, T, F]``.
        hx: state ``[B, H]``.
        timespans: elapsed time of each step ``[B, T]`` (tics; ``None``: 1 everywhere); treated as data,
            no gradient flows into it.
        loops: ``"script"`` (TorchScript, the default) or ``"eager"`` (plain Python, for comparison).

    Returns:
        ``(y[B, T, H], h[B, H])``: every step's state and the last one.
    """
    linear = cell.backbone[0]
    features = x.shape[-1]
    # The constant scales go into the weights here (autograd carries their gradients back):
    # 0.666 inside LeCun's tanh, 1.7159 outside it.
    w_x, w_h = linear.weight[:, :features] * LECUN_SLOPE, linear.weight[:, features:] * LECUN_SLOPE
    unit_time = timespans is None
    if unit_time:  # σ(t_a·1 + t_b): the two time heads are one linear map
        w_g = torch.cat([cell.ff1.weight, cell.ff2.weight, cell.time_a.weight + cell.time_b.weight])
        b_g = torch.cat([cell.ff1.bias, cell.ff2.bias, cell.time_a.bias + cell.time_b.bias])
        ts = x.new_ones(1, 1, 1)
    else:
        w_g = torch.cat([cell.ff1.weight, cell.ff2.weight, cell.time_a.weight, cell.time_b.weight])
        b_g = torch.cat([cell.ff1.bias, cell.ff2.bias, cell.time_a.bias, cell.time_b.bias])
        ts = timespans.to(x.dtype).transpose(0, 1).unsqueeze(-1).contiguous()  # [T, B, 1]
    pre = torch.nn.functional.linear(x.transpose(0, 1), w_x, linear.bias * LECUN_SLOPE)  # [T, B, U]: one matmul
    ys, h = _CfCScan.apply(
        pre.contiguous(), hx.contiguous(), ts, unit_time, w_h.contiguous(), (w_g * LECUN_SCALE).contiguous(), b_g, loops
    )
    return ys.transpose(0, 1), h


def supports_fast_path(cell: torch.nn.Module) -> bool:
    """Whether :func:`cfc_scan` computes exactly what ``cell`` would."""
    backbone = getattr(cell, "backbone", None)
    return (
        getattr(cell, "mode", None) == "default"
        and getattr(cell, "sparsity_mask", 1) is None
        and backbone is not None
        and len(backbone) == 2
        and type(backbone[1]).__name__ == "LeCun"
    )
