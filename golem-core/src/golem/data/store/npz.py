"""``.npz`` import/export in the seed's layout, so existing recordings carry over.

Accepted on import (``T`` steps):

* ``actions``  ``[T, A]`` 0/1 (bool, int or float; floats are thresholded at 0.5)
  → uint8, ``A`` must equal the profile's action count;
* every array a registered sensor owns, converted by that sensor
  (:meth:`golem.sensors.Sensor.from_legacy`): with the shipped sensors ``frames``
  ``[T, 64, 64, 3]`` or ``[T, 3, 64, 64]``, uint8 or float in ``[0, 1]`` → uint8
  ``[T, 3, 64, 64]``; ``depths`` / ``thermals`` ``[T, 64, 64]`` or ``[T, 1, 64, 64]``
  → uint8 ``[T, 1, 64, 64]``; ``audios`` ``[T, 2, N]`` or ``[T, N, 2]`` → float16 ``[T, 2, N]``,
  resampled and re-windowed to the importing ``brain.dsp`` (see the audio sensor's ``from_legacy``);
* optional ``rewards`` ``[T]`` and ``meta`` (a 0-d JSON string written by export).

Any other array is kept as it is and reported (a warning naming it), never dropped.

A file whose name contains ``recovery`` is a recovery episode.

Export writes the *stored* layout — ``frames`` uint8 ``[T, 3, 64, 64]``, ``depths`` /
``thermals`` uint8 ``[T, 1, 64, 64]``, ``audios`` float16 ``[T, 2, N]``, ``actions``
uint8 ``[T, A]``, ``rewards`` float32 ``[T]`` and ``meta`` — which import reads back
bit for bit (channels-first is one of the two layouts the seed's files use).
Files are written compressed and atomically (temp file + rename). No pickle.
"""

from __future__ import annotations

import inspect
import json
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import structlog

from golem.atomic import atomic_write
from golem.data.arrays import ArrayRule, sensor_keys
from golem.data.store.lmdb_store import TrajectoryStore
from golem.data.store.schema import EpisodeInfo, EpisodeMeta, utc_now
from golem.errors import GolemError

log = structlog.get_logger(__name__)

#: Arrays of a seed-layout file that are not sensor arrays.
_OWN_KEYS = ("actions", "rewards", "meta")


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
    #: The importing settings (sensor sections such as ``brain.dsp``); ``None``: the defaults.
    settings: Any = None


def load_npz(
    path: str | Path, options: ImportOptions, rules: Mapping[str, ArrayRule]
) -> tuple[EpisodeMeta, dict[str, np.ndarray]]:
    """Read and check one ``.npz``; returns the episode's metadata and arrays in stored layout.

    ``rules`` are the registered sensors' arrays (:func:`golem.data.arrays.array_rules`).

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
    keys = sensor_keys(rules)
    for sensor in options.sensors:
        key = keys.get(sensor)
        if key is not None and key not in raw:
            raise GolemError(f"{name}: settings enable sensor {sensor!r} but the file has no {key!r} array")
    arrays: dict[str, np.ndarray] = {"actions": _actions(name, raw["actions"], options)}
    saved = _saved_meta(path, raw.get("meta"))
    recorded = saved.get("sensor_settings") or {}
    if not isinstance(recorded, dict) or not all(isinstance(v, dict) for v in recorded.values()):
        raise GolemError(f"{name}: 'meta' sensor_settings must map settings sections to objects")
    sensor_settings: dict[str, dict[str, Any]] = {}
    for key, value in raw.items():  # every sensor array in the file is kept, enabled or not
        if key in rules:
            owner = rules[key].owner
            model_key = getattr(owner.settings_model, "key", None)
            arrays[key] = _convert(owner, name, value, options.settings, recorded.get(model_key) if model_key else None)
            sensor_settings.update(owner(options.settings).recorded_settings())
        elif key not in _OWN_KEYS:
            if value.dtype.kind not in "biuf" or value.ndim == 0:
                raise GolemError(
                    f"{name}: array {key!r} ({value.dtype}, {list(value.shape)}) is no sensor's and not storable"
                )
            arrays[key] = value
            log.warning(
                "store.npz_unknown_array",
                file=name,
                array=key,
                shape=list(value.shape),
                known=", ".join(sorted(rules)) or "none",
            )
    if "rewards" in raw:
        rewards = np.asarray(raw["rewards"])
        if rewards.ndim != 1 or rewards.dtype.kind not in "biuf":
            raise GolemError(f"{name}: 'rewards' must be numeric [T], got {rewards.dtype} {list(rewards.shape)}")
        with np.errstate(over="ignore"):  # a reward beyond float32 becomes Inf, refused next
            arrays["rewards"] = rewards.astype(np.float32)
        if not np.isfinite(arrays["rewards"]).all():
            raise GolemError(f"{name}: 'rewards' holds NaN or Inf")
    lengths = {k: int(v.shape[0]) for k, v in arrays.items()}
    if len(set(lengths.values())) != 1:
        detail = ", ".join(f"{k}={v}" for k, v in lengths.items())
        raise GolemError(f"{name}: arrays have different lengths ({detail})")
    if lengths["actions"] < 1:
        raise GolemError(f"{name}: the recording is empty (0 steps)")
    meta = _meta(path, saved, options, arrays, keys)
    meta.sensor_settings = sensor_settings
    return meta, arrays


def import_npz(store: TrajectoryStore, path: str | Path, options: ImportOptions, rules: Mapping[str, ArrayRule]) -> int:
    """Load, check and write one ``.npz`` as an episode (one transaction); returns its id."""
    meta, arrays = load_npz(path, options, rules)
    episode_id = store.write_episode(meta, arrays, rules)
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


class NpzFormat:
    """The data format ``npz`` (``golem data import/export``'s default): one file per episode."""

    label, takes_out = "file", False

    def sources(self, paths: Sequence[Path]) -> list[tuple[str, Path]]:
        """The files named and the ``*.npz`` files under the folders named, sorted."""
        files = [f for p in map(Path, paths) for f in (sorted(p.rglob("*.npz")) if p.is_dir() else [p])]
        for f in files:
            if not f.is_file():
                raise GolemError(f"{f}: no such file or directory")
        if not files:
            raise GolemError(f"no .npz files in {', '.join(map(str, paths))}")
        return [(str(f), f) for f in files]

    def check(self, source: Path, options: ImportOptions, rules: Mapping[str, ArrayRule]) -> None:
        load_npz(source, options, rules)

    def write(
        self, store: TrajectoryStore, source: Path, options: ImportOptions, rules: Mapping[str, ArrayRule]
    ) -> list[int]:
        return [import_npz(store, source, options, rules)]

    def export(
        self,
        store: TrajectoryStore,
        infos: Sequence[EpisodeInfo],
        target: Path,
        rules: Mapping[str, ArrayRule],
        out: Path | None = None,
        advance: Callable[[], None] = lambda: None,
    ) -> tuple[dict[str, Any], str]:
        """``target/episode-NNNNNN.npz`` per episode (:func:`export_name`)."""
        written = []
        for info in infos:
            written.append({"id": info.id, "file": str(export_npz(store, info, Path(target) / export_name(info)))})
            advance()
        return {"exported": written}, f"exported {len(written)} episode(s) to {target}"


# --- helpers -------------------------------------------------------------


def _read_all(path: Path) -> dict[str, np.ndarray]:
    if not path.is_file():
        raise GolemError(f"{path}: no such file")
    if not zipfile.is_zipfile(path):  # np.load would take it for pickled data
        raise GolemError(
            f"{path.name}: not a readable .npz (no zip archive of .npy arrays: truncated, or another kind of file)"
        )
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
        if not np.isfinite(actions).all():  # NaN > 0.5 is False: it would pass as a released button
            raise GolemError(f"{name}: 'actions' holds NaN or Inf")
        return (actions > 0.5).astype(np.uint8)
    if actions.dtype.kind not in "biu" or (actions.size and not np.isin(actions, (0, 1)).all()):
        raise GolemError(f"{name}: 'actions' must hold 0/1 button states")
    return actions.astype(np.uint8)


def _convert(owner: Any, name: str, value: np.ndarray, settings: Any, recorded: dict[str, Any] | None) -> np.ndarray:
    """``owner.from_legacy`` with the importing settings, or without them for a sensor written before they existed."""
    try:
        params = inspect.signature(owner.from_legacy).parameters
    except (TypeError, ValueError):
        params = {}
    if len(params) >= 4 or any(p.kind == p.VAR_POSITIONAL for p in params.values()):
        return owner.from_legacy(name, value, settings, recorded)
    return owner.from_legacy(name, value)


def _saved_meta(path: Path, raw_meta: np.ndarray | None) -> dict[str, Any]:
    """The file's ``meta`` JSON object (``{}`` without one)."""
    if raw_meta is None:
        return {}
    try:
        saved = json.loads(str(raw_meta))
        if not isinstance(saved, dict):
            raise ValueError("not an object")
    except ValueError:
        raise GolemError(f"{path.name}: 'meta' is not a JSON object") from None
    return saved


def _meta(
    path: Path,
    saved: Mapping[str, Any],
    options: ImportOptions,
    arrays: dict[str, np.ndarray],
    keys: Mapping[str, str],
) -> EpisodeMeta:
    """The episode's metadata: the file's own values where it has them, else the importing options.

    The file's values are checked by :class:`golem.data.store.schema.MetaModel` before anything is
    combined with them, as a recorded episode's are.
    """
    source = "recovery" if "recovery" in path.name.lower() else saved.get("source", options.source)
    try:
        meta = EpisodeMeta(
            profile=options.profile,
            action_names=list(options.action_names),
            scenario=saved.get("scenario", options.scenario),
            map=saved.get("map", options.map),
            sensors=[s for s in options.sensors if keys.get(s) in arrays]
            + [s for s, k in keys.items() if k in arrays and s not in options.sensors]
            + [s for s in options.sensors if s not in keys],
            source=source,
            seed=saved.get("seed", options.seed),
            created=saved.get("created") or utc_now(),
            tags=saved.get("tags", []),
            extra=saved.get("extra") or {},
        )
    except GolemError as exc:
        raise GolemError(f"{path.name}: 'meta' {exc}") from None
    meta.tags = sorted({*meta.tags, *options.tags})
    meta.extra["imported_from"] = path.name
    if "episode" in saved:
        meta.extra["exported_episode"] = saved["episode"]
    return meta
