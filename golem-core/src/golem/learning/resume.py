"""``--resume``: fine-tune the profile's active model instead of a fresh one, continuing its epoch count."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog
from torch import nn

from golem.errors import GolemError
from golem.learning.archives import ACTIVE
from golem.learning.checkpoints import restore
from golem.learning.modelspec import ModelSpec
from golem.registry import Registry
from golem.settings import GolemSettings

# the events are the training job's own (train.*)
log = structlog.get_logger("golem.learning.training")

#: What must match between the active model and the settings for ``--resume``.
RESUMABLE_KEYS = (
    "model",
    "profile",
    "action_names",
    "sensors",
    "sensor_shapes",
    "working_memory",
    "cortical_depth",
    "feature_norm",
)


@dataclass
class Resumed:
    """The active model to fine-tune, and where its training stood.

    Attributes:
        model: the restored network (on the CPU, as loaded).
        history: its earlier epochs (``EpochRecord.to_dict`` each), which this run extends.
        first_epoch: the epoch number this run starts at (0 when it has no history).
        source: ``{"path", "created"}`` of the active model, for the new checkpoint's ``data.resumed_from``.
    """

    model: nn.Module
    history: list[dict[str, Any]]
    first_epoch: int
    source: dict[str, Any]


def resume_active(settings: GolemSettings, registry: Registry, spec: ModelSpec) -> Resumed:
    """The profile's active model, checked to be the architecture ``spec`` describes.

    Raises:
        GolemError: no active model, or one whose architecture, profile, buttons or sensors differ from ``spec``.
    """
    path = settings.models_path() / ACTIVE
    if not path.is_file():
        raise GolemError(f"cannot --resume: no active model at {path}; train once without --resume")
    restored = restore(path, registry)
    check_resumable(path, restored.spec, spec)
    history = list((restored.metadata.get("metrics") or {}).get("history") or [])
    first_epoch = (history[-1]["epoch"] + 1) if history else 0
    source = {"path": str(path), "created": restored.metadata.get("created")}
    log.info("train.resume", path=str(path), epochs_before=first_epoch)
    return Resumed(model=restored.model, history=history, first_epoch=first_epoch, source=source)


def check_resumable(path: Path, found: ModelSpec, wanted: ModelSpec) -> None:
    """The active model must be the architecture the settings describe (one-line GolemError if not)."""
    a, b = found.to_metadata(), wanted.to_metadata()
    for key in RESUMABLE_KEYS:
        if a.get(key) != b.get(key):
            raise GolemError(
                f"cannot --resume: the active model {path} has {key}={a.get(key)} but the settings ask for "
                f"{b.get(key)}; change the settings to match it or train without --resume"
            )


__all__ = ["RESUMABLE_KEYS", "Resumed", "check_resumable", "resume_active"]
