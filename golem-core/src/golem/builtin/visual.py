"""The RGB visual sensor (built in): screen → 64×64 bilinear → uint8 ``[3, 64, 64]`` → conv cortex.

Also holds the small image helpers and the conv encoder other image-like
sensors (depth, thermal) reuse.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from golem.sensors import Sensor

SIZE = 64
#: Conv channels of the cortex, layer by layer (``cortical_depth`` of them are used).
CORTEX_CHANNELS = (32, 64, 64, 128, 128, 256)
FEATURES = 256


@lru_cache(maxsize=32)
def _bilinear_axis(src: int, dst: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Source indices ``i0, i1`` and weights ``w`` (of ``i1``) for resizing one axis, half-pixel centres."""
    pos = (np.arange(dst, dtype=np.float64) + 0.5) * (src / dst) - 0.5
    pos = np.clip(pos, 0, src - 1)
    i0 = np.floor(pos).astype(np.intp)
    i1 = np.minimum(i0 + 1, src - 1)
    return i0, i1, (pos - i0).astype(np.float32)


def bilinear_resize(image: np.ndarray, height: int = SIZE, width: int = SIZE) -> np.ndarray:
    """Bilinear resize of ``[H, W]`` or ``[H, W, C]`` (any dtype) → float32 ``[height, width(, C)]``.

    Same sampling as ``torch.nn.functional.interpolate(mode="bilinear", align_corners=False, antialias=False)``.
    """
    y0, y1, wy = _bilinear_axis(image.shape[0], height)
    x0, x1, wx = _bilinear_axis(image.shape[1], width)
    extra = (1,) * (image.ndim - 2)
    rows = image[y0].astype(np.float32)
    rows += (image[y1].astype(np.float32) - rows) * wy.reshape(-1, 1, *extra)
    out = rows[:, x0]
    out += (rows[:, x1] - out) * wx.reshape(1, -1, *extra)
    return out


def to_uint8(x: np.ndarray) -> np.ndarray:
    """Round and clip float values to uint8."""
    return np.clip(x + 0.5, 0, 255).astype(np.uint8)


@lru_cache(maxsize=32)
def _nearest_axis(src: int, dst: int) -> np.ndarray:
    return np.minimum(((np.arange(dst) + 0.5) * (src / dst)).astype(np.intp), src - 1)


def nearest_resize(image: np.ndarray, height: int = SIZE, width: int = SIZE) -> np.ndarray:
    """Nearest-neighbour resize of ``[H, W, ...]`` → ``[height, width, ...]``, dtype kept."""
    return image[_nearest_axis(image.shape[0], height)][:, _nearest_axis(image.shape[1], width)]


def conv_cortex(in_channels: int, depth: int, *, size: int = SIZE, channels=CORTEX_CHANNELS, features: int = FEATURES):
    """``[N, in_channels, size, size]`` → ``[N, features]``: ``depth`` × (conv 3×3 stride 2 + ReLU), flatten, Linear + ReLU.

    The module's ``out_features`` is ``features``.
    """
    from torch import nn

    layers: list[nn.Module] = []
    c, hw = in_channels, size
    for out_c in channels[:depth]:
        layers += [nn.Conv2d(c, out_c, kernel_size=3, stride=2, padding=1), nn.ReLU()]
        c, hw = out_c, (hw + 1) // 2
    layers += [nn.Flatten(), nn.Linear(c * hw * hw, features), nn.ReLU()]
    module = nn.Sequential(*layers)
    module.out_features = features
    return module


class VisualSensor(Sensor):
    """RGB screen, bilinear to 64×64, stored uint8 ``[3, 64, 64]`` (0–255); network input float ``[0, 1]``."""

    name = "visual"
    key = "frames"
    dtype = np.dtype(np.uint8)

    @property
    def shape(self) -> tuple[int, ...]:
        return (3, SIZE, SIZE)

    def configure(self, game: Any) -> None:
        import vizdoom as vzd

        game.set_screen_format(vzd.ScreenFormat.RGB24)

    def _read(self, state: Any) -> np.ndarray | None:
        screen = state.screen_buffer  # [H, W, 3] uint8 in RGB24
        if screen is None or screen.ndim != 3:
            return None
        return np.ascontiguousarray(to_uint8(bilinear_resize(screen)).transpose(2, 0, 1))

    def to_network(self, x):
        """uint8 ``[B, T, 3, 64, 64]`` → float32 in ``[0, 1]``."""
        return x.float() / 255.0

    def cortex(self, extra_channels: int = 0):
        """``[N, 3 + extra_channels, 64, 64]`` → ``[N, 256]`` with ``brain.cortical_depth`` conv layers."""
        return conv_cortex(3 + extra_channels, self.settings.brain.cortical_depth)
