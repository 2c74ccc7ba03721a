"""Checkpoints on disk: the active model of a profile, loading one, and listing the archives.

Layout (written by :func:`save_model`, which training calls)::

    <data.root>/models/<profile>/active.safetensors
    <data.root>/models/<profile>/archive/<UTC stamp>-<model>.safetensors

Listing reads only the safetensors headers (:func:`golem.learning.checkpoints.read_metadata`),
never the tensors.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from golem.atomic import atomic_write, clean_stale_temps
from golem.data.store.schema import utc_now
from golem.errors import GolemError
from golem.learning.checkpoints import RESERVED, Restored, load_checkpoint, read_metadata, restore, save_checkpoint

if TYPE_CHECKING:
    from torch import nn

    from golem.learning.modelspec import ModelSpec
    from golem.registry import Registry
    from golem.settings import GolemSettings

log = structlog.get_logger("golem.learning.archives")

#: A profile's active model, under ``<data.root>/models/<profile>/``.
ACTIVE = "active.safetensors"
#: The folder of a profile's timestamped archives.
ARCHIVE = "archive"


# --- saving ------------------------------------------------------------------


def _archive_path(models: Path, model: str, interrupted: bool) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    tail = "-interrupted" if interrupted else ""
    path = models / ARCHIVE / f"{stamp}-{model}{tail}.safetensors"
    n = 1
    while path.exists():
        path = models / ARCHIVE / f"{stamp}-{model}{tail}-{n}.safetensors"
        n += 1
    return path


def save_model(
    settings: GolemSettings,
    model: nn.Module,
    spec: ModelSpec,
    metrics: Mapping[str, Any],
    data: Mapping[str, Any],
    *,
    interrupted: bool = False,
    thresholds: Mapping[str, float] | None = None,
    activate: bool = True,
) -> tuple[Path, Path]:
    """Write the timestamped archive and (``activate``) the profile's active model; returns ``(archive, active)``.

    With ``activate=False`` only the archive is written and the active model stays as it was.

    Metadata: the spec, ``training`` (``augmentations`` and ``mirror`` included), ``loss`` and
    ``augment`` (the augmentations' own) settings, ``metrics`` (history
    and final validation) and ``data`` (store path, episode ids, total steps),
    and ``thresholds`` (action name → press threshold calibrated on validation)
    when given: play and evaluate use them unless ``brain.activation`` is set.
    """
    models = settings.models_path()
    extra = {
        "training": settings.training.model_dump(mode="json"),
        "loss": settings.loss.model_dump(mode="json"),
        "augment": settings.augment.model_dump(mode="json"),
        "activation": settings.brain.activation,
        "thresholds": dict(thresholds) if thresholds else None,
        "metrics": dict(metrics),
        "data": dict(data),
        "interrupted": interrupted,
        "created": utc_now(),
    }
    archive = save_checkpoint(_archive_path(models, spec.model, interrupted), model, spec.to_metadata(), extra)
    if not activate:
        return archive, models / ACTIVE
    active = save_checkpoint(models / ACTIVE, model, spec.to_metadata(), extra)
    return archive, active


def save_retuned(
    settings: GolemSettings, source: Path, thresholds: Mapping[str, float], record: Mapping[str, Any]
) -> tuple[Path, Path]:
    """Copy checkpoint ``source`` with new press ``thresholds`` as a new archive and the active model.

    The weights and every other metadata entry are kept; ``thresholds`` replaces
    the stored ones, ``created`` is now, and ``record`` is stored as
    ``tuned_by_play`` (with the source's file name and its ``created`` as
    ``trained``). ``source`` itself is not changed. Returns ``(archive, active)``.

    Raises:
        GolemError: a missing or corrupt ``source``, or a file that cannot be written.
    """
    state, metadata = load_checkpoint(source)
    spec_meta = metadata["spec"]
    extra = {k: v for k, v in metadata.items() if k not in RESERVED}
    extra["thresholds"] = {name: float(v) for name, v in thresholds.items()}
    extra["tuned_by_play"] = {**dict(record), "source": Path(source).name, "trained": metadata.get("created")}
    extra["created"] = utc_now()
    models = settings.models_path()
    name = f"{spec_meta.get('model', 'model')}-tuned"
    archive = save_checkpoint(_archive_path(models, name, False), state, spec_meta, extra)
    active = save_checkpoint(models / ACTIVE, state, spec_meta, extra)
    return archive, active


def active_model_path(settings: GolemSettings) -> Path:
    """``<data.root>/models/<brain.profile>/active.safetensors`` (it may not exist)."""
    return settings.models_path() / ACTIVE


def resolve_model(settings: GolemSettings, model: Path | None = None) -> Path:
    """The checkpoint to use: ``model`` when given, else the profile's active model.

    Raises:
        GolemError: the file does not exist (for the active model: "no active model
            for profile P; run `golem run train` first").
    """
    if model is not None:
        path = Path(model).expanduser()
        if not path.is_file():
            raise GolemError(f"checkpoint not found: {path}")
        return path
    path = active_model_path(settings)
    if not path.is_file():
        raise GolemError(
            f"no active model for profile {settings.brain.profile}; run `golem run train` first, or pass --model PATH"
        )
    return path


def load_model(settings: GolemSettings, registry: Registry, model: Path | None = None) -> tuple[Path, Restored]:
    """``(path, restored)``: :func:`resolve_model` then :func:`golem.learning.checkpoints.restore` (eval mode, CPU).

    Raises:
        GolemError: missing, corrupt or unbuildable checkpoint.
    """
    path = resolve_model(settings, model)
    restored = restore(path, registry)
    log.debug("model.loaded", path=str(path), model=restored.spec.model, sensors=restored.spec.sensor_names)
    return path, restored


# --- listing -----------------------------------------------------------------


@dataclass
class ArchiveEntry:
    """One archived checkpoint, described from its metadata.

    ``error`` is set (and the rest mostly ``None``) when the file cannot be read.
    """

    profile: str
    path: str
    bytes: int
    created: str | None = None
    model: str | None = None
    sensors: list[str] = field(default_factory=list)
    epochs: int | None = None
    loss: str | None = None
    learning_rate: float | None = None
    sequence_length: int | None = None
    batch_size: int | None = None
    validation: dict[str, Any] | None = None
    interrupted: bool = False
    active: bool = False
    error: str | None = None
    finetuned_from: dict[str, Any] | None = None
    frames: int | None = None
    evaluation: dict[str, Any] | None = None
    decisions: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def mean_f1(self) -> float | None:
        """Mean F1 over the actions whose F1 is defined (``None`` without validation)."""
        actions = (self.validation or {}).get("actions") or {}
        f1s = [a.get("f1") for a in actions.values() if a.get("f1") is not None]
        return sum(f1s) / len(f1s) if f1s else None

    @property
    def finetuned(self) -> bool:
        """Whether this checkpoint was fine-tuned by reinforcement from another (its validation is the source's)."""
        return self.finetuned_from is not None


def _entry(profile: str, path: Path, active_sha: str | None) -> ArchiveEntry:
    size = path.stat().st_size
    try:
        meta = read_metadata(path)
    except GolemError as exc:
        return ArchiveEntry(profile=profile, path=str(path), bytes=size, error=str(exc))
    spec = meta.get("spec") or {}
    training = meta.get("training") or {}
    history = (meta.get("metrics") or {}).get("history") or []
    created = meta.get("created") or datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat(timespec="seconds")
    return ArchiveEntry(
        profile=profile,
        path=str(path),
        bytes=size,
        created=created,
        model=spec.get("model"),
        sensors=list(spec.get("sensors") or []),
        epochs=len(history) if history else training.get("epochs"),
        loss=training.get("loss"),
        learning_rate=training.get("learning_rate"),
        sequence_length=training.get("sequence_length"),
        batch_size=training.get("batch_size"),
        validation=(meta.get("metrics") or {}).get("validation"),
        interrupted=bool(meta.get("interrupted", False)),
        active=active_sha is not None and meta.get("sha256") == active_sha,
        finetuned_from=meta.get("finetuned_from") if isinstance(meta.get("finetuned_from"), dict) else None,
        frames=int(meta["frames"]) if isinstance(meta.get("frames"), int) else None,
        evaluation=meta.get("evaluation") if isinstance(meta.get("evaluation"), dict) else None,
        decisions=str(meta["decisions"]) if meta.get("decisions") else None,
    )


@dataclass(frozen=True)
class ActiveModel:
    """A profile's active model as checked: its path, and why it is damaged (``None`` when whole)."""

    profile: str
    path: str
    error: str | None = None


def active_models(settings: GolemSettings, profile: str | None = None) -> list[ActiveModel]:
    """Every profile's active model, each read whole and checked against its recorded SHA-256."""
    out = []
    for folder in _profile_folders(settings, profile):
        path = folder / ACTIVE
        if path.is_file():
            try:
                load_checkpoint(path)
                out.append(ActiveModel(folder.name, str(path)))
            except GolemError as exc:
                out.append(ActiveModel(folder.name, str(path), error=str(exc)))
    return out


def activate(settings: GolemSettings, archive: Path) -> Path:
    """Make ``archive`` its profile's active model (checked whole first, copied atomically); returns the active path.

    Raises:
        GolemError: the archive is missing or damaged.
    """
    blob_path = Path(archive)
    _, metadata = load_checkpoint(blob_path)  # verifies the SHA-256 of the tensor data
    profile = str((metadata.get("spec") or {}).get("profile") or settings.brain.profile)
    target = settings.data.root / "models" / profile / ACTIVE
    with atomic_write(target) as fh:
        fh.write(blob_path.read_bytes())
    log.info("model.activated", archive=str(blob_path), active=str(target))
    return target


def _profile_folders(settings: GolemSettings, profile: str | None) -> list[Path]:
    root = settings.data.root / "models"
    if profile is not None:
        return [root / profile]
    return sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


def list_archives(settings: GolemSettings, profile: str | None = None) -> list[ArchiveEntry]:
    """Every archived checkpoint under ``<data.root>/models``, per profile, oldest first.

    Args:
        profile: only this profile (default: every profile folder found).

    Temporary files of killed writes are removed first (:func:`golem.atomic.clean_stale_temps`).
    An archive whose tensor hash equals the active model's is marked ``active``,
    provided the active file is whole (read and checked against its SHA-256): a
    damaged active model marks nothing. Unreadable files are listed with
    ``error`` set rather than failing the listing.
    """
    out: list[ArchiveEntry] = []
    for folder in _profile_folders(settings, profile):
        for place in (folder, folder / ARCHIVE):  # temporary files a killed training run left
            clean_stale_temps(place)
        active_sha = None
        if (folder / ACTIVE).is_file():
            try:
                active_sha = load_checkpoint(folder / ACTIVE)[1].get("sha256")
            except GolemError:
                active_sha = None
        for path in sorted((folder / ARCHIVE).glob("*.safetensors")):
            out.append(_entry(folder.name, path, active_sha))
    return out


__all__ = [
    "ACTIVE",
    "ARCHIVE",
    "ActiveModel",
    "ArchiveEntry",
    "activate",
    "active_model_path",
    "active_models",
    "list_archives",
    "load_model",
    "resolve_model",
    "save_model",
    "save_retuned",
]
