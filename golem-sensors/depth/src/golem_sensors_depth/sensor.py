"""Depth: the engine depth buffer, bilinear to 64×64, stored uint8 ``[1, 64, 64]``; joins the visual cortex."""

from __future__ import annotations

from typing import Any

import numpy as np

from golem.images import ImageSensor, bilinear_resize_uint8


class DepthSensor(ImageSensor):
    """Engine depth buffer (uint8, larger = farther), bilinear to 64×64.

    Stored uint8 ``[1, 64, 64]``; network input float ``[0, 1]``. It has no cortex
    of its own: it is the 4th channel of the visual cortex (``joins = "visual"``).
    Mirror flips the width (the base rule).
    """

    name = "depth"
    key = "depths"
    image_channels = 1
    joins = "visual"

    def configure(self, game: Any) -> None:
        game.set_depth_buffer_enabled(True)

    def _read(self, state: Any) -> np.ndarray | None:
        depth = state.depth_buffer  # [H, W] uint8
        if depth is None:
            return None
        return bilinear_resize_uint8(depth)[None]  # [1, 64, 64]

    def to_network(self, x):
        """uint8 ``[B, T, 1, 64, 64]`` → float32 in ``[0, 1]``."""
        return x.float() / 255.0
