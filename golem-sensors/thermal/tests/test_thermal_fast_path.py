"""The thermal sensor's fast nearest-neighbour mask stores exactly what the plain computation stored."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from golem.settings import GolemSettings
from golem_sensors_thermal import ThermalSensor


def reference(labels: np.ndarray, objects: list[SimpleNamespace]) -> np.ndarray:
    """Label > 1, nearest (half-pixel centres) to 64×64, the player's own sprite cold: uint8 ``[1, 64, 64]``."""
    iy = np.minimum(((np.arange(64) + 0.5) * (labels.shape[0] / 64)).astype(np.intp), labels.shape[0] - 1)
    ix = np.minimum(((np.arange(64) + 0.5) * (labels.shape[1] / 64)).astype(np.intp), labels.shape[1] - 1)
    small = labels[iy][:, ix]
    hot = small > 1
    for label in objects:
        if label.object_category == "Self":
            hot &= small != label.value
    return hot.astype(np.uint8)[None]


def test_extract_equals_reference_on_random_buffers():
    sensor = ThermalSensor(GolemSettings())
    rng = np.random.default_rng(0)
    for shape in ((120, 160), (240, 320), (61, 97)):
        for _ in range(5):
            labels = rng.integers(0, 8, shape, dtype=np.uint8)
            objects = [
                SimpleNamespace(value=int(v), object_category=c)
                for v, c in zip(rng.choice(np.arange(2, 8), 3, replace=False), ("Self", "Monster", "Self"))
            ]
            step = sensor.extract(SimpleNamespace(labels_buffer=labels, labels=objects))
            assert step.shape == (1, 64, 64) and step.dtype == np.uint8
            assert set(np.unique(step)) <= {0, 1}
            assert np.array_equal(step, reference(labels, objects))
