"""The LMDB trajectory store: one environment directory per dataset, episodes as the unit.

Layout (three named databases in one LMDB environment):

* ``meta``     — ``schema_version``, ``chunk_steps``, ``next_id``, ``created`` (ASCII / JSON) and
  ``reserved_seeds`` (JSON: scenario → the first seed no recorder has taken yet).
* ``episodes`` — key ``id`` (8-byte big-endian) → JSON of :class:`EpisodeInfo`.
* ``chunks``   — key ``id`` (8 B BE) + array name + ``\\0`` + chunk index (4 B BE) →
  raw C-order bytes of ``chunk_steps`` contiguous steps (the last chunk may be short).

An episode is written in one write transaction, so readers see it whole or not
at all, and a killed writer loses at most the episode in progress. Readers open
the environment read-only with LMDB's lock file, so many of them run alongside
one writer; they read chunk buffers straight from the memory map. Writers in
several processes take turns (LMDB's writer lock); seeds are handed out in a
write transaction (:meth:`TrajectoryStore.reserve_seeds`), so two recorders on
one store never play the same seed.
"""

from __future__ import annotations

import errno
import json
import shutil
import struct
import sys
import time
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import lmdb
import numpy as np
import structlog

from golem.errors import GolemError
from golem.units import human_bytes

if TYPE_CHECKING:
    from golem.data.arrays import ArrayRule
from golem.data.store.schema import (
    MAX_SEED,
    SCHEMA_VERSION,
    ArraySpec,
    EpisodeInfo,
    EpisodeMeta,
    normalise_arrays,
    utc_now,
)

log = structlog.get_logger(__name__)

#: Virtual size of the memory map. Sparse: disk use follows the data, not this number.
MAP_SIZE = (1 << 40) if sys.maxsize > 2**32 else (1 << 30)
DEFAULT_CHUNK_STEPS = 64
#: Seconds :meth:`TrajectoryStore.open_or_create` waits for another process's creation of the store to commit.
CREATE_WAIT_S = 2.0

_META = b"meta"
_EPISODES = b"episodes"
_CHUNKS = b"chunks"
_ID = struct.Struct(">Q")
_CI = struct.Struct(">I")
_RESERVED = b"reserved_seeds"
#: Room LMDB needs beyond an episode's array bytes (pages, the record, copy-on-write of the tree).
_WRITE_SLACK = 1 << 20


def episode_key(episode_id: int) -> bytes:
    """The 8-byte big-endian key of an episode (sorts by id)."""
    return _ID.pack(episode_id)


def chunk_key(episode_id: int, name: str, index: int) -> bytes:
    """Key of chunk ``index`` of array ``name`` of an episode."""
    return _ID.pack(episode_id) + name.encode() + b"\x00" + _CI.pack(index)


def parse_chunk_key(key: bytes) -> tuple[int, str, int]:
    """Inverse of :func:`chunk_key`: ``(episode_id, name, index)``."""
    return _ID.unpack_from(key)[0], bytes(key[8:-5]).decode(errors="replace"), _CI.unpack_from(key, len(key) - 4)[0]


def decode_info(episode_id: int, raw: bytes | memoryview) -> EpisodeInfo:
    """An episode record (JSON of :class:`EpisodeInfo`) as read from the ``episodes`` database.

    Raises:
        GolemError: the record is not JSON, not an episode record, or its metadata fails
            :class:`golem.data.store.schema.MetaModel` (one line naming the episode).
    """
    try:
        return EpisodeInfo.from_dict(json.loads(bytes(raw)))
    except GolemError as exc:
        detail = str(exc)
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:  # not JSON, or not a record
        detail = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'malformed'}"
    raise GolemError(f"episode {episode_id} has unreadable metadata ({detail})")


def _short_chunk(info: EpisodeInfo, key: str, index: int) -> GolemError:
    return GolemError(
        f"episode {info.id}: chunk {index} of {key!r} is shorter than the episode's {info.length} "
        "steps say; run `golem data verify`"
    )


def _free_bytes(path: Path) -> int | None:
    """Bytes free on the disk holding ``path`` (``None`` when the system cannot say)."""
    try:
        return int(shutil.disk_usage(path).free)
    except OSError:
        return None


def _disk_full(path: Path, free: int, need: int) -> GolemError:
    return GolemError(
        f"the disk holding trajectory store {path} is full ({human_bytes(free)} free, the write needs about "
        f"{human_bytes(need)}): free some space or pass --store on another disk; nothing of this write was stored"
    )


def _write_failed(path: Path, exc: lmdb.Error, need: int) -> GolemError:
    """The error for a failed write transaction: a full disk said as such, anything else as LMDB says it.

    LMDB reports a failed ``pwrite`` at commit as EIO (``mdb_txn_commit: Input/output error``) even when the
    cause was ENOSPC, so the free space decides as well as the errno.
    """
    text = str(exc)
    free = _free_bytes(path)
    full = getattr(exc, "errno", None) == errno.ENOSPC or "No space left" in text
    if not full and (isinstance(exc, (lmdb.DiskError, lmdb.PanicError)) or "Input/output error" in text):
        full = free is not None and free < need
    if full:
        log.error("store.disk_full", path=str(path), free=free, need=need)
        return _disk_full(path, free if free is not None else 0, need)
    return GolemError(f"could not write to trajectory store {path}: {exc}")


@dataclass(frozen=True)
class StoreStats:
    """Totals of a store: ``bytes`` is array data, ``file_bytes`` the size of ``data.mdb`` on disk."""

    path: str
    schema_version: int
    chunk_steps: int
    episodes: int
    steps: int
    bytes: int
    file_bytes: int
    by_source: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class _CreatedMeanwhile(Exception):
    """Raised inside :meth:`TrajectoryStore.create`'s transaction to abort it: the store exists already."""


class StoreReader:
    """Reads inside one LMDB read transaction (``store.reader()``); arrays from :meth:`view` die with it."""

    def __init__(self, store: TrajectoryStore, txn: lmdb.Transaction) -> None:
        self._store = store
        self._txn = txn

    def info(self, episode: int | EpisodeInfo) -> EpisodeInfo:
        """The :class:`EpisodeInfo` of an episode id (as visible to this transaction)."""
        if isinstance(episode, EpisodeInfo):
            return episode
        return self._store._info(self._txn, int(episode))

    def _spec(self, info: EpisodeInfo, key: str) -> ArraySpec:
        spec = info.arrays.get(key)
        if spec is None:
            raise GolemError(f"episode {info.id} has no {key!r} array (it has {', '.join(info.arrays)})")
        return spec

    def _chunk(self, info: EpisodeInfo, key: str, index: int) -> memoryview:
        buf = self._txn.get(chunk_key(info.id, key, index), db=self._store._chunks)
        if buf is None:
            raise GolemError(f"episode {info.id} is missing chunk {index} of {key!r}; run `golem data verify`")
        self._store._check_chunk(info, key, index, buf)
        return buf

    def view(self, episode: int | EpisodeInfo, key: str, start: int, stop: int) -> np.ndarray:
        """Steps ``[start, stop)`` of array ``key``: ``[stop - start, *step_shape]`` in its stored dtype.

        Zero-copy (a read-only view of the memory map) when the window lies in
        one chunk, else a fresh copy. A view is valid only while this reader's
        transaction is open — copy what must outlive it.
        """
        info = self.info(episode)
        spec = self._spec(info, key)
        self._check_window(info, key, start, stop)
        cs = info.chunk_steps
        if start // cs == (stop - 1) // cs:
            index = start // cs
            buf = self._chunk(info, key, index)
            if (start - index * cs + stop - start) * spec.step_bytes > len(buf):
                raise _short_chunk(info, key, index)
            return self._frombuffer(buf, spec, start - index * cs, stop - start)
        out = np.empty((stop - start, *spec.step_shape), dtype=spec.dtype)
        self.read_into(out, info, key, start)
        return out

    def read_into(self, out: np.ndarray, episode: int | EpisodeInfo, key: str, start: int) -> np.ndarray:
        """Copy steps ``[start, start + len(out))`` of ``key`` into ``out`` (``[L, *step_shape]``, stored dtype).

        ``out`` may be a row of a caller's batch array (``batch[b]``); each
        overlapping chunk is copied once, straight from the memory map.
        Returns ``out``.
        """
        info = self.info(episode)
        prefix, dtype, items, step_bytes, step_shape = self._store._layout(info, key)
        length = out.shape[0]
        stop = start + length
        if not 0 <= start < stop <= info.meta.length:
            self._check_window(info, key, start, stop)
        if out.dtype != dtype or out.shape[1:] != step_shape:
            raise GolemError(
                f"output for {key!r} must be [L, {', '.join(map(str, step_shape))}] {dtype}, "
                f"got {list(out.shape)} {out.dtype}"
            )
        cs = info.chunk_steps
        get, db, pack = self._txn.get, self._store._chunks, _CI.pack
        index = start // cs
        verified, check = self._store._verified, self._store._check_chunk
        if (stop - 1) // cs == index:  # fast path: the window lies in one chunk — one get, one copy
            buf = get(prefix + pack(index), db=db)
            offset = (start - index * cs) * step_bytes
            if buf is None or offset + length * step_bytes > len(buf):
                self._chunk(info, key, index)
                raise _short_chunk(info, key, index)
            if (info.id, key, index) not in verified:
                check(info, key, index, buf)
            out[...] = np.frombuffer(buf, dtype=dtype, count=length * items, offset=offset).reshape(out.shape)
            return out
        s = start
        while s < stop:
            index = s // cs
            first = index * cs
            e = min(stop, first + cs)
            buf = get(prefix + pack(index), db=db)
            if buf is None:
                raise GolemError(f"episode {info.id} is missing chunk {index} of {key!r}; run `golem data verify`")
            if (info.id, key, index) not in verified:
                check(info, key, index, buf)
            offset = (s - first) * step_bytes
            if offset + (e - s) * step_bytes > len(buf):
                raise _short_chunk(info, key, index)
            flat = np.frombuffer(buf, dtype=dtype, count=(e - s) * items, offset=offset)
            out[s - start : e - start] = flat.reshape(e - s, *step_shape)
            s = e
        return out

    def read_batch(
        self,
        out: np.ndarray,
        episodes: Sequence[EpisodeInfo],
        starts: Sequence[int],
        lengths: Sequence[int],
        key: str,
    ) -> np.ndarray:
        """Fill a whole batch of windows of array ``key`` in one call.

        Row ``b`` of ``out`` (``[B, L, *step_shape]``, C-contiguous, stored dtype)
        receives steps ``[starts[b], starts[b] + lengths[b])`` of ``episodes[b]``;
        its steps from ``lengths[b]`` to ``L`` repeat the window's last step (the
        padding of an episode's short last window). Each chunk the batch touches
        is fetched from the memory map once and CRC-checked the first time this
        store object reads it; the copies are byte slices, with the per-array
        checks done once per episode rather than once per window. Returns ``out``.

        Raises:
            GolemError: a window outside its episode, an array an episode lacks, a
                damaged or short chunk, or an ``out`` of the wrong shape or dtype.
        """
        B = len(episodes)
        if out.ndim < 2 or out.shape[0] != B or len(starts) != B or len(lengths) != B:
            raise GolemError(
                f"read_batch: {B} episodes, {len(starts)} starts and {len(lengths)} lengths "
                f"for an output of shape {list(out.shape)}"
            )
        if not out.flags.c_contiguous:
            raise GolemError("read_batch: the output batch must be C-contiguous")
        L = out.shape[1]
        if B == 0 or L == 0:
            return out
        raw = out.view(np.uint8).reshape(B, -1)  # each row: L steps of bytes
        get, db, pack = self._txn.get, self._store._chunks, _CI.pack
        verified, check, layout = self._store._verified, self._store._check_chunk, self._store._layout
        chunks: dict[tuple[int, int], np.ndarray] = {}  # chunks this batch has fetched, as bytes
        checked: dict[int, tuple[bytes, int]] = {}  # episode id → (chunk prefix, bytes per step), layout checked
        for b in range(B):
            info, start, n = episodes[b], int(starts[b]), int(lengths[b])
            known = checked.get(info.id)
            if known is None:
                prefix, dtype, _, step_bytes, step_shape = layout(info, key)
                if out.dtype != dtype or out.shape[2:] != step_shape:
                    raise GolemError(
                        f"output for {key!r} must be [B, L, {', '.join(map(str, step_shape))}] {dtype}, "
                        f"got {list(out.shape)} {out.dtype}"
                    )
                known = checked[info.id] = (prefix, step_bytes)
            prefix, step_bytes = known
            stop = start + n
            if not 0 <= start < stop <= info.meta.length or n > L:
                raise GolemError(
                    f"window [{start}, {stop}) of {key!r} is outside episode {info.id} "
                    f"(0..{info.length}) or longer than the batch's {L} steps"
                )
            cs = info.chunk_steps
            row = raw[b]
            s, pos = start, 0
            while s < stop:
                index = s // cs
                first = index * cs
                e = min(stop, first + cs)
                src = chunks.get((info.id, index))
                if src is None:
                    buf = get(prefix + pack(index), db=db)
                    if buf is None:
                        raise GolemError(
                            f"episode {info.id} is missing chunk {index} of {key!r}; run `golem data verify`"
                        )
                    if (info.id, key, index) not in verified:
                        check(info, key, index, buf)
                    src = chunks[(info.id, index)] = np.frombuffer(buf, dtype=np.uint8)
                a, z = (s - first) * step_bytes, (e - first) * step_bytes
                if z > src.shape[0]:
                    raise _short_chunk(info, key, index)
                row[pos : pos + z - a] = src[a:z]
                pos += z - a
                s = e
            if n < L:  # repeat the last step over the padding
                out[b, n:] = out[b, n - 1]
        return out

    @staticmethod
    def _frombuffer(buf: memoryview, spec: ArraySpec, offset_steps: int, steps: int) -> np.ndarray:
        items = int(np.prod(spec.step_shape, dtype=np.int64))
        dtype = np.dtype(spec.dtype)
        if (offset_steps + steps) * spec.step_bytes > len(buf):  # callers check first, naming the episode
            raise GolemError("a chunk is shorter than its episode says; run `golem data verify`")
        flat = np.frombuffer(buf, dtype=dtype, count=steps * items, offset=offset_steps * spec.step_bytes)
        return flat.reshape(steps, *spec.step_shape)

    @staticmethod
    def _check_window(info: EpisodeInfo, key: str, start: int, stop: int) -> None:
        if not 0 <= start < stop <= info.length:
            raise GolemError(f"window [{start}, {stop}) of {key!r} is outside episode {info.id} (0..{info.length})")


class TrajectoryStore:
    """An LMDB trajectory store. Create with :meth:`create`, open with :meth:`open`; use as a context manager."""

    def __init__(self, path: Path, env: lmdb.Environment, readonly: bool) -> None:
        self.path = path
        self.readonly = readonly
        self._env = env
        self._meta = env.open_db(_META, create=not readonly)
        self._episodes = env.open_db(_EPISODES, create=not readonly)
        self._chunks = env.open_db(_CHUNKS, create=not readonly)
        self._cache: dict[int, EpisodeInfo] = {}
        self._layouts: dict[tuple[int, str], tuple[bytes, np.dtype[Any], int, int, tuple[int, ...]]] = {}
        self._verified: set[tuple[int, str, int]] = set()  # chunks whose CRC-32 this object has checked
        with env.begin() as txn:
            self.schema_version = int(txn.get(b"schema_version", db=self._meta))
            self.chunk_steps = int(txn.get(b"chunk_steps", db=self._meta))

    # --- opening ---------------------------------------------------------

    @staticmethod
    def exists(path: str | Path) -> bool:
        """Whether ``path`` holds an LMDB environment (``data.mdb``)."""
        return (Path(path) / "data.mdb").is_file()

    @classmethod
    def create(cls, path: str | Path, chunk_steps: int = DEFAULT_CHUNK_STEPS) -> TrajectoryStore:
        """Create an empty store at directory ``path`` with chunks of ``chunk_steps`` steps; open for writing."""
        path = Path(path)
        if not 1 <= chunk_steps <= 1 << 20:
            raise GolemError(f"chunk_steps must be between 1 and {1 << 20}, got {chunk_steps}")
        if cls.exists(path):
            raise GolemError(f"a trajectory store already exists at {path}")
        if path.exists() and not path.is_dir():
            raise GolemError(f"{path} exists and is not a directory")
        path.mkdir(parents=True, exist_ok=True)
        env = cls._open_env(path, readonly=False)
        try:
            with env.begin(write=True) as txn:
                meta = env.open_db(_META, txn=txn)
                if txn.get(b"schema_version", db=meta) is not None:  # another process created it just now
                    raise _CreatedMeanwhile
                env.open_db(_EPISODES, txn=txn)
                env.open_db(_CHUNKS, txn=txn)
                txn.put(b"schema_version", str(SCHEMA_VERSION).encode(), db=meta)
                txn.put(b"chunk_steps", str(chunk_steps).encode(), db=meta)
                txn.put(b"next_id", b"0", db=meta)
                txn.put(b"created", utc_now().encode(), db=meta)
        except _CreatedMeanwhile:
            env.close()
            raise GolemError(f"a trajectory store already exists at {path}") from None
        except lmdb.Error as exc:
            env.close()
            raise _write_failed(path, exc, _WRITE_SLACK) from None
        log.info("store.created", path=str(path), chunk_steps=chunk_steps, schema_version=SCHEMA_VERSION)
        return cls(path, env, readonly=False)

    @classmethod
    def open(cls, path: str | Path, readonly: bool = True) -> TrajectoryStore:
        """Open an existing store; read-only (the default) lets many readers run beside one writer.

        Raises:
            GolemError: no store at ``path``, not a Golem store, or a schema newer
                than this code (checked read-only first, so nothing is changed).
        """
        path = Path(path)
        if not cls.exists(path):
            raise GolemError(f"no trajectory store at {path}")
        env = cls._open_env(path, readonly=True)
        try:
            version = cls._schema_of(env, path)
        except BaseException:
            env.close()
            raise
        if version > SCHEMA_VERSION:
            env.close()
            raise GolemError(
                f"store schema v{version} is newer than this Golem (v{SCHEMA_VERSION}); upgrade golem-core"
            )
        if not readonly:
            env.close()
            env = cls._open_env(path, readonly=False)
        return cls(path, env, readonly=readonly)

    @classmethod
    def open_or_create(cls, path: str | Path, chunk_steps: int = DEFAULT_CHUNK_STEPS) -> TrajectoryStore:
        """Open ``path`` for writing, creating the store first when there is none.

        Two processes doing this at once on a new path get the one store: whichever comes second
        opens the first one's, waiting up to :data:`CREATE_WAIT_S` for its creation to commit.
        """
        path = Path(path)
        deadline = time.monotonic() + CREATE_WAIT_S
        while True:
            try:
                return cls.open(path, readonly=False) if cls.exists(path) else cls.create(path, chunk_steps)
            except GolemError:
                if cls._initialised(path):
                    return cls.open(path, readonly=False)
                if not cls.exists(path) or time.monotonic() > deadline:  # not a store being created: say why
                    raise
                time.sleep(0.05)

    @classmethod
    def _initialised(cls, path: Path) -> bool:
        """Whether ``path`` holds a store whose creating transaction has committed."""
        if not cls.exists(path):
            return False
        try:
            env = cls._open_env(path, readonly=True)
        except GolemError:
            return False
        try:
            cls._schema_of(env, path)
            return True
        except GolemError:
            return False
        finally:
            env.close()

    @staticmethod
    def _open_env(path: Path, readonly: bool) -> lmdb.Environment:
        try:
            return lmdb.open(
                str(path), map_size=MAP_SIZE, max_dbs=4, subdir=True, readonly=readonly, lock=True, create=not readonly
            )
        except lmdb.Error as exc:
            raise GolemError(f"cannot open trajectory store {path}: {exc}") from None

    @staticmethod
    def _schema_of(env: lmdb.Environment, path: Path) -> int:
        try:
            meta = env.open_db(_META, create=False)
        except lmdb.Error:
            raise GolemError(f"{path} is an LMDB environment but not a Golem trajectory store") from None
        with env.begin() as txn:
            raw = txn.get(b"schema_version", db=meta)
        if raw is None:
            raise GolemError(f"{path} is an LMDB environment but not a Golem trajectory store")
        try:
            return int(raw)
        except ValueError:
            raise GolemError(f"{path}: unreadable schema version {bytes(raw)!r}") from None

    def close(self) -> None:
        """Close the environment (idempotent)."""
        self._env.close()

    def __enter__(self) -> TrajectoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"TrajectoryStore({str(self.path)!r}, readonly={self.readonly})"

    # --- writing ---------------------------------------------------------

    def write_episode(
        self, meta: EpisodeMeta, arrays: Mapping[str, np.ndarray], rules: Mapping[str, ArrayRule] | None = None
    ) -> int:
        """Validate and append one episode in a single write transaction; returns its id.

        Args:
            meta: episode metadata; ``length`` and ``total_return`` are set here
                from the arrays (``T`` and ``rewards.sum()``).
            arrays: name → ``[T, *step_shape]``: ``actions`` uint8 ``[T, A]`` (0/1),
                optional ``rewards`` float32 ``[T]`` (zeros if absent), sensor
                arrays (``frames`` uint8 ``[T, 3, H, W]``, ``depths``/``thermals``
                uint8 ``[T, 1, H, W]``, ``audios`` float16 ``[T, 2, N]``) and any
                other numeric array.
            rules: the sensors' array rules (:func:`golem.data.arrays.array_rules`) the
                arrays are checked against; without them only ``actions`` and ``rewards`` are.

        Raises:
            GolemError: bad input (nothing written) or a read-only store.
        """
        self._require_writable()
        arrays = normalise_arrays(meta, arrays, rules)
        T = int(arrays["actions"].shape[0])
        meta.length = T
        meta.total_return = float(arrays["rewards"].sum(dtype=np.float64))
        cs = self.chunk_steps
        n_chunks = -(-T // cs)
        specs = {name: ArraySpec(dtype=arr.dtype.name, step_shape=tuple(arr.shape[1:])) for name, arr in arrays.items()}
        need = sum(int(arr.nbytes) for arr in arrays.values()) + _WRITE_SLACK
        free = _free_bytes(self.path)
        if free is not None and free < need:  # refused before LMDB half-writes a commit it cannot finish
            raise _disk_full(self.path, free, need)
        try:
            with self._env.begin(write=True) as txn:
                episode_id = int(txn.get(b"next_id", db=self._meta))
                checksums: dict[str, list[int]] = {}
                for name, arr in arrays.items():
                    sums = checksums[name] = []
                    for index in range(n_chunks):
                        raw = arr[index * cs : (index + 1) * cs].tobytes()
                        sums.append(zlib.crc32(raw))
                        txn.put(chunk_key(episode_id, name, index), raw, db=self._chunks)
                info = EpisodeInfo(id=episode_id, meta=meta, arrays=specs, chunk_steps=cs, checksums=checksums)
                try:
                    record = json.dumps(info.to_dict()).encode()
                except (TypeError, ValueError) as exc:  # an ``extra`` value JSON cannot hold; the txn aborts
                    raise GolemError(f"episode metadata cannot be stored as JSON: {exc}") from None
                txn.put(episode_key(episode_id), record, db=self._episodes)
                txn.put(b"next_id", str(episode_id + 1).encode(), db=self._meta)
        except lmdb.Error as exc:
            raise _write_failed(self.path, exc, need) from None
        log.debug("store.episode_written", path=str(self.path), episode=episode_id, steps=T, source=meta.source)
        return episode_id

    def has(self, episode_id: int) -> bool:
        """Whether the store holds a record for ``episode_id`` (readable or not: nothing is decoded)."""
        with self._env.begin() as txn:
            return txn.get(episode_key(int(episode_id)), db=self._episodes) is not None

    def delete(self, episode_ids: Iterable[int]) -> list[int]:
        """Delete episodes (records and chunks) in one transaction; returns the ids deleted.

        Raises:
            GolemError: an id is not in the store (nothing deleted).
        """
        self._require_writable()
        ids = sorted({int(i) for i in episode_ids})
        with self._env.begin(write=True) as txn:
            missing = [i for i in ids if txn.get(episode_key(i), db=self._episodes) is None]
            if missing:
                raise GolemError(f"no episode {', '.join(map(str, missing))} in {self.path}")
            cursor = txn.cursor(db=self._chunks)
            for i in ids:
                txn.delete(episode_key(i), db=self._episodes)
                prefix = episode_key(i)
                if cursor.set_range(prefix):
                    while cursor.key()[:8] == prefix:
                        if not cursor.delete():
                            break
        for i in ids:
            self._cache.pop(i, None)
        self._layouts = {k: v for k, v in self._layouts.items() if k[0] not in ids}
        self._verified = {k for k in self._verified if k[0] not in ids}
        log.info("store.episodes_deleted", path=str(self.path), episodes=ids)
        return ids

    def _require_writable(self) -> None:
        if self.readonly:
            raise GolemError(f"trajectory store {self.path} is open read-only")

    # --- seeds -----------------------------------------------------------

    def reserve_seeds(self, scenario: str, first: int, n: int, exact: bool = False) -> list[int]:
        """Hand out ``n`` engine seeds for ``scenario``, in one write transaction.

        Without ``exact``: the seeds from ``first``, or from after every seed stored for ``scenario``
        or reserved by an earlier call (this process's or another's) if that is later — two
        recorders on one store never get the same seed. With ``exact``: ``first .. first + n - 1``
        as asked (a reproducible recording), marked reserved so that later reservations follow them.
        Seeds reserved by a recording that was interrupted are not handed out again.

        Returns:
            the seeds, ascending.

        Raises:
            GolemError: a read-only store, ``n < 0``, or seeds beyond the engine's ``0 .. 2**32 - 1``.
        """
        self._require_writable()
        if n < 0 or first < 0:
            raise GolemError(f"cannot reserve {n} seed(s) from {first}")
        try:
            with self._env.begin(write=True) as txn:
                reserved = self._reserved(txn)
                start = first
                if not exact:
                    start = max(first, int(reserved.get(scenario, 0)), self._after_stored(txn, scenario))
                end = start + n
                if end - 1 > MAX_SEED:
                    raise GolemError(
                        f"no seeds left for {scenario!r}: {n} from {start} pass the engine's largest, {MAX_SEED}"
                    )
                if end > int(reserved.get(scenario, 0)):
                    reserved[scenario] = end
                    txn.put(_RESERVED, json.dumps(reserved, sort_keys=True).encode(), db=self._meta)
        except lmdb.Error as exc:
            raise _write_failed(self.path, exc, _WRITE_SLACK) from None
        log.debug("store.seeds_reserved", path=str(self.path), scenario=scenario, first=start, n=n, exact=exact)
        return list(range(start, end))

    def _reserved(self, txn: lmdb.Transaction) -> dict[str, int]:
        raw = txn.get(_RESERVED, db=self._meta)
        if raw is None:
            return {}
        try:
            reserved = json.loads(bytes(raw))
            if not isinstance(reserved, dict) or not all(isinstance(v, int) for v in reserved.values()):
                raise ValueError("not an object of seeds")
        except ValueError:
            # Rebuilt from the stored episodes' seeds: the record only ever runs ahead of them.
            log.warning("store.reserved_seeds_unreadable", path=str(self.path))
            return {}
        return reserved

    def _after_stored(self, txn: lmdb.Transaction, scenario: str) -> int:
        """One past the largest seed stored for ``scenario`` (0 without any); unreadable records are skipped."""
        after = 0
        for _key, raw in txn.cursor(db=self._episodes):
            try:
                meta = json.loads(bytes(raw))["meta"]
                seed = meta.get("seed")
                if meta.get("scenario") == scenario and isinstance(seed, int) and not isinstance(seed, bool):
                    after = max(after, seed + 1)
            except (ValueError, KeyError, TypeError, AttributeError):
                continue  # `golem data verify` names it
        return after

    # --- reading ---------------------------------------------------------

    @contextmanager
    def reader(self) -> Iterator[StoreReader]:
        """A read transaction over a consistent snapshot; zero-copy views are valid inside the ``with``."""
        with self._env.begin(buffers=True) as txn:
            yield StoreReader(self, txn)

    def read_into(self, out: np.ndarray, episode: int | EpisodeInfo, key: str, start: int) -> np.ndarray:
        """Copy steps ``[start, start + len(out))`` of ``key`` into ``out``; see :meth:`StoreReader.read_into`."""
        with self.reader() as r:
            return r.read_into(out, episode, key, start)

    def read(self, episode: int | EpisodeInfo, key: str, start: int = 0, stop: int | None = None) -> np.ndarray:
        """A copy of steps ``[start, stop)`` of ``key`` (default: the whole array), ``[stop - start, *step_shape]``."""
        with self.reader() as r:
            info = r.info(episode)
            spec = r._spec(info, key)
            stop = info.length if stop is None else stop
            out = np.empty((max(stop - start, 0), *spec.step_shape), dtype=spec.dtype)
            return r.read_into(out, info, key, start)

    def read_episode(self, episode: int | EpisodeInfo) -> dict[str, np.ndarray]:
        """Every array of one episode as copies (name → ``[T, *step_shape]``)."""
        info = self.get(episode) if not isinstance(episode, EpisodeInfo) else episode
        return {key: self.read(info, key) for key in info.arrays}

    def get(self, episode_id: int) -> EpisodeInfo:
        """The :class:`EpisodeInfo` of ``episode_id``. Raises GolemError when there is none."""
        with self._env.begin() as txn:
            return self._info(txn, int(episode_id))

    def _check_chunk(self, info: EpisodeInfo, key: str, index: int, buf: memoryview) -> None:
        """Check a chunk's CRC-32 against the one written with it, the first time this store object reads it.

        Raises:
            GolemError: the chunk is damaged (one line naming the episode and ``golem data verify``).
        """
        marker = (info.id, key, index)
        if marker in self._verified:
            return
        sums = info.checksums.get(key)
        if sums is not None and index < len(sums) and zlib.crc32(buf) != sums[index]:
            raise GolemError(
                f"episode {info.id}: chunk {index} of {key!r} is damaged (checksum mismatch); "
                f"run `golem data verify` and delete or re-record it"
            )
        self._verified.add(marker)

    def _layout(self, info: EpisodeInfo, key: str) -> tuple[bytes, np.dtype[Any], int, int, tuple[int, ...]]:
        """Per (episode, array): chunk-key prefix, dtype, items per step, bytes per step, step shape (cached)."""
        cached = self._layouts.get((info.id, key))
        if cached is None:
            spec = info.arrays.get(key)
            if spec is None:
                raise GolemError(f"episode {info.id} has no {key!r} array (it has {', '.join(info.arrays)})")
            items = int(np.prod(spec.step_shape, dtype=np.int64))
            prefix = episode_key(info.id) + key.encode() + b"\x00"
            cached = (prefix, np.dtype(spec.dtype), items, spec.step_bytes, spec.step_shape)
            self._layouts[(info.id, key)] = cached
        return cached

    def _info(self, txn: lmdb.Transaction, episode_id: int) -> EpisodeInfo:
        info = self._cache.get(episode_id)
        if info is not None:
            return info
        raw = txn.get(episode_key(episode_id), db=self._episodes)
        if raw is None:
            raise GolemError(f"no episode {episode_id} in {self.path}")
        info = self._decode(episode_id, raw)
        self._cache[episode_id] = info
        return info

    def _decode(self, episode_id: int, raw: bytes | memoryview) -> EpisodeInfo:
        try:
            return decode_info(episode_id, raw)
        except GolemError as exc:
            raise GolemError(f"{exc} in {self.path}; run `golem data verify`") from None

    def episodes(
        self, source: str | None = None, scenario: str | None = None, tags: Iterable[str] | None = None
    ) -> list[EpisodeInfo]:
        """Episodes in id order, filtered by source, scenario and tags (an episode must carry all of them)."""
        wanted = set(tags or ())
        out: list[EpisodeInfo] = []
        with self._env.begin() as txn:
            for key, raw in txn.cursor(db=self._episodes):
                episode_id = _ID.unpack_from(key)[0]
                info = self._cache.get(episode_id) or self._decode(episode_id, raw)
                self._cache[episode_id] = info
                if source is not None and info.meta.source != source:
                    continue
                if scenario is not None and info.meta.scenario != scenario:
                    continue
                if wanted and not wanted.issubset(info.meta.tags):
                    continue
                out.append(info)
        return out

    def __len__(self) -> int:
        with self._env.begin() as txn:
            return int(txn.stat(self._episodes)["entries"])

    def stats(self) -> StoreStats:
        """Episode count, steps, array bytes, file size, episodes per source."""
        infos = self.episodes()
        by_source: dict[str, int] = {}
        for info in infos:
            by_source[info.meta.source] = by_source.get(info.meta.source, 0) + 1
        data = self.path / "data.mdb"
        return StoreStats(
            path=str(self.path),
            schema_version=self.schema_version,
            chunk_steps=self.chunk_steps,
            episodes=len(infos),
            steps=sum(i.length for i in infos),
            bytes=sum(i.nbytes for i in infos),
            file_bytes=data.stat().st_size if data.exists() else 0,
            by_source=by_source,
        )

    def verify(self, checksums: bool = True) -> Any:
        """Check every episode's chunks; see :func:`golem.data.store.verify.verify_store`. Returns a VerifyReport."""
        from golem.data.store.verify import verify_store

        return verify_store(self, checksums=checksums)
