"""Golem automap sensor plugin: the engine's map of what the player has seen, with a cortex of its own."""

from __future__ import annotations

from golem import hookimpl
from golem_sensors_automap.sensor import AutomapSensor

__all__ = ["AutomapSensor", "register_sensors"]


@hookimpl
def register_sensors(register) -> None:
    register("automap", AutomapSensor)
