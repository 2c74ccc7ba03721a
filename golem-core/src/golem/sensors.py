"""The sensor interface: engine buffer → stored array per tic → network input → cortex.

A sensor plugin subclasses :class:`Sensor` and registers the class through
``register_sensors``. One instance serves one engine session (it holds the
last value for tics whose buffer is missing) or one model (it builds the
cortex).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

if TYPE_CHECKING:
    import torch
    from torch import nn

    from golem.registry import Registry
    from golem.settings import GolemSettings


class Sensor(ABC):
    """One modality of what the agent perceives.

    Class attributes:
        name: component name (``visual``, ``depth``, ``thermal``, ``audio``).
        key: array name in the trajectory store and in ``.npz`` files
            (``frames``, ``depths``, ``thermals``, ``audios``).
        dtype: stored dtype (``uint8`` where the signal allows).
        step_shape: the fixed parts of one stored step's shape, ``None`` where
            the size depends on settings (``(3, None, None)``); the store checks
            every array under :attr:`key` against it and :attr:`dtype`.
        joins: name of another sensor whose cortex this one feeds as extra
            channels (depth joins ``visual``), or ``None`` for its own cortex.
        settings_model: the sensor's own settings (a :class:`golem.settings.ComponentSettings`
            subclass, e.g. the audio sensor's ``brain.dsp``), or ``None``. They are
            validated under their key, recorded in checkpoints and read with
            :func:`golem.settings.section`.
        image: its steps are images ``[C, H, W]`` aligned with the screen (visual, depth, thermal):
            geometry augmentations (:mod:`golem.augment`) move every image sensor of a window alike.
            Default ``False`` (audio); :class:`golem.images.ImageSensor` sets it.
        colour: an RGB image whose network input lies in ``[0, 1]`` (visual): photometric
            augmentations change only such sensors. Default ``False``.
    """

    name: ClassVar[str]
    key: ClassVar[str]
    dtype: ClassVar[np.dtype[Any]]
    joins: ClassVar[str | None] = None
    settings_model: ClassVar[Any] = None
    step_shape: ClassVar[tuple[int | None, ...]] = ()
    image: ClassVar[bool] = False
    colour: ClassVar[bool] = False

    def __init__(self, settings: GolemSettings) -> None:
        self.settings = settings
        self._last: np.ndarray | None = None

    # --- engine side -----------------------------------------------------

    @property
    @abstractmethod
    def shape(self) -> tuple[int, ...]:
        """Shape of one stored step, e.g. ``(3, 64, 64)``."""

    @abstractmethod
    def configure(self, game: Any) -> None:
        """Switch on what this sensor reads on a ``vizdoom.DoomGame`` before ``init()``."""

    @abstractmethod
    def _read(self, state: Any) -> np.ndarray | None:
        """This tic's stored array from a ``vizdoom.GameState``, or ``None`` when its buffer is missing."""

    def reset(self) -> None:
        """Forget the held value (new episode)."""
        self._last = None

    def extract(self, state: Any | None) -> np.ndarray:
        """One stored step, shape :attr:`shape`, dtype :attr:`dtype`.

        A missing state or buffer repeats the last value (zeros before the first), as a new array: a
        caller that keeps every step (a replay buffer, a Gymnasium user) never holds one array twice.
        """
        value = self._read(state) if state is not None else None
        if value is None:
            value = self._last.copy() if self._last is not None else np.zeros(self.shape, dtype=self.dtype)
        self._last = value
        return value

    # --- data side -------------------------------------------------------

    def recorded_settings(self) -> dict[str, dict[str, Any]]:
        """``{settings_model.key: values}`` of what shapes this sensor's stored arrays (``{}`` without settings).

        Written into every recorded or imported episode's ``sensor_settings``, so
        a reader can say which setting a mismatched array needs.
        """
        if self.settings_model is None:
            return {}
        from golem.settings import section

        return {self.settings_model.key: section(self.settings, self.settings_model).model_dump(mode="json")}

    @classmethod
    def from_legacy(
        cls,
        source: str,
        array: np.ndarray,
        settings: GolemSettings | None = None,
        recorded: dict[str, Any] | None = None,
    ) -> np.ndarray:
        """A seed-layout ``.npz`` array ``[T, …]`` of this sensor as stored ``[T, *step_shape]`` in :attr:`dtype`.

        The default accepts the stored layout (float data is cast when :attr:`dtype`
        is a float type); sensors whose legacy files differ override it.

        Args:
            source: the file's name, for messages.
            array: the file's array ``[T, …]``.
            settings: the importing settings: the result must be what a sensor built
                from them records (``None``: the defaults).
            recorded: this sensor's settings section as the file's ``meta`` recorded
                it (files exported by Golem), ``None`` for the seed's files.

        Raises:
            GolemError: one line naming ``source`` (the file) and what is wrong.
        """
        from golem.errors import GolemError

        want = ", ".join(["T", *("*" if w is None else str(w) for w in cls.step_shape)])
        if array.ndim != 1 + len(cls.step_shape) or any(
            w is not None and w != s for w, s in zip(cls.step_shape, array.shape[1:])
        ):
            raise GolemError(f"{source}: {cls.key!r} must be [{want}], got {list(array.shape)}")
        if array.dtype == cls.dtype:
            return np.ascontiguousarray(array)
        if np.dtype(cls.dtype).kind == "f" and array.dtype.kind == "f":
            return np.ascontiguousarray(array.astype(cls.dtype))
        raise GolemError(f"{source}: {cls.key!r} must be {np.dtype(cls.dtype)}, got {array.dtype}")

    def mirror(self, x: np.ndarray) -> np.ndarray:
        """Left-right mirror of stored steps ``x[..., *shape]`` (default: flip the last axis).

        Must be an involution: ``mirror(mirror(x)) == x``.
        """
        return x[..., ::-1]

    def to_network(self, x: torch.Tensor) -> torch.Tensor:
        """Stored steps ``[B, T, *shape]`` → float network input (default: as float32)."""
        return x.float()

    # --- model side ------------------------------------------------------

    @property
    def channels(self) -> int:
        """Channels this sensor contributes when it joins another sensor's cortex."""
        return self.shape[0]

    def cortex(self, extra_channels: int = 0) -> nn.Module:
        """The encoder for this modality: ``[N, C + extra_channels, ...] → [N, out_features]``.

        The returned module has an ``out_features: int`` attribute. Sensors
        that join another cortex need not implement it.
        """
        raise NotImplementedError(f"sensor {self.name!r} has no cortex of its own (joins {self.joins!r})")


def recorded_settings(sensors: list[Sensor]) -> dict[str, dict[str, Any]]:
    """The settings sections that shape these sensors' stored arrays (:meth:`Sensor.recorded_settings`), merged."""
    out: dict[str, dict[str, Any]] = {}
    for sensor in sensors:
        out.update(sensor.recorded_settings())
    return out


def build_sensors(settings: GolemSettings, registry: Registry) -> list[Sensor]:
    """Instances of the enabled sensors (``brain.sensors``), in order; unknown names fail listing the known."""
    return [registry.get("sensors", name).obj(settings) for name in settings.brain.sensors]


def with_default_sensors(
    settings: GolemSettings, registry: Registry, wanted: Sequence[str], given: Collection[str]
) -> tuple[GolemSettings, list[str], list[str]]:
    """``settings`` with the sensors of ``wanted`` (a scenario spec's :attr:`~golem.scenarios.ScenarioSpec.sensors`)
    added after ``brain.sensors``, where the user chose none (``"brain.sensors"`` not in ``given``).

    Returns:
        The settings, the names added, and the names left out because no installed plugin registers them
        (a hint for the user; nothing fails for a default).
    """
    if "brain.sensors" in given:
        return settings, [], []
    have = set(registry.names("sensors"))
    chosen = list(settings.brain.sensors)
    added = [name for name in wanted if name in have and name not in chosen]
    missing = [name for name in wanted if name not in have]
    if not added:
        return settings, [], missing
    brain = settings.brain.model_copy(update={"sensors": [*chosen, *added]})
    return settings.model_copy(update={"brain": brain}), added, missing
