"""Sequence windows over a trajectory store: selection, compatibility, pointer map, batches.

A :class:`SequenceDataset` cuts every selected episode into windows of ``L``
steps with stride ``L`` (non-overlapping), starting at step 0. Nothing is
dropped: an episode's last window holds its remaining ``length <= L`` steps
(an episode shorter than ``L`` is one such window), padded to ``L`` by
repeating its last step, and the batch's ``mask`` marks the real steps, so the
loss, validation and the audit all count every recorded step once. With
mirror augmentation every window also exists mirrored, so the data doubles.

The windows live in a compact pointer map (:data:`POINTER_DTYPE`, one record
per window, no Python object per window)::

    episode  int64  store episode id
    start    int64  first step of the window (0, L, 2L, ...)
    length   int32  real steps in the window (L, or fewer in an episode's last window)
    mirrored bool   read left-right mirrored
    is_first bool   start == 0: the window starts an episode (reset hidden state)
    recovery bool   the episode's source is "recovery"

Window ``i`` of a dataset is ``dataset.pointers[i]``; a sampler
(:mod:`golem.data.sampling`) yields lists of such indices and
:meth:`SequenceDataset.load_batch` turns them into tensors.

>>> with TrajectoryStore.open("demos") as store:                          # doctest: +SKIP
...     ds = SequenceDataset.from_store(store, spec.sensors, spec.action_names, settings.training)
...     train, val = ds.split(settings.training.validation_split, settings.training.seed)
...     for indices in StatefulStratifiedSampler(train, settings):
...         batch = train.load_batch(indices)  # inputs, targets, is_first, mask, timespans
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import structlog
import torch

from golem.data.store import EpisodeInfo, TrajectoryStore
from golem.errors import GolemError
from golem.profiles import mirror_permutation
from golem.sensors import Sensor
from golem.settings import auto_sequence_length

if TYPE_CHECKING:
    from golem.settings import GolemSettings, TrainingSettings

log = structlog.get_logger(__name__)

#: One record per window of the pointer map.
POINTER_DTYPE = np.dtype(
    [("episode", "<i8"), ("start", "<i8"), ("length", "<i4"), ("mirrored", "?"), ("is_first", "?"), ("recovery", "?")]
)

RECOVERY = "recovery"


class Batch(NamedTuple):
    """One batch of ``B`` windows of ``L`` steps.

    Attributes:
        inputs: sensor name → float tensor ``[B, L, *sensor.shape]`` (``sensor.to_network`` of the stored values).
        targets: float32 ``[B, L, A]`` button states 0./1.
        is_first: bool ``[B]``; True where the window starts its episode (zero that row's hidden state).
        mask: bool ``[B, L]``; True at recorded steps, False at the padding after an episode's last step
            (which repeats that step; score and train only where the mask is True).
        timespans: float32 ``[B, L]``, engine tics elapsed since the previous step (1 at an
            episode's first step and on padding), from the store's ``tic``; ``None`` when every
            step of the batch is one tic (frame skip 1, or a store recorded before ``tic``).
    """

    inputs: dict[str, torch.Tensor]
    targets: torch.Tensor
    is_first: torch.Tensor
    mask: torch.Tensor
    timespans: torch.Tensor | None = None

    @property
    def padded(self) -> bool:
        """Whether any step of the batch is padding."""
        return not bool(self.mask.all())


# --- selection -------------------------------------------------------------


def select_episodes(
    store: TrajectoryStore,
    *,
    module: str | None = None,
    include_recovery: bool = True,
    sources: Iterable[str] | None = None,
) -> list[EpisodeInfo]:
    """The store's episodes to train on, in id order.

    Args:
        store: an open trajectory store.
        module: keep episodes whose ``scenario`` equals it or whose ``tags`` contain it (``None``: all).
        include_recovery: keep episodes whose source is ``"recovery"``.
        sources: if given, keep only episodes with one of these sources (recovery
            episodes still follow ``include_recovery``).
    """
    wanted = set(sources) if sources is not None else None
    out: list[EpisodeInfo] = []
    for info in store.episodes():
        meta = info.meta
        if module is not None and meta.scenario != module and module not in meta.tags:
            continue
        if meta.source == RECOVERY and not include_recovery:
            continue
        if wanted is not None and meta.source not in wanted and meta.source != RECOVERY:
            continue
        out.append(info)
    return out


def check_compatible(
    episodes: Iterable[EpisodeInfo],
    sensors: Sequence[Sensor],
    action_names: Sequence[str],
    profile: str | None = None,
) -> None:
    """Check that every episode can feed a model with these sensors and actions.

    Each episode's ``action_names`` must equal ``action_names`` (same names,
    same order), and it must hold every sensor's ``key`` array with the
    sensor's step shape and dtype.

    Raises:
        GolemError: one line naming the first incompatible episode and how to fix it.
    """
    model_actions = [str(a) for a in action_names]
    model_profile = profile or "the model's profile"
    for info in episodes:
        meta = info.meta
        if list(meta.action_names) != model_actions:
            if len(meta.action_names) != len(model_actions):
                detail = (
                    f"episode {info.id} was recorded with profile {meta.profile} ({len(meta.action_names)} actions) "
                    f"but the model uses {model_profile} ({len(model_actions)})"
                )
            else:
                i = next(i for i, (a, b) in enumerate(zip(meta.action_names, model_actions)) if a != b)
                detail = (
                    f"episode {info.id} was recorded with profile {meta.profile} whose action {i} is "
                    f"{meta.action_names[i]} but the model's ({model_profile}) is {model_actions[i]}"
                )
            raise GolemError(
                f"{detail}: train with --set brain.profile={meta.profile}, or select episodes of one profile"
            )
        for sensor in sensors:
            spec = info.arrays.get(sensor.key)
            if spec is None:
                raise GolemError(
                    f"the settings enable sensor {sensor.name!r} but episode {info.id} has no {sensor.key!r} array; "
                    f"record with --plugin {sensor.name} or disable it"
                )
            want_shape, want_dtype = tuple(sensor.shape), np.dtype(sensor.dtype)
            if tuple(spec.step_shape) != want_shape or np.dtype(spec.dtype) != want_dtype:
                raise GolemError(
                    f"episode {info.id} stores {sensor.key!r} as {list(spec.step_shape)} {spec.dtype} but sensor "
                    f"{sensor.name!r} reads {list(want_shape)} {want_dtype.name}; {_settings_hint(info, sensor)}"
                )


def _settings_hint(info: EpisodeInfo, sensor: Sensor) -> str:
    """How to read an episode whose sensor array has another shape: the settings it was recorded with, if known."""
    wanted = sensor.recorded_settings()
    if not wanted:
        return "re-record it with this sensor"
    recorded = info.meta.sensor_settings
    flags = [
        f"--set {key}.{name}={value}"
        for key, values in wanted.items()
        for name, value in (recorded.get(key) or {}).items()
        if name in values and values[name] != value
    ]
    if flags:
        return (
            f"it was recorded with {' '.join(flags)}: pass the same, or re-record or re-import it with these settings"
        )
    keys = ", ".join(wanted)
    return f"it was recorded with other {keys} settings: pass those with --set {next(iter(wanted))}.…, or re-record it"


# --- pointer map -----------------------------------------------------------


def build_pointers(episodes: Sequence[EpisodeInfo], sequence_length: int, mirror: bool) -> np.ndarray:
    """The pointer map (:data:`POINTER_DTYPE`, ``[N]``) of stride-``L`` windows of ``episodes``.

    Order: episode by episode (as given), plain windows by start, then (with
    ``mirror``) the mirrored twins by start. An episode's last window holds its
    remaining steps (``length`` < ``L`` when ``L`` does not divide the episode),
    so every step of every episode is in exactly one window (per mirroring).
    """
    L = int(sequence_length)
    if L < 1:
        raise GolemError(f"sequence_length must be positive, got {L}")
    lengths = np.array([max(int(info.length), 0) for info in episodes], dtype=np.int64)
    counts = -(-lengths // L)  # ceil
    copies = 2 if mirror else 1
    total = int(counts.sum()) * copies
    out = np.zeros(total, dtype=POINTER_DTYPE)
    pos = 0
    for info, n, total_steps in zip(episodes, counts.tolist(), lengths.tolist()):
        if n == 0:
            continue
        starts = np.arange(n, dtype=np.int64) * L
        window_lengths = np.minimum(total_steps - starts, L)
        recovery = info.meta.source == RECOVERY
        for mirrored in (False, True)[:copies]:
            part = out[pos : pos + n]
            part["episode"] = info.id
            part["start"] = starts
            part["length"] = window_lengths
            part["mirrored"] = mirrored
            part["is_first"] = starts == 0
            part["recovery"] = recovery
            pos += n
    return out


def split_episodes(
    episodes: Sequence[EpisodeInfo], validation_split: float, seed: int
) -> tuple[list[EpisodeInfo], list[EpisodeInfo]]:
    """Whole-episode train/validation split, deterministic in ``seed``.

    Base (non-recovery) and recovery episodes are split separately, each
    holding out ``round(n * validation_split)`` episodes; the base group holds
    out at least one when ``validation_split > 0`` and it has two or more, and
    always keeps at least one for training. Both lists keep id order.
    Episodes of one scenario and seed (copies of one start, e.g. recorded twice)
    always land on the same side, so validation never scores a copy of a training episode.
    """
    if not 0.0 <= validation_split < 1.0:
        raise GolemError(f"validation_split must be in [0, 1), got {validation_split}")
    rng = np.random.default_rng([int(seed), 0x5B117])
    train_ids: set[int] = set()
    val_ids: set[int] = set()
    for is_recovery in (False, True):
        members: dict[Any, list[int]] = {}  # one entry per distinct episode start, in id order
        for info in sorted(episodes, key=lambda i: i.id):
            if (info.meta.source == RECOVERY) == is_recovery:
                key = (info.meta.scenario, info.meta.map, info.meta.seed) if info.meta.seed is not None else info.id
                members.setdefault(key, []).append(info.id)
        group = list(members.values())
        n = len(group)
        n_val = int(round(n * validation_split))
        if not is_recovery and validation_split > 0 and n >= 2:
            n_val = max(n_val, 1)
        if not is_recovery:
            n_val = min(n_val, max(n - 1, 0))
        order = rng.permutation(n)
        val_ids.update(i for k in order[:n_val] for i in group[k])
        train_ids.update(i for k in order[n_val:] for i in group[k])
    train = [info for info in episodes if info.id in train_ids]
    val = [info for info in episodes if info.id in val_ids]
    return train, val


# --- dataset ---------------------------------------------------------------


class SequenceDataset:
    """Stride-``L`` windows of selected episodes of one store, loaded as batches.

    Args:
        store: an open trajectory store (kept open by the caller while the dataset is used).
        episodes: the episodes to cut into windows (e.g. from :func:`select_episodes`).
        sensors: the model's enabled sensors; each reads its ``key`` array.
        action_names: the model's actions, in output order (targets ``[..., A]`` follow it).
        sequence_length: window length ``L``.
        mirror: add a mirrored twin of every window.
        check: run :func:`check_compatible` on ``episodes`` (raises GolemError).
        profile: the model's profile name, for error messages.

    Attributes:
        pointers: the pointer map, :data:`POINTER_DTYPE` ``[N]``.
        episodes: ``{id: EpisodeInfo}`` of the episodes (including those too short for a window).

    Not safe to share across forked worker processes (the LMDB environment is
    per process): load batches in the process that opened the store.
    """

    def __init__(
        self,
        store: TrajectoryStore,
        episodes: Sequence[EpisodeInfo],
        sensors: Sequence[Sensor],
        action_names: Sequence[str],
        sequence_length: int,
        *,
        mirror: bool = False,
        check: bool = True,
        profile: str | None = None,
    ) -> None:
        self.store = store
        self.sensors = list(sensors)
        self.action_names = tuple(str(a) for a in action_names)
        self.sequence_length = int(sequence_length)
        self.mirror = bool(mirror)
        self.profile = profile
        if check:
            check_compatible(episodes, self.sensors, self.action_names, profile)
        self.episodes: dict[int, EpisodeInfo] = {info.id: info for info in episodes}
        self.pointers = build_pointers(list(episodes), self.sequence_length, self.mirror)
        self._perm = np.asarray(mirror_permutation(self.action_names), dtype=np.intp)

    @classmethod
    def from_store(
        cls,
        store: TrajectoryStore,
        sensors: Sequence[Sensor],
        action_names: Sequence[str],
        training: TrainingSettings | GolemSettings,
        *,
        module: str | None = None,
        include_recovery: bool = True,
        profile: str | None = None,
    ) -> SequenceDataset:
        """Select episodes (:func:`select_episodes`), check them and cut them with ``training``'s L and mirror.

        ``training.sequence_length = "auto"`` picks L from the selected episodes
        (:func:`golem.settings.auto_sequence_length`); :attr:`sequence_length` holds the result.

        Raises:
            GolemError: no episode matches, an episode is incompatible, or every episode is empty.
        """
        training = getattr(training, "training", training)  # GolemSettings or its training group
        episodes = select_episodes(store, module=module, include_recovery=include_recovery)
        if not episodes:
            where = f" for module {module!r}" if module is not None else ""
            raise GolemError(f"no episodes{where} in {store.path}; record some with `golem run record`")
        length = training.sequence_length
        if length == "auto":
            length = auto_sequence_length([info.length for info in episodes])
            log.info("dataset.auto_sequence_length", sequence_length=length, episodes=len(episodes))
        ds = cls(store, episodes, sensors, action_names, length, mirror=training.mirror, profile=profile)
        if len(ds) == 0:
            raise GolemError(
                f"every selected episode in {store.path} is empty (0 steps); record some with `golem run record`"
            )
        short = sum(1 for info in episodes if info.length < ds.sequence_length)
        if short:  # kept, padded and masked; worth knowing because such windows carry less per update
            log.info("dataset.short_episodes", episodes=short, sequence_length=ds.sequence_length)
        log.info("dataset.built", module=module, **ds.describe())
        return ds

    def __len__(self) -> int:
        """Number of windows (mirrored twins included)."""
        return int(self.pointers.shape[0])

    def subset(self, episode_ids: Iterable[int], *, mirror: bool | None = None) -> SequenceDataset:
        """A dataset over some of this one's episodes (same store, sensors, actions, L; ``mirror`` default: same)."""
        keep = set(int(i) for i in episode_ids)
        episodes = [info for eid, info in self.episodes.items() if eid in keep]
        return SequenceDataset(
            self.store,
            episodes,
            self.sensors,
            self.action_names,
            self.sequence_length,
            mirror=self.mirror if mirror is None else mirror,
            check=False,
            profile=self.profile,
        )

    def split(
        self, validation_split: float, seed: int, *, mirror_validation: bool = False
    ) -> tuple[SequenceDataset, SequenceDataset]:
        """``(train, validation)`` over disjoint whole episodes (:func:`split_episodes`).

        The training part keeps this dataset's mirror setting; the validation part
        is mirrored only with ``mirror_validation``.
        """
        train, val = split_episodes(list(self.episodes.values()), validation_split, seed)
        return (
            self.subset(i.id for i in train),
            self.subset((i.id for i in val), mirror=self.mirror and mirror_validation),
        )

    # --- batches -----------------------------------------------------------

    def load_batch(self, indices: Sequence[int] | np.ndarray, device: torch.device | str | None = None) -> Batch:
        """Load windows ``indices`` (into :attr:`pointers`) as one batch.

        Each row is copied once from the store's memory map into an array in
        the stored dtype (``StoreReader.read_into``); mirrored rows are then
        flipped by each sensor's ``mirror`` and have their actions permuted
        (MOVE/TURN left↔right); last, the stored values become tensors through
        each sensor's ``to_network``. A window shorter than ``L`` (an episode's
        last) is padded by repeating its last step and masked out.

        Args:
            indices: ``[B]`` window indices.
            device: where the tensors go. The stored (compact, e.g. uint8) arrays
                are moved there *before* ``to_network``, so a GPU receives bytes,
                not floats; for CUDA the host arrays are pinned and the copy is
                non-blocking. ``None``: stay on the CPU.

        Returns:
            :class:`Batch` ``(inputs, targets, is_first, mask, timespans)``: ``inputs[name]`` float
            ``[B, L, *shape]``, ``targets`` float32 ``[B, L, A]``, ``is_first`` bool ``[B]``,
            ``mask`` bool ``[B, L]``, ``timespans`` float32 ``[B, L]`` or ``None`` (all one tic).
        """
        idx = np.asarray(indices, dtype=np.intp)
        if idx.ndim != 1:
            raise GolemError(f"batch indices must be one-dimensional, got shape {list(idx.shape)}")
        dev = torch.device(device) if device is not None else None
        pin = dev is not None and dev.type == "cuda"
        rows = self.pointers[idx]
        B, L, A = rows.shape[0], self.sequence_length, len(self.action_names)
        host = {s.name: _empty((B, L, *s.shape), s.dtype, pin) for s in self.sensors}
        host_actions = _empty((B, L, A), np.dtype(np.uint8), pin)
        raw = {name: t.numpy() for name, t in host.items()}
        actions = host_actions.numpy()
        episodes, starts, lengths = rows["episode"].tolist(), rows["start"].tolist(), rows["length"].tolist()
        infos = [self.episodes[eid] for eid in episodes]
        mask_np = np.arange(L)[None, :] < rows["length"][:, None]  # [B, L] recorded steps
        with self.store.reader() as reader:
            # One call per array fills the whole batch; an episode's last window repeats its last step
            # over the padding (inputs stay in distribution).
            reader.read_batch(actions, infos, starts, lengths, "actions")
            for sensor in self.sensors:
                reader.read_batch(raw[sensor.name], infos, starts, lengths, sensor.key)
            spans = self._timespans(reader, infos, rows, mask_np)
        mask = torch.from_numpy(mask_np)
        mirrored = rows["mirrored"]
        if mirrored.any():
            for sensor in self.sensors:
                arr = raw[sensor.name]
                arr[mirrored] = sensor.mirror(arr[mirrored])
            actions[mirrored] = actions[mirrored][..., self._perm]
        is_first = torch.from_numpy(rows["is_first"].copy())
        timespans = None if (spans == 1.0).all() else torch.from_numpy(spans)
        if dev is not None:
            host = {name: t.to(dev, non_blocking=pin) for name, t in host.items()}
            host_actions = host_actions.to(dev, non_blocking=pin)
            is_first, mask = is_first.to(dev), mask.to(dev)
            timespans = None if timespans is None else timespans.to(dev)
        inputs = {s.name: s.to_network(host[s.name]) for s in self.sensors}
        return Batch(inputs, host_actions.float(), is_first, mask, timespans)

    def _timespans(self, reader: Any, infos: Sequence[EpisodeInfo], rows: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """float32 ``[B, L]``: engine tics since each step's previous one (1 at an episode's start, on padding,
        and for episodes recorded before the store kept the ``tic`` array)."""
        B, L = mask.shape
        spans = np.ones((B, L), dtype=np.float32)
        timed = [b for b, info in enumerate(infos) if "tic" in info.arrays]
        if not timed:
            return spans
        starts, lengths = rows["start"][timed], rows["length"][timed]
        inside = starts > 0  # such windows also read the step before them
        tics = np.empty((len(timed), L + 1), dtype=np.int32)
        reader.read_batch(
            tics, [infos[b] for b in timed], (starts - inside).tolist(), (lengths + inside).tolist(), "tic"
        )
        deltas = np.diff(tics, axis=1).astype(np.float32)  # [b, L]
        got = np.where(
            inside[:, None], deltas, np.concatenate([np.ones((len(timed), 1), np.float32), deltas[:, :-1]], axis=1)
        )
        spans[timed] = np.where(mask[timed], got, 1.0)
        return spans

    @property
    def steps(self) -> int:
        """Recorded steps across all windows (mirrored twins counted twice)."""
        return int(self.pointers["length"].sum())

    def describe(self) -> Mapping[str, Any]:
        """Counts for logs and reports: episodes, windows (padded ones too), steps, recovery windows, L, mirror."""
        return {
            "episodes": len(self.episodes),
            "windows": len(self),
            "padded_windows": int((self.pointers["length"] < self.sequence_length).sum()),
            "steps": self.steps,
            "recovery_windows": int(self.pointers["recovery"].sum()),
            "sequence_length": self.sequence_length,
            "mirror": self.mirror,
        }


def _empty(shape: tuple[int, ...], dtype: np.dtype[Any], pin: bool) -> torch.Tensor:
    """An uninitialised CPU tensor of a numpy dtype (page-locked when ``pin``); its ``.numpy()`` shares memory.

    Unpinned buffers come from numpy, whose allocator reuses freed memory far
    faster than ``torch.empty`` for batch-sized arrays.
    """
    if not pin:
        return torch.from_numpy(np.empty(shape, dtype=dtype))
    tdtype = torch.from_numpy(np.empty(0, dtype=dtype)).dtype
    return torch.empty(shape, dtype=tdtype, pin_memory=True)


def mirror_actions(actions: np.ndarray, action_names: Sequence[str]) -> np.ndarray:
    """Left-right mirror of button states ``[..., A]`` (MOVE/TURN left↔right swapped); an involution."""
    return actions[..., np.asarray(mirror_permutation(tuple(action_names)), dtype=np.intp)]


def bench_batches(dataset: SequenceDataset, sampler: Iterable[Sequence[int]], n: int) -> float:
    """Batches per second of ``dataset.load_batch`` over the first ``n`` batches of ``sampler`` (CPU, no model)."""
    it = iter(sampler)
    done = 0
    t0 = time.perf_counter()
    for indices in it:
        if done >= n:
            break
        dataset.load_batch(indices)
        done += 1
    elapsed = time.perf_counter() - t0
    return done / elapsed if elapsed > 0 else float("inf")


__all__ = [
    "POINTER_DTYPE",
    "Batch",
    "SequenceDataset",
    "bench_batches",
    "build_pointers",
    "check_compatible",
    "mirror_actions",
    "select_episodes",
    "split_episodes",
]
