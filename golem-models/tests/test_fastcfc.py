"""The fast CfC core computes what ``ncps``' CfC computes: outputs and gradients, float32, within 1e-5."""

from __future__ import annotations

import pytest
import torch
from ncps.torch import CfC

from golem_models import CfCCore, DoomNet
from golem_models.fastcfc import cfc_scan, supports_fast_path

B, T, F, H = 6, 9, 20, 16
TOL = {"rtol": 1e-5, "atol": 1e-5}


def twin_cores(seed: int = 0) -> tuple[CfCCore, CfCCore]:
    """The reference (ncps' loop) and the fast core with identical weights."""
    torch.manual_seed(seed)
    reference = CfCCore(F, H, reference=True)
    fast = CfCCore(F, H)
    fast.load_state_dict(reference.state_dict())
    assert reference.reference and not fast.reference
    return reference, fast


def run_chunks(
    core: CfCCore,
    x: torch.Tensor,
    h0: torch.Tensor,
    reset: torch.Tensor,
    weights: torch.Tensor,
    timespans: torch.Tensor | None,
) -> tuple[torch.Tensor, torch.Tensor, list[torch.Tensor]]:
    """Two chunks of T steps with the state carried from the first to the second (detached, as in
    truncated BPTT) and the rows in ``reset`` zeroed before the second; returns outputs, the last
    state and the gradients of inputs, initial state and every parameter."""
    x = x.clone().requires_grad_(True)
    h0 = h0.clone().requires_grad_(True)
    half = x.shape[1] // 2
    ts = (None, None) if timespans is None else (timespans[:, :half], timespans[:, half:])
    y1, h1 = core(x[:, :half], h0, ts[0])
    h1 = DoomNet.reset_rows(h1.detach(), reset)
    y2, h2 = core(x[:, half:], h1, ts[1])
    y = torch.cat([y1, y2], dim=1)
    loss = (y * weights).sum() + (h2**2).sum()
    grads = torch.autograd.grad(loss, [x, h0, *core.parameters()])
    return y.detach(), h2.detach(), list(grads)


@pytest.mark.parametrize("with_time", [False, True], ids=["unit-time", "timespans"])
def test_fast_core_matches_ncps_outputs_and_gradients(with_time: bool) -> None:
    reference, fast = twin_cores()
    torch.manual_seed(1)
    x = torch.randn(B, 2 * T, F)
    h0 = torch.randn(B, H)
    weights = torch.randn(B, 2 * T, H)
    reset = torch.tensor([True, False, False, True, False, False])
    timespans = (torch.rand(B, 2 * T) * 3.5 + 0.5) if with_time else None
    y_ref, h_ref, g_ref = run_chunks(reference, x, h0, reset, weights, timespans)
    y_fast, h_fast, g_fast = run_chunks(fast, x, h0, reset, weights, timespans)
    torch.testing.assert_close(y_fast, y_ref, **TOL)
    torch.testing.assert_close(h_fast, h_ref, **TOL)
    names = ["x", "h0", *(name for name, _ in reference.named_parameters())]
    assert len(g_fast) == len(names)
    for name, a, b in zip(names, g_fast, g_ref, strict=True):
        assert b.abs().max() > 0, f"{name}: the reference gradient is zero, the test would prove nothing"
        torch.testing.assert_close(a, b, **TOL, msg=lambda m, name=name: f"{name}: {m}")


def test_timespans_change_the_output() -> None:
    """The ODE's time matters: two tics per step is not the same network as one."""
    _, fast = twin_cores()
    x, h0 = torch.randn(B, T, F), torch.randn(B, H)
    with torch.no_grad():
        unit, _ = fast(x, h0)
        ones, _ = fast(x, h0, torch.ones(B, T))
        twos, _ = fast(x, h0, torch.full((B, T), 2.0))
    torch.testing.assert_close(ones, unit, **TOL)
    assert (twos - unit).abs().max() > 1e-3


def test_one_step_live_play_matches_ncps_and_no_grad_runs() -> None:
    reference, fast = twin_cores(3)
    x, h = torch.randn(2, 1, F), torch.zeros(2, H)
    with torch.no_grad():
        h_ref = h_fast = h
        for _ in range(5):  # five tics, one at a time, state carried as in play
            y_ref, h_ref = reference(x, h_ref)
            y_fast, h_fast = fast(x, h_fast)
            torch.testing.assert_close(y_fast, y_ref, **TOL)
    torch.testing.assert_close(h_fast, h_ref, **TOL)


def test_eager_and_scripted_loops_agree() -> None:
    _, fast = twin_cores(4)
    x, h0 = torch.randn(B, T, F), torch.randn(B, H)
    with torch.no_grad():
        a, _ = cfc_scan(fast.rnn.rnn_cell, x, h0, loops="script")
        b, _ = cfc_scan(fast.rnn.rnn_cell, x, h0, loops="eager")
    torch.testing.assert_close(a, b, **TOL)


def test_parameter_names_are_ncps_so_old_checkpoints_load() -> None:
    torch.manual_seed(0)
    old = CfC(F, H, batch_first=True, return_sequences=True, mode="default")  # how checkpoints were written
    core = CfCCore(F, H)
    core.rnn.load_state_dict(old.state_dict())
    assert set(core.state_dict()) == {f"rnn.{k}" for k in old.state_dict()}
    x, h0 = torch.randn(B, T, F), torch.randn(B, H)
    with torch.no_grad():
        torch.testing.assert_close(core(x, h0)[0], old(x, h0)[0], **TOL)


def test_cells_the_fast_path_cannot_run_fall_back_to_ncps() -> None:
    pure = CfC(F, H, batch_first=True, mode="pure").rnn_cell
    relu = CfC(F, H, batch_first=True, activation="relu").rnn_cell
    two_layers = CfC(F, H, batch_first=True, backbone_layers=2).rnn_cell
    assert supports_fast_path(CfCCore(F, H).rnn.rnn_cell)
    assert not any(supports_fast_path(cell) for cell in (pure, relu, two_layers))
