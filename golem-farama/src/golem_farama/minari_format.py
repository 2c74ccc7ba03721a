"""Minari datasets to and from the trajectory store: the ``minari`` data format.

A dataset ``namespace/name-vN`` is written under a datasets folder — ``--out DIR``, else
``$MINARI_DATASETS_PATH``, else ``~/.minari/datasets`` as Minari itself looks — at
``DIR/namespace/name-vN/data`` (HDF5, no JPEG: frames are kept bit for bit), so
``minari.load_dataset("namespace/name-vN")`` reads it with ``MINARI_DATASETS_PATH=DIR``.

Per episode of ``N`` steps:

* ``observations``: a ``Dict`` with one ``Box`` per sensor array, stored dtype and step shape
  (``frames`` uint8 ``[N+1, 3, 64, 64]``, ``audios`` float16 ``[N+1, 2, S]``, …), the same space
  as the Gymnasium env's. Minari wants ``N+1`` observations and a store keeps the ``N`` that
  were acted on, so the last one is repeated; import drops it.
* ``actions``: ``MultiBinary(A)`` int8 ``[N, A]``, ``A`` = the profile's buttons.
* ``rewards`` float32 ``[N]``; ``terminations`` / ``truncations`` bool ``[N]``, all ``False`` but the
  last step: terminated when the episode ended by death or exit, else truncated (also when the
  recorder did not know: the data stops there, with no terminal state).
* ``infos``: the other stored arrays (``tic`` int32, …) as ``[N+1, …]``, last one repeated.
* episode metadata: ``golem_meta`` (the :class:`EpisodeMeta` as JSON: profile, action names,
  scenario/map, sensors, source, seed, length, return, created, tags, …) and ``golem_episode``
  (the id in the exporting store); ``seed`` is Minari's own.

The dataset's metadata has ``env_spec`` (``Golem/<scenario>-v0`` with the sensors, profile and
frame skip, so ``dataset.recover_environment()`` plays the same world) when every episode shares
them, and a ``golem`` entry (version, source store, episode ids, action names, profile, sensors).

Import checks every episode before writing any, so a bad dataset leaves the store unchanged.
A dataset Golem did not write is accepted when its spaces fit: a ``Dict`` of registered sensor
arrays and ``MultiBinary`` of the importing profile's width; its episodes then get the importing
settings' profile, scenario and source.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import structlog

from golem.data.arrays import ArrayRule
from golem.data.store.lmdb_store import TrajectoryStore
from golem.data.store.npz import ImportOptions
from golem.data.store.schema import EpisodeInfo, EpisodeMeta, normalise_arrays
from golem.errors import GolemError

log = structlog.get_logger(__name__)

#: What to install for Minari support.
EXTRA = "golem-farama"
#: Episode attribute holding the Golem metadata as JSON.
META_ATTR = "golem_meta"
#: Episode attribute holding the episode's id in the exporting store.
EPISODE_ATTR = "golem_episode"
#: Minari's storage backend used for export (HDF5 through h5py).
DATA_FORMAT = "hdf5"
_NAMESPACE_FILE = "namespace_metadata.json"


def require_minari() -> Any:
    """The ``minari`` module with its HDF5 backend.

    Raises:
        GolemError: Minari or h5py is not installed (one line naming the extra).
    """
    try:
        import h5py  # noqa: F401  (Minari's HDF5 storage)
        import minari
    except ImportError as exc:
        raise GolemError(f"Minari support is not installed ({exc.name} missing): pip install {EXTRA}") from None
    return minari


def datasets_root(out: str | Path | None = None) -> Path:
    """The folder datasets live in: ``out``, else ``$MINARI_DATASETS_PATH``, else ``~/.minari/datasets``."""
    if out is not None:
        return Path(out).expanduser()
    env = os.environ.get("MINARI_DATASETS_PATH")
    return Path(env).expanduser() if env else Path.home() / ".minari" / "datasets"


@dataclass(frozen=True)
class MinariExport:
    """What an export wrote: the dataset id, its folder (holding ``data/``), episodes and steps."""

    dataset_id: str
    path: Path
    episodes: list[int] = field(default_factory=list)
    steps: int = 0


def _box(dtype: np.dtype[Any], shape: Sequence[int]) -> Any:
    """The ``Box`` of one stored array step: the dtype's whole range (as the Gymnasium env's)."""
    from gymnasium import spaces

    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        low, high = info.min, info.max
    elif dtype == np.bool_:
        low, high = 0, 1
    else:
        high = float(np.finfo(dtype).max)
        low = -high
    return spaces.Box(low=low, high=high, shape=tuple(int(s) for s in shape), dtype=dtype)


def _check_dataset_id(dataset_id: str) -> None:
    from minari.dataset.minari_dataset import parse_dataset_id

    try:
        parse_dataset_id(dataset_id)
    except (ValueError, TypeError):  # TypeError: no -vN version
        raise GolemError(
            f"{dataset_id!r} is not a Minari dataset id: use namespace/name-vN, e.g. golem/basic/expert-v0"
        ) from None
    if dataset_id.startswith("/") or any(part in ("", ".", "..") for part in dataset_id.split("/")):
        raise GolemError(
            f"{dataset_id!r} is not a Minari dataset id: use namespace/name-vN, e.g. golem/basic/expert-v0"
        )


def _observation_keys(infos: Sequence[EpisodeInfo], rules: Mapping[str, ArrayRule]) -> list[str]:
    """The sensor arrays every episode holds alike (same dtype and step shape), sorted; else one line."""
    first = infos[0]
    keys = sorted(k for k in first.arrays if k in rules)
    if not keys:
        raise GolemError(f"episode {first.id} holds no sensor array ({', '.join(sorted(first.arrays))})")
    layout = {k: first.arrays[k] for k in keys}
    for info in infos[1:]:
        other = {k: info.arrays[k] for k in sorted(info.arrays) if k in rules}
        if other != layout:
            raise GolemError(
                f"episodes {first.id} and {info.id} hold different sensor arrays "
                f"({_describe(layout)} against {_describe(other)}); export them as separate datasets"
            )
        if info.meta.action_names != first.meta.action_names:
            raise GolemError(
                f"episodes {first.id} and {info.id} have different action names "
                f"({first.meta.profile}: {len(first.meta.action_names)}, {info.meta.profile}: "
                f"{len(info.meta.action_names)}); export them as separate datasets"
            )
    return keys


def _describe(layout: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} {v.dtype} {list(v.step_shape)}" for k, v in layout.items()) or "none"


def _env_spec(infos: Sequence[EpisodeInfo], keys: Sequence[str], rules: Mapping[str, ArrayRule]) -> Any:
    """``Golem/<scenario>-v0`` with the episodes' sensors, profile, map and frame skip; ``None`` unless all share
    them."""
    import gymnasium

    from golem_farama.registration import env_id

    def setup(meta: EpisodeMeta) -> tuple[Any, ...]:
        return (meta.scenario, meta.map, meta.profile, meta.frame_skip or 1)

    first = infos[0].meta
    if any(setup(i.meta) != setup(first) for i in infos[1:]) or env_id(first.scenario) not in gymnasium.registry:
        return None
    spec = copy.deepcopy(gymnasium.spec(env_id(first.scenario)))
    kwargs = {
        **spec.kwargs,
        "sensors": [rules[k].sensor for k in keys],
        "profile": first.profile,
        "frame_skip": first.frame_skip or 1,
    }
    if first.map is not None:
        kwargs["doom_map"] = first.map
    spec.kwargs = kwargs
    return spec


def export_minari(
    store: TrajectoryStore,
    infos: Sequence[EpisodeInfo],
    dataset_id: str,
    rules: Mapping[str, ArrayRule],
    *,
    out: str | Path | None = None,
    author: str | None = None,
    description: str | None = None,
    advance: Callable[[], None] | None = None,
) -> MinariExport:
    """Write ``infos`` from ``store`` as the Minari dataset ``dataset_id`` (layout: module docstring).

    Args:
        store: the open trajectory store.
        infos: the episodes, in dataset order (Minari episode ``i`` is ``infos[i]``).
        dataset_id: ``namespace/name-vN``.
        rules: the registered sensors' arrays (:func:`golem.data.arrays.array_rules`).
        out: datasets folder (see :func:`datasets_root`).
        author, description: the dataset's metadata of those names.
        advance: called after each episode is written (progress).

    The dataset is written into a hidden sibling folder and renamed into place, so a failed
    export leaves nothing behind.

    Raises:
        GolemError: Minari missing, a malformed id, a dataset of that id already there,
            no episodes, or episodes whose sensor arrays or action names differ — one line.
    """
    minari = require_minari()
    from gymnasium import spaces
    from minari.dataset.minari_storage import MinariStorage

    _check_dataset_id(dataset_id)
    if not infos:
        raise GolemError("no episodes to export")
    root = datasets_root(out)
    target = root / dataset_id
    if target.exists():
        raise GolemError(f"a Minari dataset {dataset_id!r} already exists at {target}; choose another name or version")
    keys = _observation_keys(infos, rules)
    first = infos[0]
    observation_space = spaces.Dict(
        {k: _box(np.dtype(first.arrays[k].dtype), first.arrays[k].step_shape) for k in keys}
    )
    action_space = spaces.MultiBinary(len(first.meta.action_names))
    env_spec = _env_spec(infos, keys, rules)

    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.parent / f".{target.name}.partial-{uuid.uuid4().hex[:8]}"
    steps = 0
    try:
        partial.mkdir()
        storage = MinariStorage.new(
            partial / "data",
            observation_space=observation_space,
            action_space=action_space,
            env_spec=env_spec,
            data_format=DATA_FORMAT,
            jpeg_encoding=False,
        )
        sources = sorted({i.meta.source for i in infos})
        metadata: dict[str, Any] = {
            "dataset_id": dataset_id,
            "minari_version": minari.__version__,
            "algorithm_name": f"golem {'+'.join(sources)}",
            "description": description
            or (
                f"{len(infos)} Golem episode(s) of {', '.join(sorted({i.meta.scenario for i in infos}))} "
                f"({', '.join(sources)}), sensors {', '.join(keys)}; the last observation of each episode repeats "
                "the one before it"
            ),
            "golem": {
                "version": _golem_version(),
                "store": str(store.path),
                "episodes": [i.id for i in infos],
                "profile": first.meta.profile,
                "action_names": list(first.meta.action_names),
                "sensors": [rules[k].sensor for k in keys],
                "observation_keys": keys,
            },
        }
        if author is not None:
            metadata["author"] = {author}
        storage.update_metadata(metadata)
        for index, info in enumerate(infos):
            buffer = _episode_buffer(store, info, keys)
            storage.update_episodes([buffer])
            storage.update_episode_metadata(
                [{META_ATTR: json.dumps(info.meta.to_dict()), EPISODE_ATTR: int(info.id)}], [index]
            )
            steps += info.length
            if advance is not None:
                advance()
        _write_namespaces(root, dataset_id)
        partial.rename(target)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    log.info("store.minari_exported", dataset=dataset_id, path=str(target), episodes=len(infos), steps=steps)
    return MinariExport(dataset_id=dataset_id, path=target, episodes=[i.id for i in infos], steps=steps)


def _golem_version() -> str:
    import golem

    return golem.__version__


def _episode_buffer(store: TrajectoryStore, info: EpisodeInfo, keys: Sequence[str]) -> Any:
    from minari.data_collector import EpisodeBuffer

    arrays = store.read_episode(info)
    n = info.length
    observations = {k: np.concatenate([arrays[k], arrays[k][-1:]]) for k in keys}
    terminations = np.zeros(n, dtype=bool)
    truncations = np.zeros(n, dtype=bool)
    if info.meta.terminated:
        terminations[-1] = True
    else:
        truncations[-1] = True
    others = {k: np.concatenate([v, v[-1:]]) for k, v in arrays.items() if k not in (*keys, "actions", "rewards")}
    seed = info.meta.seed if isinstance(info.meta.seed, int) and 0 <= info.meta.seed < 2**63 else None
    return EpisodeBuffer(
        seed=seed,
        observations=observations,
        actions=arrays["actions"].astype(np.int8),
        rewards=arrays["rewards"].astype(np.float32),
        terminations=terminations,
        truncations=truncations,
        infos=others or None,
    )


def _write_namespaces(root: Path, dataset_id: str) -> None:
    """Minari's ``namespace_metadata.json`` in every namespace folder of ``dataset_id`` that lacks one."""
    parts = dataset_id.split("/")[:-1]
    for depth in range(1, len(parts) + 1):
        marker = root.joinpath(*parts[:depth]) / _NAMESPACE_FILE
        if not marker.exists():
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text("{}")


# --- import ----------------------------------------------------------------


@dataclass(frozen=True)
class MinariSource:
    """A dataset found for import: how it was named, its ``data`` folder and its storage."""

    name: str
    data_path: Path
    storage: Any

    @property
    def total_episodes(self) -> int:
        """Episodes in the dataset."""
        return int(self.storage.total_episodes)


def open_minari(source: str | Path, root: str | Path | None = None) -> MinariSource:
    """Find and open a dataset: a folder (holding ``data/metadata.json`` or ``metadata.json``), else an id under
    ``root``.

    Raises:
        GolemError: Minari missing, nothing there, or not a readable Minari dataset — one line.
    """
    require_minari()
    from minari.dataset.minari_storage import MinariStorage

    name = str(source)
    path = Path(source).expanduser()
    if path.is_dir():
        data = path / "data" if (path / "data" / "metadata.json").is_file() else path
        if not (data / "metadata.json").is_file():
            raise GolemError(f"{name}: not a Minari dataset (no metadata.json in {path} or {path / 'data'})")
    else:
        base = datasets_root(root)
        data = base / name / "data"
        if not (data / "metadata.json").is_file():
            raise GolemError(f"{name}: no such folder, nor a Minari dataset of that id in {base}")
    try:
        storage = MinariStorage.read(data)
        storage.total_episodes  # noqa: B018  (reads metadata.json: fails here if it is damaged)
    except Exception as exc:  # Minari raises ValueError, KeyError, AssertionError, json and h5py errors
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise GolemError(f"{name}: not a readable Minari dataset ({detail})") from None
    return MinariSource(name=name, data_path=data, storage=storage)


def _check_spaces(source: MinariSource, rules: Mapping[str, ArrayRule]) -> tuple[list[str], int]:
    """The observation keys and action width when the dataset's spaces are Golem's; else one line."""
    from gymnasium import spaces

    obs, act = source.storage.observation_space, source.storage.action_space
    if not isinstance(obs, spaces.Dict):
        raise GolemError(
            f"{source.name}: observations are {type(obs).__name__}, not a Dict of sensor arrays "
            f"({', '.join(sorted(rules)) or 'no sensors installed'})"
        )
    for key, space in obs.spaces.items():
        rule = rules.get(key)
        if rule is None:
            raise GolemError(
                f"{source.name}: observation {key!r} is no installed sensor's array (known: {', '.join(sorted(rules))})"
            )
        shape = getattr(space, "shape", None)
        if (
            not isinstance(space, spaces.Box)
            or space.dtype != rule.dtype
            or shape is None
            or len(shape) != len(rule.step_shape)
            or any(w is not None and w != s for w, s in zip(rule.step_shape, shape))
        ):
            want = [("*" if w is None else w) for w in rule.step_shape]
            raise GolemError(
                f"{source.name}: observation {key!r} is {space}, but sensor {rule.sensor!r} stores {rule.dtype} {want}"
            )
    shape = np.shape(act.n) if isinstance(act, spaces.MultiBinary) else None
    if shape is None or len(shape) > 1 or (len(shape) == 1 and shape[0] != 1):
        raise GolemError(f"{source.name}: actions are {act}, not MultiBinary(n) button states")
    width = int(np.prod(act.n))
    return sorted(obs.spaces), width


def read_minari(
    source: MinariSource, options: ImportOptions, rules: Mapping[str, ArrayRule]
) -> Iterator[tuple[EpisodeMeta, dict[str, np.ndarray]]]:
    """Each episode of ``source`` as the store's metadata and arrays (``N`` steps), checked as a write would.

    Raises:
        GolemError: mismatched spaces or an episode that does not fit (lengths, 0/1 actions,
            metadata that is not a Golem episode's, array dtypes/shapes) — one line naming it.
    """
    keys, width = _check_spaces(source, rules)
    storage = source.storage
    sensors_of = {key: rule.sensor for key, rule in rules.items()}
    for index in range(source.total_episodes):
        where = f"{source.name}: episode {index}"
        try:
            episode = next(iter(storage.get_episodes([index])))
            attrs = next(iter(storage.get_episode_metadata([index])))
        except Exception as exc:
            raise GolemError(f"{where}: unreadable ({type(exc).__name__}: {exc})") from None
        rewards = np.asarray(episode["rewards"])
        n = int(rewards.shape[0]) if rewards.ndim == 1 else -1
        if n < 1:
            raise GolemError(f"{where}: needs rewards [N] with N >= 1, got {list(rewards.shape)}")
        arrays: dict[str, np.ndarray] = {}
        observations = episode["observations"]
        for key in keys:
            if key not in observations:
                raise GolemError(f"{where}: no {key!r} observations")
            value = np.asarray(observations[key])
            if value.shape[0] != n + 1:
                raise GolemError(f"{where}: {n} steps but {value.shape[0]} {key!r} observations (Minari keeps N+1)")
            arrays[key] = value[:n]
        actions = np.asarray(episode["actions"])
        if actions.shape != (n, width) or (actions.size and not np.isin(actions, (0, 1)).all()):
            raise GolemError(f"{where}: actions must be 0/1 [{n}, {width}], got {actions.dtype} {list(actions.shape)}")
        arrays["actions"] = actions.astype(np.uint8)
        arrays["rewards"] = rewards.astype(np.float32)
        for key, value in (episode.get("infos") or {}).items():
            value = np.asarray(value) if not isinstance(value, dict) else None
            if value is None or value.dtype.kind not in "biuf" or value.ndim == 0 or value.shape[0] not in (n, n + 1):
                log.warning("store.minari_info_skipped", dataset=source.name, episode=index, info=key)
                continue
            arrays[key] = value[:n]
        terminations = np.asarray(episode["terminations"]).astype(bool)
        truncations = np.asarray(episode["truncations"]).astype(bool)
        if terminations.shape != (n,) or truncations.shape != (n,):
            raise GolemError(f"{where}: terminations and truncations must be [{n}]")
        meta = _episode_meta(where, attrs, options, keys, sensors_of, bool(terminations[-1]), bool(truncations[-1]))
        if len(meta.action_names) != width:
            raise GolemError(f"{where}: {len(meta.action_names)} action names for MultiBinary({width}) actions")
        meta.extra["imported_from"] = f"minari:{source.name}"
        if EPISODE_ATTR in attrs:
            meta.extra["exported_episode"] = int(attrs[EPISODE_ATTR])
        try:
            arrays = normalise_arrays(meta, arrays, rules)
        except GolemError as exc:
            raise GolemError(f"{where}: {exc}") from None
        yield meta, arrays


def _episode_meta(
    where: str,
    attrs: Mapping[str, Any],
    options: ImportOptions,
    keys: Sequence[str],
    sensors_of: Mapping[str, str],
    terminated: bool,
    truncated: bool,
) -> EpisodeMeta:
    """The episode's saved Golem metadata, validated; else one built from the importing options."""
    saved = attrs.get(META_ATTR)
    if saved is not None:
        try:
            data = json.loads(saved.decode() if isinstance(saved, bytes) else str(saved))
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            meta = EpisodeMeta.from_dict(data)
        except (ValueError, TypeError, GolemError) as exc:
            raise GolemError(f"{where}: {META_ATTR} is not a Golem episode's metadata ({exc})") from None
        meta.tags = sorted({*meta.tags, *options.tags})
        return meta
    seed = attrs.get("seed")
    sensors = [sensors_of[k] for k in keys]
    return EpisodeMeta(
        profile=options.profile,
        action_names=list(options.action_names),
        scenario=options.scenario,
        map=options.map,
        sensors=sensors,
        source=options.source,  # type: ignore[arg-type]
        seed=int(seed) if seed is not None else options.seed,
        tags=sorted(options.tags),
        terminated=terminated,
        truncated=truncated,
    )


def import_minari(
    store: TrajectoryStore, source: MinariSource, options: ImportOptions, rules: Mapping[str, ArrayRule]
) -> list[int]:
    """Write every episode of ``source`` into ``store`` (one transaction each); returns their ids.

    Call :func:`check_minari` first to refuse a bad dataset before the store is touched.
    """
    ids = []
    for meta, arrays in read_minari(source, options, rules):
        ids.append(store.write_episode(meta, arrays, rules))
    log.info("store.minari_imported", dataset=source.name, episodes=len(ids))
    return ids


def check_minari(source: MinariSource, options: ImportOptions, rules: Mapping[str, ArrayRule]) -> int:
    """Read and check every episode of ``source`` without writing; returns the number of steps.

    Raises:
        GolemError: as :func:`read_minari`; also for a dataset with no episodes.
    """
    if source.total_episodes < 1:
        raise GolemError(f"{source.name}: the dataset has no episodes")
    return sum(meta_arrays[1]["actions"].shape[0] for meta_arrays in read_minari(source, options, rules))


class MinariFormat:
    """``golem data import/export --format minari``: a dataset per import argument (an id or a folder), one
    dataset per export (the argument is its id; ``--out`` the datasets folder)."""

    label = "dataset"
    takes_out = True

    def sources(self, paths: Sequence[str | Path]) -> list[tuple[str, MinariSource]]:
        return [(str(path), open_minari(path)) for path in paths]

    def check(self, source: MinariSource, options: ImportOptions, rules: Mapping[str, ArrayRule]) -> None:
        check_minari(source, options, rules)

    def write(
        self, store: TrajectoryStore, source: MinariSource, options: ImportOptions, rules: Mapping[str, ArrayRule]
    ) -> list[int]:
        return import_minari(store, source, options, rules)

    def export(
        self,
        store: TrajectoryStore,
        infos: Sequence[EpisodeInfo],
        target: Path,
        rules: Mapping[str, ArrayRule],
        out: Path | None = None,
        advance: Callable[[], None] | None = None,
    ) -> tuple[dict[str, Any], str]:
        done = export_minari(store, infos, str(target), rules, out=out, advance=advance)
        report = {"dataset": done.dataset_id, "path": str(done.path), "episodes": done.episodes, "steps": done.steps}
        line = (
            f"exported {len(done.episodes)} episode(s), {done.steps} steps as Minari dataset "
            f"{done.dataset_id} in {done.path}"
        )
        return report, line


__all__ = [
    "EXTRA",
    "MinariExport",
    "MinariFormat",
    "MinariSource",
    "check_minari",
    "datasets_root",
    "export_minari",
    "import_minari",
    "open_minari",
    "read_minari",
    "require_minari",
]
