"""``assert_sampler_contract``: the checks every batch sampler must pass, for plugin authors' tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from golem.builtin.visual import VisualSensor
from golem.data.dataset import SequenceDataset
from golem.data.store import EpisodeMeta, TrajectoryStore
from golem.profiles import BASIC
from golem.settings import GolemSettings, load_settings

SamplerBuilder = Callable[[Any, GolemSettings], Any]


def _write_episodes(store: TrajectoryStore, lengths: list[int]) -> None:
    for eid, length in enumerate(lengths):
        frames = np.zeros((length, 3, 64, 64), dtype=np.uint8)
        frames[:, 0] = eid  # which episode
        frames[:, 1] = np.arange(length, dtype=np.uint8)[:, None, None]  # which step
        actions = np.zeros((length, len(BASIC)), dtype=np.uint8)
        actions[:, BASIC.index("ATTACK")] = np.arange(length) % 2
        store.write_episode(
            EpisodeMeta(profile="basic", action_names=list(BASIC), scenario="contract", source="expert", seed=eid),
            {"frames": frames, "actions": actions},
        )


def assert_sampler_contract(builder: SamplerBuilder, tmp_path: Path, *, batch_size: int = 3, length: int = 4) -> Any:
    """Build ``builder(dataset, settings)`` over a small real store and check one epoch.

    Checks: every batch is ``batch_size`` valid window indices; a row whose
    window does not start an episode continues the previous batch's row (same
    episode, same mirroring, ``start + length``) — the stateful truncated BPTT
    contract; a second sampler built the same way yields the same epoch
    (determinism from ``training.seed``); the epoch ends.

    Returns the sampler.
    """
    path = Path(tmp_path) / "sampler-contract-store"
    with TrajectoryStore.create(path, chunk_steps=5) as store:
        _write_episodes(store, [length * k for k in (3, 5, 2, 4, 6, 3, 7, 2)])
    settings = load_settings(
        overrides=[
            (
                "contract",
                {
                    "training.batch_size": batch_size,
                    "training.sequence_length": length,
                    "training.recovery_ratio": 0.0,
                    "training.mirror": True,
                    "training.seed": 7,
                },
            )
        ],
        environ={},
    ).settings
    with TrajectoryStore.open(path) as store:
        dataset = SequenceDataset(
            store, store.episodes(), [VisualSensor(settings)], BASIC, length, mirror=True, profile="basic"
        )
        epochs = []
        for _ in range(2):
            sampler = builder(dataset, settings)
            epochs.append([list(map(int, batch)) for batch in sampler])
        assert epochs[0], "the sampler yielded no batch"
        assert epochs[0] == epochs[1], "two samplers with the same seed gave different epochs"
        pointers = dataset.pointers
        previous: list[int] | None = None
        for batch in epochs[0]:
            assert len(batch) == batch_size, f"batch of {len(batch)} indices, expected {batch_size}"
            assert all(0 <= i < len(pointers) for i in batch), f"index out of range in {batch}"
            if previous is not None:
                for row, (i, j) in enumerate(zip(previous, batch)):
                    now = pointers[j]
                    if now["is_first"]:
                        continue
                    before = pointers[i]
                    assert (now["episode"], bool(now["mirrored"]), now["start"]) == (
                        before["episode"],
                        bool(before["mirrored"]),
                        before["start"] + length,
                    ), f"row {row} does not continue its stream: {before} → {now}"
            previous = batch
        # the frames really are the windows the pointers name
        first = dataset.load_batch(epochs[0][0])
        frames = first.inputs["visual"]
        assert tuple(frames.shape) == (batch_size, length, 3, 64, 64)
        return sampler
