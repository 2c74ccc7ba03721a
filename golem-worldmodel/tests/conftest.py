"""Small, untrained world-model parts for the unit tests (no engine)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from golem_worldmodel.actions import N_ACTIONS
from golem_worldmodel.dream_env import StartPool
from golem_worldmodel.latents import Latents
from golem_worldmodel.mdnrnn import MDNRNN

Z, H = 6, 16


@pytest.fixture
def rnn() -> MDNRNN:
    torch.manual_seed(0)
    return MDNRNN(Z, N_ACTIONS, hidden=H, gaussians=3).eval()


@pytest.fixture
def latents() -> Latents:
    rng = np.random.default_rng(0)
    lengths = [30, 12, 25]
    N = sum(lengths)
    done = np.zeros(N, np.float32)
    done[np.cumsum(lengths) - 1] = 1.0
    return Latents(
        mu=rng.standard_normal((N, Z)).astype(np.float32),
        logvar=np.full((N, Z), -2.0, np.float32),
        actions=rng.integers(0, N_ACTIONS, N),
        rewards=np.ones(N, np.float32),
        done=done,
        offsets=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
        episode_ids=[0, 1, 2],
    )


@pytest.fixture
def pool(latents: Latents) -> StartPool:
    return StartPool.from_latents(latents, warmup=8)
