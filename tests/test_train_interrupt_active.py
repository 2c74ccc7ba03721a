"""Ctrl-C during training: the interrupted weights become the active model only if they validate at least as well."""

from __future__ import annotations

from pathlib import Path

import pytest

from golem.learning.checkpoints import read_metadata
from golem.learning.training import train
from golem.plugins import load_plugins
from golem.settings import GolemSettings
from tests.helpers import recorded_store

pytestmark = pytest.mark.engine

REGISTRY = load_plugins().registry


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return recorded_store(tmp_path_factory.mktemp("interrupt-data") / "store", 12)


def _settings(root: Path, store: Path, **training) -> GolemSettings:
    return GolemSettings.model_validate(
        {
            "data": {"root": str(root), "store": str(store)},
            "brain": {"working_memory": 16},
            "training": {
                "sequence_length": 4,
                "batch_size": 4,
                "device": "cpu",
                "validation_split": 0.2,
                "min_updates": 0,
                "tensorboard": False,
                **training,
            },
        }
    )


def _interrupt_after(epochs: int):
    def on_epoch(record) -> None:
        if record.epoch + 1 >= epochs:
            raise KeyboardInterrupt

    return on_epoch


def _sha(path: Path) -> str:
    """The checkpoint's weights hash (archive and active differ in bytes, not in weights)."""
    return read_metadata(path)["sha256"]


def test_interrupted_weights_replace_the_active_model_only_when_they_validate_better(tmp_path: Path, store: Path):
    root = tmp_path / "root"
    active = root / "models" / "basic" / "active.safetensors"
    # no active model yet: the interrupted weights become it
    first = train(_settings(root, store, epochs=50, learning_rate=1e-7), REGISTRY, on_epoch=_interrupt_after(1))
    assert first.interrupted and first.activation == "made the active model (there was none)"
    assert _sha(active) == _sha(first.archive)
    # a run that learns (lr 1e-3, 6 epochs) validates better than the near-untrained active model: it replaces it
    second = train(_settings(root, store, epochs=50), REGISTRY, on_epoch=_interrupt_after(6))
    assert second.interrupted and second.activation.startswith("made the active model: they validate"), (
        second.activation
    )
    assert _sha(active) == _sha(second.archive)
    good = _sha(active)
    # interrupted after one epoch at a learning rate that barely moves the weights: worse; the active model stays
    third = train(_settings(root, store, epochs=50, learning_rate=1e-7), REGISTRY, on_epoch=_interrupt_after(1))
    assert third.interrupted and third.activation.startswith(f"the active model {active} stays: it validates")
    assert _sha(active) == good and third.archive.is_file() and _sha(third.archive) != good
