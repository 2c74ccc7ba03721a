"""Fine-tuned checkpoints: ordinary Golem safetensors that say what they were fine-tuned from.

A fine-tuned file is written by :func:`golem.learning.checkpoints.save_checkpoint` (atomic,
hashed metadata) with the cloned checkpoint's architecture and metadata (its training, data
and metrics: play finds its scenario and frame skip there as for the source), plus:

* ``finetuned_from`` — the source file's SHA-256, name and creation time;
* ``rl`` — the run's ``rl`` settings; ``frames`` — environment frames seen;
* ``evaluation`` — the last evaluation by play (held-out mean return, confirmation);
* ``thresholds`` — the press thresholds play uses (``rl.thresholds``);
* ``decisions`` — ``"sample"`` where play draws each button from its probability (``rl.decisions``).

Only the policy's tensors are stored (the value head is not), so ``golem run play``,
``evaluate``, ``tune`` and ``models list`` treat the file like any model.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import torch

from golem.data.store.schema import utc_now
from golem.learning.archives import ACTIVE, ARCHIVE
from golem.learning.checkpoints import RESERVED, checkpoint_sha256, save_checkpoint
from golem.learning.modelspec import ModelSpec
from golem.settings import GolemSettings


def archive_path(models: Path, model: str, tail: str = "") -> Path:
    """``<models>/archive/<UTC stamp>-<model>-rl<tail>.safetensors``, numbered when taken."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    base = f"{stamp}-{model}-rl{tail}"
    path, n = models / ARCHIVE / f"{base}.safetensors", 1
    while path.exists():
        path, n = models / ARCHIVE / f"{base}-{n}.safetensors", n + 1
    return path


def finetuned_metadata(
    source: Path,
    source_metadata: Mapping[str, Any],
    *,
    rl: Mapping[str, Any],
    frames: int,
    frame_skip: int,
    scenario: str | None,
    thresholds: Mapping[str, float] | None,
    evaluation: Mapping[str, Any] | None,
    interrupted: bool = False,
    decisions: str = "threshold",
    world: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``extra`` metadata of a checkpoint fine-tuned from ``source`` (see the module's docstring).

    ``data.frame_skip`` becomes the skip the policy was fine-tuned at, so play decides as often.
    On generated maps ``scenario`` is ``None`` (a checkpoint names only shipped scenarios) and ``world``
    says which: ``{"generator": "builtin", "phase": 1}``.
    """
    extra = {k: v for k, v in source_metadata.items() if k not in RESERVED}
    data = dict(extra.get("data") or {})
    data["frame_skip"] = int(frame_skip)
    extra.update(
        data=data,
        scenario=scenario,
        thresholds=dict(thresholds) if thresholds else extra.get("thresholds"),
        finetuned_from={
            "sha256": checkpoint_sha256(source),
            "file": Path(source).name,
            "created": source_metadata.get("created"),
        },
        rl=dict(rl),
        frames=int(frames),
        evaluation=dict(evaluation) if evaluation else None,
        interrupted=bool(interrupted),
        decisions=str(decisions),
        created=utc_now(),
    )
    if world is not None:
        extra["world"] = dict(world)
    if thresholds:
        extra["activation"] = 0.5 if set(thresholds.values()) == {0.5} else extra.get("activation")
    return extra


def save_finetuned(
    settings: GolemSettings,
    state: Mapping[str, torch.Tensor],
    spec: ModelSpec,
    extra: Mapping[str, Any],
    *,
    tail: str = "",
    activate: bool = False,
) -> tuple[Path, Path | None]:
    """Write the archive (and with ``activate`` the profile's active model); ``(archive, active or None)``.

    Raises:
        GolemError: a file cannot be written.
    """
    models = settings.models_path()
    archive = save_checkpoint(archive_path(models, spec.model, tail), state, spec.to_metadata(), extra)
    active = save_checkpoint(models / ACTIVE, state, spec.to_metadata(), extra) if activate else None
    return archive, active


__all__ = ["archive_path", "finetuned_metadata", "save_finetuned"]
