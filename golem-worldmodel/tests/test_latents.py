"""Encoding a store's frames: a round's new episodes are encoded alone and appended, as a full encoding gives."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from golem.data.store import TrajectoryStore
from golem.data.store.schema import EpisodeMeta
from golem.errors import GolemError
from golem.profiles import BASIC
from golem_worldmodel.collect import TAG
from golem_worldmodel.latents import encode_store
from golem_worldmodel.vae import ConvVAE


def _write(store: TrajectoryStore, T: int, seed: int) -> int:
    rng = np.random.default_rng(seed)
    meta = EpisodeMeta(
        profile="basic", action_names=list(BASIC), scenario="take_cover", source="expert", sensors=["visual"],
        seed=seed, tags=[TAG],
    )  # fmt: skip
    arrays = {
        "actions": rng.integers(0, 2, (T, len(BASIC)), dtype=np.uint8),
        "rewards": np.ones(T, np.float32),
        "frames": rng.integers(0, 256, (T, 3, 64, 64), dtype=np.uint8),
    }
    return store.write_episode(meta, arrays)


def test_new_episodes_are_encoded_alone_and_appended(tmp_path):
    path = tmp_path / "store"
    with TrajectoryStore.create(path) as store:
        ids = [_write(store, T, seed) for seed, T in enumerate((40, 300, 17))]
    torch.manual_seed(0)
    vae = ConvVAE(8, (8, 8, 16, 16))
    full = encode_store(vae, path, "take_cover", batch=32)
    assert full.episode_ids == ids and full.n_episodes == 3
    known = full.subset(range(2))
    with TrajectoryStore.open(path, readonly=False) as store:
        ids.append(_write(store, 25, 3))
    seen: list[tuple[int, int]] = []
    grown = encode_store(vae, path, "take_cover", batch=32, known=known, on_episode=lambda d, t: seen.append((d, t)))
    assert seen == [(1, 2), (2, 2)]  # only the two episodes after the known ones were read
    again = encode_store(vae, path, "take_cover", batch=32)
    assert grown.episode_ids == again.episode_ids == ids
    for key in ("mu", "logvar", "actions", "rewards", "done", "offsets"):
        np.testing.assert_array_equal(getattr(grown, key), getattr(again, key))
    assert encode_store(vae, path, "take_cover", known=again) is again  # nothing new: nothing encoded
    with pytest.raises(GolemError, match="not the store's first episodes"):
        encode_store(vae, path, "take_cover", known=full.subset([1, 2]))
