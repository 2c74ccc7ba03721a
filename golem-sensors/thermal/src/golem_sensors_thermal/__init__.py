"""Golem thermal sensor plugin: a binary mask of dynamic entities from the labels buffer."""

from __future__ import annotations

from golem import hookimpl
from golem_sensors_thermal.sensor import ThermalSensor

__all__ = ["ThermalSensor", "register_sensors"]


@hookimpl
def register_sensors(register) -> None:
    register("thermal", ThermalSensor)
