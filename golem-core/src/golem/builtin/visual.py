"""The RGB visual sensor (built in): screen → 64×64 bilinear → uint8 ``[3, 64, 64]`` → conv cortex.

The resizer and the cortex live in the public :mod:`golem.images` and
:mod:`golem.cortex`, which other image-like sensors (depth, thermal) import too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from golem.cortex import conv_cortex
from golem.images import ImageSensor, bilinear_resize_uint8


class VisualSensor(ImageSensor):
    """RGB screen, bilinear to 64×64, stored uint8 ``[3, 64, 64]`` (0–255); network input float ``[0, 1]``."""

    name = "visual"
    key = "frames"
    colour = True  # photometric augmentations (colour jitter, random convolution) change it

    def configure(self, game: Any) -> None:
        import vizdoom as vzd

        game.set_screen_format(vzd.ScreenFormat.RGB24)

    def _read(self, state: Any) -> np.ndarray | None:
        screen = state.screen_buffer  # [H, W, 3] uint8 in RGB24
        if screen is None or screen.ndim != 3:
            return None
        return bilinear_resize_uint8(screen)  # [3, 64, 64]

    def to_network(self, x):
        """uint8 ``[B, T, 3, 64, 64]`` → float32 in ``[0, 1]``."""
        return x.float() / 255.0

    def cortex(self, extra_channels: int = 0):
        """``[N, 3 + extra_channels, 64, 64]`` → ``[N, 256]`` with ``brain.cortical_depth`` conv layers."""
        return conv_cortex(3 + extra_channels, self.settings.brain.cortical_depth)
