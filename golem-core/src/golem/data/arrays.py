"""What the trajectory store knows of sensor arrays: the rules the registered sensors declare.

The store itself knows only ``actions`` and ``rewards``. Each sensor class
declares its array (``key``, ``dtype``, the fixed parts of one step's shape in
``step_shape``) and how a seed-layout ``.npz`` array becomes its stored
layout (:meth:`golem.sensors.Sensor.from_legacy`); :func:`array_rules` collects
them from a registry, so a third-party sensor's arrays are checked and
imported like the built-in ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from golem.registry import Registry


@dataclass(frozen=True)
class ArrayRule:
    """One sensor's stored array.

    Attributes:
        key: array name in the store and in ``.npz`` files (``frames``).
        sensor: the sensor's component name (``visual``).
        dtype: the stored dtype.
        step_shape: the fixed parts of one step's shape (``None`` = any size), e.g. ``(3, None, None)``.
        owner: the sensor class (its ``from_legacy`` converts seed-layout arrays).
    """

    key: str
    sensor: str
    dtype: np.dtype[Any]
    step_shape: tuple[int | None, ...]
    owner: Any

    def describe(self) -> str:
        """``[T, 3, *, *] uint8``."""
        return f"[{', '.join(['T', *('*' if w is None else str(w) for w in self.step_shape)])}] {self.dtype}"


def array_rules(registry: Registry) -> dict[str, ArrayRule]:
    """``{array key: rule}`` of every registered sensor class."""
    rules: dict[str, ArrayRule] = {}
    for component in registry:
        if component.category != "sensors":
            continue
        cls = component.obj
        key = getattr(cls, "key", None)
        if not isinstance(key, str) or not key:
            continue
        rules[key] = ArrayRule(
            key=key,
            sensor=component.name,
            dtype=np.dtype(cls.dtype),
            step_shape=tuple(getattr(cls, "step_shape", ()) or ()),
            owner=cls,
        )
    return rules


def sensor_keys(rules: Mapping[str, ArrayRule]) -> dict[str, str]:
    """``{sensor name: array key}`` from :func:`array_rules`."""
    return {rule.sensor: key for key, rule in rules.items()}


__all__ = ["ArrayRule", "array_rules", "sensor_keys"]
