"""A tiny real training with ``--plugin shift --plugin colour`` on a recorded store: it runs, records what it
was trained with, and the same seed gives the same weights."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import torch

from golem.learning.checkpoints import load_checkpoint
from tests.conftest import GOLEM, _clean_env
from tests.helpers import recorded_store

pytestmark = [pytest.mark.engine, pytest.mark.slow]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return recorded_store(tmp_path_factory.mktemp("augment-data") / "basic", episodes=8)


def train(store: Path, root: Path, *flags: str) -> dict:
    args = [
        *("run", "train", "--store", str(store), "--set", f"data.root={root}", "--epochs", "1", "--device", "cpu"),
        *("--set", "training.sequence_length=4", "--set", "training.batch_size=4", "--set", "brain.working_memory=16"),
        *("--set", "training.min_updates=0", "--set", "training.validation_split=0.2", "--no-tensorboard"),
        *("--seed", "7", "--json", "--log-level", "warning", *flags),
    ]
    proc = subprocess.run([str(GOLEM), *args], capture_output=True, text=True, env=_clean_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_training_with_shift_and_colour_is_repeatable_and_recorded(store: Path, tmp_path: Path) -> None:
    flags = ("--plugin", "shift", "--plugin", "colour", "--set", "augment.colour.p=1.0")
    runs = [train(store, tmp_path / name, *flags) for name in ("a", "b")]
    (wa, meta), (wb, _) = (load_checkpoint(Path(r["active"])) for r in runs)
    assert meta["training"]["augmentations"] == ["shift", "colour"] and meta["training"]["mirror"] is True
    assert meta["augment"]["colour"]["p"] == 1.0 and meta["augment"]["shift"]["pad"] == 4
    assert all(torch.equal(wa[name], wb[name]) for name in wa)
    assert runs[0]["history"][0]["train_loss"] == runs[1]["history"][0]["train_loss"]
    plain = train(store, tmp_path / "plain")
    wp, _ = load_checkpoint(Path(plain["active"]))
    assert any(not torch.equal(wa[name], wp[name]) for name in wa)  # the augmentations did change the batches
