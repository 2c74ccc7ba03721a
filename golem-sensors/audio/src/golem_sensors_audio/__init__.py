"""Golem audio sensor plugin: stereo engine audio, Mel-spectrogram cortex."""

from __future__ import annotations

from golem import hookimpl
from golem_sensors_audio.sensor import AudioSensor, DSPSettings

__all__ = ["AudioSensor", "DSPSettings", "register_sensors"]


@hookimpl
def register_sensors(register) -> None:
    register("audio", AudioSensor)
