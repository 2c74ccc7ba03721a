"""The depth sensor's fast resize stores exactly what the plain computation stored."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from golem.images import _bilinear_axis
from golem.settings import GolemSettings
from golem_sensors_depth import DepthSensor


def reference(depth: np.ndarray) -> np.ndarray:
    """Bilinear (rows, then columns, float32) to 64×64, rounded: uint8 ``[1, 64, 64]``."""
    y0, y1, wy = _bilinear_axis(depth.shape[0], 64)
    x0, x1, wx = _bilinear_axis(depth.shape[1], 64)
    rows = depth[y0].astype(np.float32)
    rows += (depth[y1].astype(np.float32) - rows) * wy[:, None]
    out = rows[:, x0]
    out += (rows[:, x1] - out) * wx[None, :]
    return np.clip(out + 0.5, 0, 255).astype(np.uint8)[None]


def test_extract_equals_reference_on_random_buffers():
    sensor = DepthSensor(GolemSettings())
    rng = np.random.default_rng(0)
    for shape in ((120, 160), (240, 320), (61, 97)):
        for _ in range(5):
            depth = rng.integers(0, 256, shape, dtype=np.uint8)
            step = sensor.extract(SimpleNamespace(depth_buffer=depth))
            assert step.shape == (1, 64, 64) and step.dtype == np.uint8 and step.flags.c_contiguous
            assert np.array_equal(step, reference(depth))
