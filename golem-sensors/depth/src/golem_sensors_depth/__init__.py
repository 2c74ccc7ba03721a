"""Golem depth sensor plugin: the engine depth buffer as a fourth visual channel."""

from __future__ import annotations

from golem import hookimpl
from golem_sensors_depth.sensor import DepthSensor

__all__ = ["DepthSensor", "register_sensors"]


@hookimpl
def register_sensors(register) -> None:
    register("depth", DepthSensor)
