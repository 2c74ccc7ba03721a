"""``.npz`` import/export in the seed's layout, so existing recordings carry over.

Accepted on import (``T`` steps):

* ``frames``   ``[T, 64, 64, 3]`` or ``[T, 3, 64, 64]``, uint8 or float in ``[0, 1]``
  → stored uint8 ``[T, 3, 64, 64]``;
* ``actions``  ``[T, A]`` 0/1 (bool, int or float; floats are thresholded at 0.5)
  → uint8, ``A`` must equal the profile's action count;
* ``depths`` / ``thermals`` ``[T, 64, 64]`` or ``[T, 1, 64, 64]``, uint8 or float in ``[0, 1]``
  → uint8 ``[T, 1, 64, 64]``;
* ``audios``   ``[T, 2, N]`` or ``[T, N, 2]`` → float16 ``[T, 2, N]``;
* optional ``rewards`` ``[T]`` and ``meta`` (a 0-d JSON string written by export).

A file whose name contains ``recovery`` is a recovery episode.

Export writes the *stored* layout — ``frames`` uint8 ``[T, 3, 64, 64]``, ``depths`` /
``thermals`` uint8 ``[T, 1, 64, 64]``, ``audios`` float16 ``[T, 2, N]``, ``actions``
uint8 ``[T, A]``, ``rewards`` float32 ``[T]`` and ``meta`` — which import reads back
bit for bit (channels-first is one of the two layouts the seed's files use).
Files are written compressed and atomically (temp file + rename). No pickle.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import structlog

from golem.atomic import atomic_write
from golem.errors import GolemError
from golem.data.store.lmdb_store import TrajectoryStore
from golem.data.store.schema import SENSOR_KEYS, EpisodeInfo, EpisodeMeta, utc_now

log = structlog.get_logger(__name__)

MODALITIES = ("frames", "depths", "thermals", "audios")


@dataclass(frozen=True)
class ImportOptions:
    """What an imported episode is: profile and its action names, enabled sensors, where it was played."""

    profile: str
    action_names: Sequence[str]
    sensors: Sequence[str] = ("visual",)
    scenario: str = "basic"
    map: str | None = None
    seed: int | None = None
    source: str = "human"
    tags: Sequence[str] = ()


def load_npz(path: str | Path, options: ImportOptions) -> tuple[EpisodeMeta, dict[str, np.ndarray]]:
    """Read and check one ``.npz``; returns the episode's metadata and arrays in stored layout.

    Raises:
        GolemError: one line naming the file and the problem (unreadable or
            truncated file, missing ``actions`` or a modality the sensors need,
            wrong action width, mismatched lengths, out-of-range values).
    """
    path = Path(path)
    raw = _read_all(path)
    name = path.name
    if "actions" not in raw:
        raise GolemError(f"{name}: no 'actions' array (has {', '.join(sorted(raw)) or 'nothing'})")
    for sensor in options.sensors:
        key = SENSOR_KEYS.get(sensor)
        if key is not None and key not in raw:
            raise GolemError(f"{name}: settings enable sensor {sensor!r} but the file has no {key!r} array")
    arrays: dict[str, np.ndarray] = {"actions": _actions(name, raw["actions"], options)}
    for key in MODALITIES:  # every modality in the file is kept, enabled or not
        if key in raw:
            arrays[key] = _modality(name, key, raw[key])
    if "rewards" in raw:
        rewards = np.asarray(raw["rewards"])
        if rewards.ndim != 1 or rewards.dtype.kind not in "biuf":
            raise GolemError(f"{name}: 'rewards' must be numeric [T], got {rewards.dtype} {list(rewards.shape)}")
        arrays["rewards"] = rewards.astype(np.float32)
    lengths = {k: int(v.shape[0]) for k, v in arrays.items()}
    if len(set(lengths.values())) != 1:
        detail = ", ".join(f"{k}={v}" for k, v in lengths.items())
        raise GolemError(f"{name}: arrays have different lengths ({detail})")
    if lengths["actions"] < 1:
        raise GolemError(f"{name}: the recording is empty (0 steps)")
    meta = _meta(path, raw.get("meta"), options, arrays)
    return meta, arrays


def import_npz(store: TrajectoryStore, path: str | Path, options: ImportOptions) -> int:
    """Load, check and write one ``.npz`` as an episode (one transaction); returns its id."""
    meta, arrays = load_npz(path, options)
    episode_id = store.write_episode(meta, arrays)
    log.info("store.npz_imported", file=str(path), episode=episode_id, steps=meta.length, source=meta.source)
    return episode_id


def export_npz(store: TrajectoryStore, episode: int | EpisodeInfo, path: str | Path) -> Path:
    """Write one episode to ``path`` in the stored layout (see module docstring), atomically."""
    info = episode if isinstance(episode, EpisodeInfo) else store.get(episode)
    arrays = store.read_episode(info)
    arrays["meta"] = np.array(json.dumps({**info.meta.to_dict(), "episode": info.id}))
    path = Path(path)
    with atomic_write(path) as fh:
        np.savez_compressed(fh, **arrays)
    log.info("store.npz_exported", file=str(path), episode=info.id, steps=info.length)
    return path


def export_name(info: EpisodeInfo) -> str:
    """``episode-000042.npz``, or ``episode-000042-recovery.npz`` so a re-import keeps the source."""
    suffix = "-recovery" if info.meta.source == "recovery" else ""
    return f"episode-{info.id:06d}{suffix}.npz"


# --- helpers -------------------------------------------------------------


def _read_all(path: Path) -> dict[str, np.ndarray]:
    if not path.is_file():
        raise GolemError(f"{path}: no such file")
    try:
        with np.load(path, allow_pickle=False) as data:
            return {key: np.asarray(data[key]) for key in data.files}
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError, zipfile.LargeZipFile) as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise GolemError(f"{path.name}: not a readable .npz (corrupt or truncated: {detail})") from None
    except Exception as exc:  # zlib.error and friends from a damaged member
        raise GolemError(f"{path.name}: not a readable .npz ({type(exc).__name__}: {exc})") from None


def _actions(name: str, actions: np.ndarray, options: ImportOptions) -> np.ndarray:
    if actions.ndim != 2:
        raise GolemError(f"{name}: 'actions' must be [T, A], got shape {list(actions.shape)}")
    width = len(options.action_names)
    if actions.shape[1] != width:
        raise GolemError(
            f"{name}: 'actions' has {actions.shape[1]} columns but profile {options.profile!r} has {width} actions"
        )
    if actions.dtype.kind == "f":
        return (actions > 0.5).astype(np.uint8)
    if actions.dtype.kind not in "biu" or (actions.size and not np.isin(actions, (0, 1)).all()):
        raise GolemError(f"{name}: 'actions' must hold 0/1 button states")
    return actions.astype(np.uint8)


def _to_uint8(name: str, key: str, arr: np.ndarray) -> np.ndarray:
    if arr.dtype == np.uint8:
        return arr
    if arr.dtype.kind == "f":
        if arr.size and (np.nanmin(arr) < -1e-3 or np.nanmax(arr) > 1 + 1e-3 or np.isnan(arr).any()):
            raise GolemError(f"{name}: float {key!r} must lie in [0, 1]")
        return np.rint(np.clip(arr, 0.0, 1.0) * 255.0).astype(np.uint8)
    raise GolemError(f"{name}: {key!r} must be uint8 or float in [0, 1], got {arr.dtype}")


def _modality(name: str, key: str, arr: np.ndarray) -> np.ndarray:
    shape = list(arr.shape)
    if key == "frames":
        if arr.ndim == 4 and arr.shape[1] == 3:
            pass
        elif arr.ndim == 4 and arr.shape[3] == 3:
            arr = arr.transpose(0, 3, 1, 2)
        else:
            raise GolemError(f"{name}: 'frames' must be [T, H, W, 3] or [T, 3, H, W], got {shape}")
        return np.ascontiguousarray(_to_uint8(name, key, arr))
    if key in ("depths", "thermals"):
        if arr.ndim == 3:
            arr = arr[:, None]
        elif not (arr.ndim == 4 and arr.shape[1] == 1):
            raise GolemError(f"{name}: {key!r} must be [T, H, W] or [T, 1, H, W], got {shape}")
        return np.ascontiguousarray(_to_uint8(name, key, arr))
    # audios
    if arr.ndim != 3 or 2 not in arr.shape[1:]:
        raise GolemError(f"{name}: 'audios' must be [T, 2, N] or [T, N, 2], got {shape}")
    if arr.dtype.kind != "f":
        raise GolemError(f"{name}: 'audios' must be float, got {arr.dtype}")
    if arr.shape[1] != 2:
        arr = arr.transpose(0, 2, 1)
    return np.ascontiguousarray(arr.astype(np.float16))


def _meta(path: Path, raw_meta: np.ndarray | None, options: ImportOptions, arrays: dict[str, np.ndarray]) -> EpisodeMeta:
    saved: dict[str, Any] = {}
    if raw_meta is not None:
        try:
            saved = json.loads(str(raw_meta))
            if not isinstance(saved, dict):
                raise ValueError("not an object")
        except ValueError:
            raise GolemError(f"{path.name}: 'meta' is not a JSON object") from None
    source = "recovery" if "recovery" in path.name.lower() else saved.get("source", options.source)
    extra = dict(saved.get("extra") or {})
    extra["imported_from"] = path.name
    if "episode" in saved:
        extra["exported_episode"] = saved["episode"]
    return EpisodeMeta(
        profile=options.profile,
        action_names=list(options.action_names),
        scenario=saved.get("scenario", options.scenario),
        map=saved.get("map", options.map),
        sensors=[s for s, k in SENSOR_KEYS.items() if k in arrays]
        + [s for s in options.sensors if s not in SENSOR_KEYS],
        source=source,
        seed=saved.get("seed", options.seed),
        created=saved.get("created") or utc_now(),
        tags=sorted({*saved.get("tags", []), *options.tags}),
        extra=extra,
    )
