"""The ``balanced`` sampler on a real store: each group of worlds is read as often as the largest one."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np

from golem.builtin.visual import VisualSensor
from golem.data.dataset import SequenceDataset
from golem.data.sampling import StatefulStratifiedSampler
from golem.data.store import EpisodeMeta, TrajectoryStore
from golem.profiles import BASIC
from golem.settings import load_settings
from golem.testing import assert_sampler_contract
from golem_procgen.balanced import NO_WORLD, BalancedSampler, stratum

L = 4


def _store(path: Path) -> Path:
    """Six phase-1 episodes, two phase-2 episodes (oblige), one on a fixed scenario."""
    worlds = [("builtin", 1)] * 6 + [("oblige", 2)] * 2 + [None]
    with TrajectoryStore.create(path, chunk_steps=5) as store:
        for seed, world in enumerate(worlds):
            length = L * (2 + seed % 3)
            extra = {} if world is None else {"world": {"generator": world[0], "phase": world[1], "seed": seed}}
            store.write_episode(
                EpisodeMeta(
                    profile="basic",
                    action_names=list(BASIC),
                    scenario="procgen" if world else "basic",
                    source="expert",
                    seed=seed,
                    extra=extra,
                ),
                {
                    "frames": np.full((length, 3, 64, 64), seed, np.uint8),
                    "actions": np.zeros((length, len(BASIC)), np.uint8),
                },
            )
    return path


def _settings(by: str = "phase"):
    return load_settings(
        overrides=[
            (
                "test",
                {
                    "training.batch_size": 2,
                    "training.sequence_length": L,
                    "training.recovery_ratio": 0.0,
                    "training.seed": 3,
                    "training.sampler": "balanced",
                    "training.balanced": {"by": by},
                },
            )
        ],
        environ={},
    ).settings


def _streams_started(sampler, dataset) -> Counter:
    """Streams begun in one epoch, by the group of their episode."""
    out: Counter = Counter()
    for batch in sampler:
        for i in batch:
            p = dataset.pointers[i]
            if p["start"] == 0:
                out[stratum(dataset.episodes[int(p["episode"])].meta, "phase")] += 1
    return out


def test_every_group_is_read_as_often_as_the_largest(tmp_path: Path):
    settings = _settings()
    with TrajectoryStore.open(_store(tmp_path / "store")) as store:
        dataset = SequenceDataset(store, store.episodes(), [VisualSensor(settings)], BASIC, L, profile="basic")
        balanced = _streams_started(BalancedSampler(dataset, settings), dataset)
        plain = _streams_started(StatefulStratifiedSampler(dataset, settings), dataset)
        assert plain == {"phase 1": 6, "phase 2": 2, NO_WORLD: 1}
        assert balanced == {"phase 1": 6, "phase 2": 6, NO_WORLD: 6}  # the small groups repeated
        again = _streams_started(BalancedSampler(dataset, settings), dataset)
        assert again == balanced
        sampler = BalancedSampler(dataset, _settings("generator"))
        assert {k: len(v) for k, v in sampler.groups.items()} == {"builtin": 6, "oblige": 2, NO_WORLD: 1}


def test_the_groups_of_an_episode():
    meta = EpisodeMeta(
        profile="basic",
        action_names=list(BASIC),
        scenario="procgen",
        source="expert",
        extra={"world": {"generator": "oblige", "phase": 2}},
    )
    assert [stratum(meta, by) for by in ("phase", "generator", "world", "scenario")] == [
        "phase 2",
        "oblige",
        "oblige phase 2",
        "procgen",
    ]


def test_it_keeps_the_samplers_contract(tmp_path: Path):
    assert_sampler_contract(lambda data, settings: BalancedSampler(data, settings), tmp_path)
