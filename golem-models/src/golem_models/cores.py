"""Recurrent cores: ``[B, T, F]`` features + state ``[B, S]`` → ``[B, T, H]`` + new state.

Both cores keep their whole state in one tensor ``[B, S]`` so the training loop
can detach it, and :meth:`golem_models.net.DoomNet.reset_rows` can zero rows,
without knowing which core it drives.
"""

from __future__ import annotations

import torch
from ncps.torch import CfC
from torch import nn

from golem_models.fastcfc import cfc_scan, supports_fast_path


class CfCCore(nn.Module):
    """A fully connected closed-form continuous-time (CfC) cell with ``ncps``' parameters.

    ``working_memory`` units, mode ``default`` (the gated CfC of Hasani et al.,
    2022), no mixed LSTM memory; the outputs are the units' states, so
    ``out_features == state_size == working_memory``. The parameters live in an
    ``ncps.torch.CfC`` (``rnn.rnn_cell.*``, as in every checkpoint); the forward
    and backward passes run :func:`golem_models.fastcfc.cfc_scan`, the same
    network measured several times faster. ``reference = True`` runs ``ncps``'
    own loop instead (tests and benchmarks compare the two).
    """

    def __init__(self, in_features: int, working_memory: int, reference: bool = False) -> None:
        super().__init__()
        self.rnn = CfC(in_features, working_memory, batch_first=True, return_sequences=True, mode="default")
        self.out_features = working_memory
        self.state_size = working_memory
        self.reference = reference or not supports_fast_path(self.rnn.rnn_cell)

    def forward(
        self, x: torch.Tensor, hx: torch.Tensor, timespans: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``x[B, T, F]``, ``hx[B, H]``, elapsed tics per step ``timespans[B, T]`` (``None``: 1).

        Returns ``(y[B, T, H], hx[B, H])``.
        """
        if not self.reference:
            return cfc_scan(self.rnn.rnn_cell, x, hx, timespans)
        if timespans is None:
            y, h = self.rnn(x, hx)
            return y, h
        # ncps' own loop squeezes a [B, 1] time span to [B], which broadcasts against the wrong axis;
        # step its cell directly with [B, 1] spans.
        ys = []
        h = hx
        for t in range(x.shape[1]):
            y, h = self.rnn.rnn_cell(x[:, t], h, timespans[:, t : t + 1].to(x.dtype))
            ys.append(y)
        return torch.stack(ys, dim=1), h


class LSTMCore(nn.Module):
    """A one-layer ``nn.LSTM`` with ``working_memory`` hidden units; state is ``[h, c]`` side by side."""

    def __init__(self, in_features: int, working_memory: int) -> None:
        super().__init__()
        self.rnn = nn.LSTM(in_features, working_memory, batch_first=True)
        self.out_features = working_memory
        self.state_size = 2 * working_memory

    def forward(
        self, x: torch.Tensor, hx: torch.Tensor, timespans: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``x[B, T, F]``, ``hx[B, 2H]`` (h then c) → ``(y[B, T, H], hx[B, 2H])``.

        A discrete-time cell: ``timespans`` is accepted for the common interface and ignored.
        """
        h, c = hx.chunk(2, dim=-1)
        y, (h, c) = self.rnn(x, (h.unsqueeze(0).contiguous(), c.unsqueeze(0).contiguous()))
        return y, torch.cat([h[0], c[0]], dim=-1)
