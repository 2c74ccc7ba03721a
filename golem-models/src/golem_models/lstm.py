"""``lstm``: the baseline — the same cortices and head around an ``nn.LSTM`` core."""

from __future__ import annotations

from golem import hookimpl
from golem.learning.modelspec import ModelSpec
from golem_models.cores import LSTMCore
from golem_models.net import DoomNet


def build_lstm(spec: ModelSpec) -> DoomNet:
    """A :class:`DoomNet` whose core is a one-layer LSTM with ``spec.working_memory`` hidden units.

    ``forward(inputs, hx[B, 2H]) -> (logits[B, T, A], hx[B, 2H])`` (state is h and c side by side).
    """
    return DoomNet(spec, LSTMCore)


@hookimpl
def register_models(register) -> None:
    register("lstm", build_lstm)
