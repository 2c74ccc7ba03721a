"""Model checkpoints: safetensors files that describe themselves.

A checkpoint holds the model's tensors plus string metadata (JSON values):

* ``golem.format`` — layout version of this metadata;
* ``golem.version`` — the golem-core version that wrote it;
* ``golem.spec`` — :meth:`golem.learning.modelspec.ModelSpec.to_metadata` (model name,
  sensors, profile, action names, sizes, DSP settings);
* ``golem.sha256`` — SHA-256 of the tensor data section, checked on load;
* ``golem.header_sha256`` — SHA-256 of the rest of the header (every other metadata
  entry, each tensor's dtype, shape and offsets), checked whenever the metadata is
  read (format 2 on; format-1 files have none and are read without it);
* ``golem.<key>`` — each entry of ``extra`` (training settings, metrics, data
  fingerprint, …).

Weights that are not finite (NaN, ±Inf) are refused on load even when the hashes match.

:func:`rebuild_model` rebuilds the network from that metadata alone, looking the
model builder and sensor classes up by name in a registry. No pickle is read or
written. Writes are atomic: a temporary file in the target folder, then
``os.replace``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog
import torch
from safetensors import safe_open
from safetensors.torch import load as load_bytes
from safetensors.torch import save as save_bytes
from torch import nn

from golem.atomic import atomic_write
from golem.errors import GolemError
from golem.learning.modelspec import ModelSpec

if TYPE_CHECKING:
    from golem.registry import Registry

log = structlog.get_logger("golem.learning.checkpoints")

#: Layout version of the metadata written by :func:`save_checkpoint` (2: with ``golem.header_sha256``).
CHECKPOINT_FORMAT = 2
#: The first format whose files must carry ``golem.header_sha256``.
HEADER_HASH_FORMAT = 2
PREFIX = "golem."
#: Metadata keys :func:`save_checkpoint` computes itself; ``extra`` may not use them.
RESERVED = ("format", "version", "spec", "sha256", "header_sha256")
#: Largest safetensors header Golem reads, in bytes (a checkpoint's is a few kB).
MAX_HEADER_BYTES = 100 * 1024 * 1024
SUFFIX = ".safetensors"


@dataclass
class Restored:
    """A model rebuilt from a checkpoint, with the spec and metadata it was rebuilt from."""

    model: nn.Module
    spec: ModelSpec
    metadata: dict[str, Any]


def _golem_version() -> str:
    from golem import __version__

    return __version__


def _tensors(model: nn.Module | Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Contiguous CPU copies of the state dict; storage shared between entries is unshared."""
    state = model.state_dict() if isinstance(model, nn.Module) else dict(model)
    out: dict[str, torch.Tensor] = {}
    seen: set[tuple[int, int]] = set()
    for name, tensor in state.items():
        t = tensor.detach().cpu().contiguous()
        key = (t.untyped_storage().data_ptr(), t.storage_offset()) if t.numel() else (id(t), 0)
        if key in seen:
            t = t.clone()
        seen.add(key)
        out[name] = t
    return out


def save_checkpoint(
    path: str | os.PathLike[str],
    model: nn.Module | Mapping[str, torch.Tensor],
    spec_meta: Mapping[str, Any],
    extra: Mapping[str, Any] | None = None,
) -> Path:
    """Write ``model``'s state dict and metadata to ``path`` atomically; return the path.

    Args:
        path: the ``.safetensors`` file to write (its folder is created).
        model: a module or a state dict.
        spec_meta: ``ModelSpec.to_metadata()``.
        extra: more JSON-able metadata, one ``golem.<key>`` entry each, e.g.
            ``{"settings": settings.model_dump(mode="json"), "metrics": {...},
            "data_fingerprint": "…"}``.

    Raises:
        GolemError: a value that is not JSON-able, or the file cannot be written.
    """
    path = Path(path)
    metadata = {
        f"{PREFIX}format": str(CHECKPOINT_FORMAT),
        f"{PREFIX}version": _golem_version(),
        f"{PREFIX}spec": _dumps("spec", spec_meta),
    }
    for key, value in (extra or {}).items():
        if key in RESERVED:
            raise GolemError(f"checkpoint metadata key {key!r} is reserved")
        metadata[f"{PREFIX}{key}"] = _dumps(key, value)
    tensors = _tensors(model)
    # The data section and the tensors' offsets do not depend on the metadata, so hash them from a first pass.
    first = save_bytes(tensors, metadata=metadata)
    metadata[f"{PREFIX}sha256"] = hashlib.sha256(_data_section(first)).hexdigest()
    metadata[f"{PREFIX}header_sha256"] = _header_hash(_header(save_bytes(tensors, metadata=metadata)))
    blob = save_bytes(tensors, metadata=metadata)
    try:
        with atomic_write(path) as fh:
            fh.write(blob)
    except OSError as exc:
        raise GolemError(f"cannot write checkpoint {path}: {exc.strerror or exc}") from None
    log.info("checkpoint_saved", path=str(path), bytes=len(blob), model=spec_meta.get("model"))
    return path


def _dumps(key: str, value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise GolemError(f"checkpoint metadata {key!r} is not JSON-able: {exc}") from None


def read_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The decoded Golem metadata of a checkpoint, without reading its tensors.

    Returns ``{"format": int, "version": str, "spec": {...}, <extra keys>: ...}``. The header's
    ``golem.header_sha256`` is checked (the tensor data is not read).

    Raises:
        GolemError: missing, unreadable, corrupt or truncated file, no Golem metadata, or
            metadata that does not match its recorded hash.
    """
    path = Path(path)
    _check_exists(path)
    try:
        with safe_open(str(path), framework="pt") as fh:
            fh.metadata()
        with path.open("rb") as fh:
            size = int.from_bytes(fh.read(8), "little")
            if size > MAX_HEADER_BYTES:
                raise ValueError(f"header of {size} bytes")
            header = json.loads(fh.read(size))
    except Exception as exc:  # safetensors raises its own error types for bad headers
        raise _corrupt(path, exc) from None
    return _checked(path, header)


def load_checkpoint(
    path: str | os.PathLike[str], *, finite: bool = True
) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """``(state_dict, metadata)`` of a checkpoint; tensors on the CPU, metadata decoded as in :func:`read_metadata`.

    Both recorded hashes are checked (tensor data, and header from format 2), and with ``finite``
    every floating-point tensor must hold only finite values.

    Raises:
        GolemError: missing, unreadable, corrupt or truncated file, no Golem metadata, a hash
            that does not match, or NaN/Inf weights (with ``finite``).
    """
    path = Path(path)
    _check_exists(path)
    try:
        blob = path.read_bytes()
    except OSError as exc:
        raise GolemError(f"cannot read checkpoint {path}: {exc.strerror or exc}") from None
    try:
        state = load_bytes(blob)
        header = _header(blob)
    except Exception as exc:
        raise _corrupt(path, exc) from None
    metadata = _checked(path, header)
    expected = metadata.get("sha256")
    if expected is None:
        raise GolemError(
            f"checkpoint {path} has no recorded SHA-256 of its tensors (golem.sha256); it cannot be checked"
        )
    if hashlib.sha256(_data_section(blob)).hexdigest() != expected:
        raise GolemError(f"checkpoint {path} is corrupt: its tensor data does not match the recorded SHA-256")
    if finite:
        for name, tensor in state.items():
            if (tensor.is_floating_point() or tensor.is_complex()) and not bool(torch.isfinite(tensor).all()):
                raise GolemError(f"checkpoint {path} has non-finite weights (NaN or Inf) in {name}; it cannot be used")
    return state, metadata


def _header(blob: bytes) -> dict[str, Any]:
    """The JSON header of a safetensors byte string (8-byte little-endian header size, then JSON)."""
    size = int.from_bytes(blob[:8], "little")
    return dict(json.loads(blob[8 : 8 + size]))


def _header_hash(header: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of a safetensors header without its ``golem.header_sha256`` entry, keys sorted."""
    meta = {k: v for k, v in (header.get("__metadata__") or {}).items() if k != f"{PREFIX}header_sha256"}
    canonical = {**{k: v for k, v in header.items() if k != "__metadata__"}, "__metadata__": meta}
    return hashlib.sha256(json.dumps(canonical, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _checked(path: Path, header: Mapping[str, Any]) -> dict[str, Any]:
    """The decoded metadata of ``header``, its ``golem.header_sha256`` checked (required from format 2)."""
    raw = dict(header.get("__metadata__") or {})
    metadata = _decode(path, raw)
    expected = raw.get(f"{PREFIX}header_sha256")
    if expected is None and int(metadata.get("format", 1)) >= HEADER_HASH_FORMAT:
        raise GolemError(
            f"checkpoint {path} has format {metadata.get('format')} but no golem.header_sha256; it was altered"
        )
    if expected is not None and _header_hash(header) != expected:
        raise GolemError(f"checkpoint {path} is corrupt: its metadata does not match the recorded SHA-256")
    return metadata


def _data_section(blob: bytes) -> bytes:
    """The tensor bytes of a safetensors byte string (everything after the header)."""
    return blob[8 + int.from_bytes(blob[:8], "little") :]


def _check_exists(path: Path) -> None:
    if not path.is_file():
        raise GolemError(f"checkpoint not found: {path}")


def _corrupt(path: Path, exc: BaseException) -> GolemError:
    detail = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return GolemError(f"checkpoint {path} is corrupt or truncated (not a readable safetensors file: {detail})")


def _decode(path: Path, raw: Mapping[str, str]) -> dict[str, Any]:
    if f"{PREFIX}spec" not in raw:
        raise GolemError(f"checkpoint {path} has no Golem metadata (golem.spec); it cannot be rebuilt")
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if not key.startswith(PREFIX):
            continue
        name = key[len(PREFIX) :]
        if name in ("version", "sha256", "header_sha256"):
            out[name] = value
            continue
        try:
            out[name] = json.loads(value)
        except json.JSONDecodeError:
            raise GolemError(f"checkpoint {path} has unreadable metadata {key!r} (not JSON)") from None
    if int(out.get("format", CHECKPOINT_FORMAT)) > CHECKPOINT_FORMAT:
        raise GolemError(
            f"checkpoint {path} has format {out['format']}, newer than this Golem reads "
            f"({CHECKPOINT_FORMAT}); upgrade golem-core"
        )
    return out


def restore(path: str | os.PathLike[str], registry: Registry) -> Restored:
    """Rebuild the model saved at ``path`` from its metadata and load its weights (eval mode).

    The model builder and the sensor classes are looked up by name in
    ``registry`` (e.g. ``golem.plugins.load_plugins().registry``).

    Raises:
        GolemError: a bad file, an unknown model or sensor, or weights that do not
            fit the rebuilt architecture.
    """
    state, metadata = load_checkpoint(path)
    spec = ModelSpec.from_metadata(metadata["spec"], registry)
    builder = registry.get("models", spec.model).obj
    model = builder(spec)
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        detail = " ".join(str(exc).split())[:300]
        raise GolemError(
            f"checkpoint {path} does not fit the {spec.model!r} model rebuilt from its metadata: {detail}"
        ) from None
    model.eval()
    log.debug("checkpoint_restored", path=str(path), model=spec.model, sensors=spec.sensor_names)
    return Restored(model=model, spec=spec, metadata=metadata)


def rebuild_model(path: str | os.PathLike[str], registry: Registry) -> nn.Module:
    """The model saved at ``path``, rebuilt purely from its metadata, weights loaded, in eval mode.

    See :func:`restore` for the spec and metadata as well.
    """
    return restore(path, registry).model


def checkpoint_sha256(path: str | Path) -> str:
    """SHA-256 (hex) of a checkpoint file: which model a recovery episode corrected."""
    import hashlib

    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


__all__ = [
    "checkpoint_sha256",
    "CHECKPOINT_FORMAT",
    "Restored",
    "load_checkpoint",
    "read_metadata",
    "rebuild_model",
    "restore",
    "save_checkpoint",
]
