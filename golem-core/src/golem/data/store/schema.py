"""What an episode is: its metadata, the arrays it holds and their accepted dtypes.

Metadata is stored as JSON (never pickle). Array specs record the dtype and the
shape of *one step*; the step axis ``T`` is the episode length.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal, Optional

import numpy as np
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictStr,
    ValidationError,
)

from golem.errors import GolemError

if TYPE_CHECKING:
    from golem.data.arrays import ArrayRule

#: Layout version written at creation; a store newer than this is refused.
SCHEMA_VERSION = 1

SOURCES: tuple[str, ...] = ("human", "expert", "recovery", "agent")
Source = Literal["human", "expert", "recovery", "agent"]

#: The arrays the store itself knows: dtype and the fixed parts of one step's shape. Sensor arrays
#: come from the registered sensors (:func:`golem.data.arrays.array_rules`).
CORE_ARRAYS: dict[str, tuple[np.dtype[Any], tuple[int | None, ...]]] = {
    "actions": (np.dtype(np.uint8), (None,)),
    "rewards": (np.dtype(np.float32), ()),
    "tic": (np.dtype(np.int32), ()),
}


#: Engine seeds are unsigned 32-bit integers (ViZDoom's ``set_seed``).
MAX_SEED = 2**32 - 1


def utc_now() -> str:
    """The current time as ISO-8601 UTC, seconds precision (``2026-01-01T12:00:00+00:00``)."""
    return _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat()


# --- metadata checks -----------------------------------------------------


def _integer(value: Any) -> Any:
    """An int (numpy integers included), never a bool, float or string: those fail as they come."""
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("must be a whole number (an integer, not a float, bool or string)")
    return value


def _number(value: Any) -> Any:
    """A finite int or float (numpy scalars included), never a bool or string."""
    if isinstance(value, (np.integer, np.floating)):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("must be a number")
    if not math.isfinite(value):
        raise ValueError("must be finite (not NaN or Inf)")
    return float(value)


def _iso_time(value: str) -> str:
    try:
        _dt.datetime.fromisoformat(value)
    except ValueError:
        raise ValueError("must be an ISO-8601 time such as 2026-01-01T12:00:00+00:00") from None
    return value


def _flag(value: Any) -> Any:
    """numpy's bool as Python's; anything else as it comes (StrictBool refuses 0/1 and text)."""
    return bool(value) if isinstance(value, np.bool_) else value


_Int = Annotated[int, BeforeValidator(_integer)]
_Flag = Annotated[StrictBool, BeforeValidator(_flag)]
_Name = Annotated[StrictStr, Field(min_length=1)]


class MetaModel(BaseModel):
    """The types and ranges of :class:`EpisodeMeta`'s fields, checked for every episode however it is made.

    Recorded episodes, imported files and records read back from a store all
    pass it (``EpisodeMeta.__post_init__``), so a value that would break a
    reader later (a list for ``scenario``, a float ``seed``) is refused where
    it enters.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    profile: _Name
    action_names: Annotated[list[StrictStr], Field(min_length=1)]
    scenario: _Name
    source: Source
    sensors: list[StrictStr]
    map: Optional[StrictStr]
    seed: Optional[Annotated[_Int, Field(ge=0, le=MAX_SEED)]]
    length: Annotated[_Int, Field(ge=0)]
    total_return: Annotated[float, BeforeValidator(_number)]
    created: Annotated[StrictStr, AfterValidator(_iso_time)]
    tags: list[StrictStr]
    extra: dict[StrictStr, Any]
    terminated: Optional[_Flag]
    truncated: Optional[_Flag]
    frame_skip: Optional[Annotated[_Int, Field(ge=1)]]
    sensor_settings: dict[StrictStr, dict[StrictStr, Any]]


def meta_problem(exc: ValidationError) -> str:
    """One line from a metadata :class:`ValidationError`: the field, its value and what it must be."""
    err = exc.errors()[0]
    where = ".".join(str(part) for part in err["loc"]) or "metadata"
    value = repr(err.get("input"))
    if len(value) > 60:
        value = value[:57] + "..."
    message = str(err["msg"]).removeprefix("Value error, ")
    return f"episode metadata {where}={value}: {message}"


@dataclass
class EpisodeMeta:
    """Who recorded an episode, where and how.

    ``length`` (steps) and ``total_return`` (sum of rewards) are filled in by
    :meth:`golem.data.store.TrajectoryStore.write_episode` from the arrays.
    ``terminated`` (the episode ended by a death or an exit) and ``truncated``
    (a time-out cut it) are as Gymnasium and Minari count them; ``None`` where
    the recorder did not know (imports, older stores).
    """

    profile: str
    action_names: list[str]
    scenario: str
    source: Source = "human"
    sensors: list[str] = field(default_factory=lambda: ["visual"])
    map: str | None = None
    seed: int | None = None
    length: int = 0
    total_return: float = 0.0
    created: str = field(default_factory=utc_now)
    tags: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    terminated: bool | None = None
    truncated: bool | None = None
    #: Tics each step's buttons were held (``game.frame_skip`` when it was recorded); ``None``: not recorded
    #: (imports, older stores), read as 1. Training hands it on to the model, which plays at it.
    frame_skip: int | None = None
    #: The settings sections that shape the stored sensor arrays, e.g. ``{"brain.dsp": {"sample_rate": 22050, …}}``.
    sensor_settings: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.source, str) or self.source not in SOURCES:
            raise GolemError(f"episode source {self.source!r} is not one of {', '.join(SOURCES)}")
        if isinstance(self.action_names, (list, tuple)) and not self.action_names:
            raise GolemError("episode metadata needs at least one action name")
        try:
            checked = MetaModel.model_validate(self.__dict__)
        except ValidationError as exc:
            raise GolemError(meta_problem(exc)) from None
        for name in MetaModel.model_fields:  # the checked values: lists for tuples, ints for numpy integers
            setattr(self, name, getattr(checked, name))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EpisodeMeta:
        """Inverse of :meth:`to_dict`; unknown keys go to ``extra`` so newer minor fields survive.

        Raises:
            GolemError: ``data`` is not an object, lacks a required field or has a field of the wrong type.
        """
        if not isinstance(data, Mapping):
            raise GolemError(f"episode metadata is {type(data).__name__}, not an object")
        known = set(cls.__dataclass_fields__)
        kwargs = {k: v for k, v in data.items() if k in known}
        unknown = {k: v for k, v in data.items() if k not in known}
        missing = [k for k in ("profile", "action_names", "scenario") if k not in kwargs]
        if missing:
            raise GolemError(f"episode metadata has no {', '.join(missing)}")
        meta = cls(**kwargs)
        if unknown:
            meta.extra = {**unknown, **meta.extra}
        return meta


@dataclass(frozen=True)
class ArraySpec:
    """One stored array: ``dtype`` (numpy name) and ``step_shape`` (shape of one step, without T)."""

    dtype: str
    step_shape: tuple[int, ...]

    @property
    def step_bytes(self) -> int:
        """Bytes of one step."""
        return int(np.dtype(self.dtype).itemsize * int(np.prod(self.step_shape, dtype=np.int64)))

    def to_dict(self) -> dict[str, Any]:
        return {"dtype": self.dtype, "step_shape": list(self.step_shape)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ArraySpec:
        return cls(dtype=str(data["dtype"]), step_shape=tuple(int(x) for x in data["step_shape"]))


@dataclass(frozen=True)
class EpisodeInfo:
    """A stored episode as listed: its id, metadata, array specs and chunking."""

    id: int
    meta: EpisodeMeta
    arrays: dict[str, ArraySpec]
    chunk_steps: int
    checksums: dict[str, list[int]] = field(default_factory=dict, repr=False)

    @property
    def length(self) -> int:
        """Steps in the episode (T)."""
        return self.meta.length

    @property
    def n_chunks(self) -> int:
        """Chunks per array: ``ceil(T / chunk_steps)``."""
        return -(-self.meta.length // self.chunk_steps)

    @property
    def nbytes(self) -> int:
        """Bytes of all arrays together."""
        return self.meta.length * sum(spec.step_bytes for spec in self.arrays.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "meta": self.meta.to_dict(),
            "arrays": {k: v.to_dict() for k, v in self.arrays.items()},
            "chunk_steps": self.chunk_steps,
            "checksums": self.checksums,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EpisodeInfo:
        return cls(
            id=int(data["id"]),
            meta=EpisodeMeta.from_dict(data["meta"]),
            arrays={k: ArraySpec.from_dict(v) for k, v in data["arrays"].items()},
            chunk_steps=int(data["chunk_steps"]),
            checksums={k: [int(c) for c in v] for k, v in data.get("checksums", {}).items()},
        )


def normalise_arrays(
    meta: EpisodeMeta, arrays: Mapping[str, np.ndarray], rules: Mapping[str, ArrayRule] | None = None
) -> dict[str, np.ndarray]:
    """Check an episode's arrays and return them C-contiguous in their stored dtypes.

    Rules: every array has the same length ``T >= 1`` on axis 0; ``actions``
    ``[T, A]`` with ``A == len(meta.action_names)`` and values 0/1 (bool, int or
    float 0/1 are cast to uint8); ``rewards`` ``[T]`` (cast to float32; zeros
    when absent); ``tic`` ``[T]``, optional, the engine tic each step was decided on
    (integers, increasing; cast to int32; stores without it: one tic per step); arrays
    named by ``rules`` (the registered sensors') have their dtype (float to a float dtype is cast) and fixed step
    sizes; every sensor in ``meta.sensors`` that ``rules`` knows has its array. Any other key is stored
    as given (numeric dtypes only).

    Raises:
        GolemError: one line naming the first problem.
    """
    if "actions" not in arrays:
        raise GolemError("episode has no 'actions' array")
    out: dict[str, np.ndarray] = {}
    lengths: dict[str, int] = {}
    for name, raw in arrays.items():
        if not isinstance(name, str) or not name or "\x00" in name or len(name.encode()) > 200:
            raise GolemError(f"array name {name!r} is not allowed")
        arr = np.asarray(raw)
        if arr.ndim == 0:
            raise GolemError(f"array {name!r} is a scalar; arrays need a step axis [T, ...]")
        if arr.dtype.kind not in "biuf":
            raise GolemError(f"array {name!r} has dtype {arr.dtype}; only bool, integer and float arrays are stored")
        lengths[name] = arr.shape[0]
        out[name] = _cast(name, arr, meta, rules or {})
    if len(set(lengths.values())) != 1:
        detail = ", ".join(f"{k}={v}" for k, v in lengths.items())
        raise GolemError(f"arrays have different lengths: {detail}")
    T = next(iter(lengths.values()))
    if T < 1:
        raise GolemError("episode is empty (0 steps)")
    if "rewards" not in out:
        out["rewards"] = np.zeros(T, dtype=np.float32)
    keys = {rule.sensor: key for key, rule in (rules or {}).items()}
    for sensor in meta.sensors:
        key = keys.get(sensor)
        if key is not None and key not in out:
            raise GolemError(f"episode lists sensor {sensor!r} but has no {key!r} array")
    return {k: np.ascontiguousarray(v) for k, v in out.items()}


def _cast(name: str, arr: np.ndarray, meta: EpisodeMeta, rules: Mapping[str, ArrayRule]) -> np.ndarray:
    if name == "actions":
        if arr.ndim != 2:
            raise GolemError(f"'actions' must be [T, A], got shape {list(arr.shape)}")
        if arr.shape[1] != len(meta.action_names):
            raise GolemError(
                f"'actions' has {arr.shape[1]} columns but profile {meta.profile!r} has "
                f"{len(meta.action_names)} actions"
            )
        if arr.size and not np.isin(arr, (0, 1)).all():
            raise GolemError("'actions' must hold 0/1 button states")
        return arr.astype(np.uint8, copy=False)
    if name == "rewards":
        if arr.ndim != 1:
            raise GolemError(f"'rewards' must be [T], got shape {list(arr.shape)}")
        with np.errstate(over="ignore"):
            rewards = arr.astype(np.float32, copy=False)
        if not np.isfinite(rewards).all():  # also a float64 reward beyond float32's range
            raise GolemError(f"'rewards' holds NaN or Inf (first at step {int(np.argmin(np.isfinite(rewards)))})")
        return rewards
    if name == "tic":
        if arr.ndim != 1 or arr.dtype.kind not in "iu":
            raise GolemError(
                f"'tic' must be integer [T] (the engine tic of each step), got {arr.dtype} {list(arr.shape)}"
            )
        if arr.size > 1 and (np.diff(arr.astype(np.int64)) < 1).any():
            raise GolemError("'tic' must increase from step to step")
        return arr.astype(np.int32, copy=False)
    rule = rules.get(name)
    if rule is None:
        return arr
    dtype, step = rule.dtype, rule.step_shape
    if arr.ndim != 1 + len(step) or any(w is not None and w != s for w, s in zip(step, arr.shape[1:])):
        want = ["T", *("*" if w is None else str(w) for w in step)]
        raise GolemError(f"{name!r} must be [{', '.join(want)}], got shape {list(arr.shape)}")
    if arr.dtype == dtype:
        return arr
    if dtype.kind == "f" and arr.dtype.kind == "f":
        return arr.astype(dtype)
    raise GolemError(f"{name!r} must be {dtype}, got {arr.dtype}")
