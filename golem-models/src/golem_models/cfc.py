"""``cfc``: the liquid network — sensor cortices, a CfC core (``ncps``), a linear head."""

from __future__ import annotations

from golem import hookimpl
from golem.learning.modelspec import ModelSpec
from golem_models.cores import CfCCore
from golem_models.net import DoomNet


def build_cfc(spec: ModelSpec) -> DoomNet:
    """A :class:`DoomNet` whose core is a fully connected CfC with ``spec.working_memory`` units.

    ``forward(inputs, hx[B, H]) -> (logits[B, T, A], hx[B, H])``.
    """
    return DoomNet(spec, CfCCore)


@hookimpl
def register_models(register) -> None:
    register("cfc", build_cfc)
