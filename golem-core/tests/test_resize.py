"""The fast image resizers equal the plain reference computation and torch's interpolate."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from golem.builtin.visual import VisualSensor
from golem.images import (
    _bilinear_axis,
    _nearest_axis,
    bilinear_resize,
    bilinear_resize_uint8,
    nearest_resize,
    to_uint8,
)
from golem.settings import GolemSettings

SHAPES = [(120, 160, 3), (120, 160), (240, 320, 3), (37, 53, 3), (30, 40), (64, 64, 3), (1, 7, 3)]
SIZES = [(64, 64), (64, 64), (64, 64), (64, 64), (64, 64), (64, 64), (5, 9)]


def reference_bilinear(image: np.ndarray, height: int, width: int) -> np.ndarray:
    """The plain separable resize the fast path replaces: float32 ``[height, width, *C]``."""
    y0, y1, wy = _bilinear_axis(image.shape[0], height)
    x0, x1, wx = _bilinear_axis(image.shape[1], width)
    extra = (1,) * (image.ndim - 2)
    rows = image[y0].astype(np.float32)
    rows += (image[y1].astype(np.float32) - rows) * wy.reshape(-1, 1, *extra)
    out = rows[:, x0]
    out += (rows[:, x1] - out) * wx.reshape(1, -1, *extra)
    return out


def channels_first(x: np.ndarray) -> np.ndarray:
    return np.moveaxis(x, -1, 0) if x.ndim == 3 else x


def torch_bilinear(image: np.ndarray, height: int, width: int) -> np.ndarray:
    """torch's bilinear (align_corners=False, antialias=False) in float32, channels first."""
    x = torch.from_numpy(image.astype(np.float32))
    x = x.permute(2, 0, 1)[None] if x.ndim == 3 else x[None, None]
    y = F.interpolate(x, size=(height, width), mode="bilinear", align_corners=False, antialias=False)[0]
    return (y if image.ndim == 3 else y[0]).numpy()


@pytest.mark.parametrize(("shape", "size"), list(zip(SHAPES, SIZES)))
def test_bilinear_equals_reference_bit_for_bit(shape, size):
    rng = np.random.default_rng(sum(shape))
    for _ in range(5):
        image = rng.integers(0, 256, shape, dtype=np.uint8)
        ref = reference_bilinear(image, *size)
        fast = bilinear_resize(image, *size)
        assert fast.dtype == np.float32 and fast.shape == ref.shape
        assert np.array_equal(fast, ref)
        small = bilinear_resize_uint8(image, *size)
        assert small.dtype == np.uint8 and small.flags.c_contiguous
        assert np.array_equal(small, channels_first(to_uint8(ref)))


@pytest.mark.parametrize(("shape", "size"), list(zip(SHAPES, SIZES)))
def test_bilinear_matches_torch(shape, size):
    rng = np.random.default_rng(7 + sum(shape))
    image = rng.integers(0, 256, shape, dtype=np.uint8)
    expected = torch_bilinear(image, *size)
    assert np.allclose(channels_first(bilinear_resize(image, *size)), expected, atol=1e-3)
    rounded = to_uint8(expected)
    diff = np.abs(bilinear_resize_uint8(image, *size).astype(int) - rounded)
    assert diff.max() <= 1 and (diff > 0).mean() < 1e-3  # only float32 ties at .5 may round apart


def test_bilinear_float_input_is_clipped_like_to_uint8():
    image = np.random.default_rng(3).normal(128, 200, (120, 160, 3)).astype(np.float32)
    assert np.array_equal(bilinear_resize_uint8(image), channels_first(to_uint8(reference_bilinear(image, 64, 64))))


def test_bilinear_rejects_other_ranks():
    with pytest.raises(ValueError):
        bilinear_resize_uint8(np.zeros((2, 3, 4, 5), np.uint8))


@pytest.mark.parametrize("shape", [(120, 160), (120, 160, 3), (37, 53), (30, 40, 2)])
def test_nearest_equals_reference_and_torch(shape):
    image = np.random.default_rng(5).integers(0, 256, shape, dtype=np.uint8)
    ref = image[_nearest_axis(shape[0], 64)][:, _nearest_axis(shape[1], 64)]
    fast = nearest_resize(image)
    assert fast.dtype == np.uint8 and np.array_equal(fast, ref)
    x = torch.from_numpy(image).float()
    x = x.permute(2, 0, 1)[None] if x.ndim == 3 else x[None, None]
    expected = F.interpolate(x, size=(64, 64), mode="nearest-exact")[0].to(torch.uint8).numpy()
    assert np.array_equal(channels_first(fast), expected if len(shape) == 3 else expected[0])


def test_visual_sensor_reads_the_reference_frame():
    sensor = VisualSensor(GolemSettings())
    screen = np.random.default_rng(9).integers(0, 256, (120, 160, 3), dtype=np.uint8)
    frame = sensor.extract(SimpleNamespace(screen_buffer=screen))
    expected = np.ascontiguousarray(to_uint8(reference_bilinear(screen, 64, 64)).transpose(2, 0, 1))
    assert frame.shape == (3, 64, 64) and frame.dtype == np.uint8 and np.array_equal(frame, expected)
