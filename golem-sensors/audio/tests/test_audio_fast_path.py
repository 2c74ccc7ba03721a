"""The audio sensor's fast normalisation stores the same float16 bits as the plain numpy computation."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from golem.settings import GolemSettings
from golem_sensors_audio import AudioSensor
from golem_sensors_audio.sensor import normalise


def reference(buffer: np.ndarray) -> np.ndarray:
    """``[N, 2]`` int16 → float16 ``[2, N]`` with zero mean and unit variance (silence → zeros)."""
    wave = buffer.T.astype(np.float32)
    std = float(wave.std())
    if std < 1e-3:
        return np.zeros(wave.shape, dtype=np.float16)
    return ((wave - wave.mean()) / std).astype(np.float16)


def buffers(rng: np.random.Generator, n: int = 2520):
    for scale in (1, 3, 40, 1000, 12000, 32767):
        for _ in range(40):
            yield np.clip(rng.normal(rng.normal() * scale, scale, (n, 2)), -32768, 32767).astype(np.int16)
    yield np.zeros((n, 2), np.int16)
    yield np.full((n, 2), 7, np.int16)
    yield np.stack([np.zeros(n), np.full(n, 5)], axis=1).astype(np.int16)


def test_normalise_equals_reference_bit_for_bit():
    for buffer in buffers(np.random.default_rng(0)):
        fast, ref = normalise(buffer), reference(buffer)
        assert fast.shape == ref.shape and fast.dtype == np.float16 and fast.flags.c_contiguous
        assert np.array_equal(fast.view(np.uint16), ref.view(np.uint16))


def test_extract_equals_reference():
    sensor = AudioSensor(GolemSettings())
    n = sensor.shape[1]
    for buffer in list(buffers(np.random.default_rng(1), n))[::20]:
        step = sensor.extract(SimpleNamespace(audio_buffer=buffer))
        assert np.array_equal(step.view(np.uint16), reference(buffer).view(np.uint16))
    wrong = np.zeros((n + 1, 2), np.int16)
    assert np.array_equal(sensor.extract(SimpleNamespace(audio_buffer=wrong)), step)  # wrong size: held value
