"""Recurrent cores: ``[B, T, F]`` features + state ``[B, S]`` → ``[B, T, H]`` + new state.

Both cores keep their whole state in one tensor ``[B, S]`` so the training loop
can detach it, and :meth:`golem_models.net.DoomNet.reset_rows` can zero rows,
without knowing which core it drives.
"""

from __future__ import annotations

import torch
from ncps.torch import CfC
from torch import nn


class CfCCore(nn.Module):
    """A fully connected closed-form continuous-time (CfC) cell from ``ncps``.

    ``working_memory`` units, mode ``default`` (the gated CfC of Hasani et al.,
    2022), no mixed LSTM memory, unit time spans; the outputs are the units'
    states, so ``out_features == state_size == working_memory``.
    """

    def __init__(self, in_features: int, working_memory: int) -> None:
        super().__init__()
        self.rnn = CfC(in_features, working_memory, batch_first=True, return_sequences=True, mode="default")
        self.out_features = working_memory
        self.state_size = working_memory

    def forward(self, x: torch.Tensor, hx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``x[B, T, F]``, ``hx[B, H]`` → ``(y[B, T, H], hx[B, H])``."""
        y, h = self.rnn(x, hx)
        return y, h


class LSTMCore(nn.Module):
    """A one-layer ``nn.LSTM`` with ``working_memory`` hidden units; state is ``[h, c]`` side by side."""

    def __init__(self, in_features: int, working_memory: int) -> None:
        super().__init__()
        self.rnn = nn.LSTM(in_features, working_memory, batch_first=True)
        self.out_features = working_memory
        self.state_size = 2 * working_memory

    def forward(self, x: torch.Tensor, hx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``x[B, T, F]``, ``hx[B, 2H]`` (h then c) → ``(y[B, T, H], hx[B, 2H])``."""
        h, c = hx.chunk(2, dim=-1)
        y, (h, c) = self.rnn(x, (h.unsqueeze(0).contiguous(), c.unsqueeze(0).contiguous()))
        return y, torch.cat([h[0], c[0]], dim=-1)
