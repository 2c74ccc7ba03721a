"""Golem's models: ``cfc`` (the liquid network on ``ncps`` CfC) and an ``lstm`` baseline.

Both are :class:`~golem_models.net.DoomNet` — one cortex per sensor, a recurrent
core, a linear head — and differ only in the core. Builders take a
:class:`golem.learning.modelspec.ModelSpec`.
"""

from __future__ import annotations

from golem_models.cfc import build_cfc
from golem_models.cores import CfCCore, LSTMCore
from golem_models.lstm import build_lstm
from golem_models.net import DoomNet

__all__ = ["CfCCore", "DoomNet", "LSTMCore", "build_cfc", "build_lstm"]
