"""A tiny model built from golem-models' network on a tiny camera sensor: no engine, milliseconds a step."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch
from torch import nn

from golem.learning.modelspec import ModelSpec
from golem.sensors import Sensor
from golem.settings import GolemSettings

ACTIONS = ("MOVE_LEFT", "MOVE_RIGHT", "ATTACK")


class TinyCam(Sensor):
    """A 3×8×8 uint8 camera whose frame is the state's ``pixels``."""

    name = "cam"
    key = "cams"
    dtype = np.dtype(np.uint8)

    @property
    def shape(self) -> tuple[int, ...]:
        return (3, 8, 8)

    def configure(self, game) -> None:  # pragma: no cover - no engine here
        pass

    def _read(self, state):
        return state.pixels

    def cortex(self, extra_channels: int = 0) -> nn.Module:
        module = nn.Sequential(nn.Conv2d(3 + extra_channels, 4, 3, stride=2), nn.ReLU(), nn.Flatten())
        module.out_features = 4 * 3 * 3
        return module


def tiny_model(model: str = "cfc", seed: int = 0) -> nn.Module:
    from golem_models import build_cfc, build_lstm

    torch.manual_seed(seed)
    spec = ModelSpec(
        sensors=[TinyCam(GolemSettings.model_construct())],
        n_actions=len(ACTIONS),
        working_memory=6,
        model=model,
        action_names=ACTIONS,
        feature_norm="none",
    )
    return (build_cfc if model == "cfc" else build_lstm)(spec).eval()


def fake_state(tic: int, seed: int) -> SimpleNamespace:
    """A made-up ``GameState``: its ``tic`` and a random frame."""
    rng = np.random.default_rng(seed)
    return SimpleNamespace(tic=tic, pixels=rng.integers(0, 256, (3, 8, 8), dtype=np.uint8))


@pytest.fixture(params=["cfc", "lstm"])
def model(request) -> nn.Module:
    return tiny_model(request.param)


@pytest.fixture
def make_state():
    return fake_state


@pytest.fixture
def camera() -> TinyCam:
    return TinyCam(GolemSettings.model_construct())
