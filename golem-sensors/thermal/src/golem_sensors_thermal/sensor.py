"""Thermal: which pixels show a dynamic entity (monster, projectile, item), from the labels buffer."""

from __future__ import annotations

from typing import Any

import numpy as np

from golem.cortex import conv_cortex
from golem.images import ImageSensor, nearest_resize

#: Labels-buffer values of the static scene. Since ViZDoom 1.3 the buffer marks
#: walls (0) and floors/ceilings (1); entities get values above these. (The
#: seeds' ``label > 0`` predates that change.)
STATIC_LABEL_MAX = 1
#: Label category of the player's own sprite (its weapon), which is not an entity in view.
SELF_CATEGORY = "Self"


class ThermalSensor(ImageSensor):
    """Binary entity mask: ``1`` where the label marks an entity, else ``0``; nearest-neighbour to 64×64.

    Stored uint8 ``{0, 1}`` ``[1, 64, 64]``; network input float ``{0., 1.}``.
    The player's own weapon sprite is excluded. Mirror flips the width.
    Under ``+viz_nocheat 1`` the engine fills the labels buffer with noise.
    """

    name = "thermal"
    key = "thermals"
    image_channels = 1

    @classmethod
    def resize_image(cls, image: np.ndarray) -> np.ndarray:
        """A mask ``[1, H, W]`` → ``[1, 64, 64]`` by nearest neighbour, as the labels buffer is resized."""
        return nearest_resize(image[0])[None]

    @classmethod
    def from_legacy(
        cls, source: str, array: np.ndarray, settings: Any = None, recorded: dict[str, Any] | None = None
    ) -> np.ndarray:
        """Seed-layout masks ``[T, H, W]`` or ``[T, 1, H, W]`` → uint8 ``{0, 1}`` ``[T, 1, 64, 64]``, as recorded.

        The seed stored float masks in ``{0, 1}``; uint8 masks in ``{0, 1}`` or
        ``{0, 255}`` are accepted too. Anything else is not a mask (one-line error).
        """
        from golem.errors import GolemError

        values = np.unique(array)
        if array.dtype.kind == "f" and np.isin(values, (0.0, 1.0)).all():
            mask = (array > 0.5).astype(np.uint8)
        elif array.dtype.kind in "biu" and (np.isin(values, (0, 1)).all() or np.isin(values, (0, 255)).all()):
            mask = (array > 0).astype(np.uint8)
        else:
            shown = ", ".join(f"{v:g}" for v in values[:6].astype(float))
            raise GolemError(
                f"{source}: 'thermals' must be a 0/1 mask (float or uint8, or uint8 0/255), found values {shown}"
            )
        return super().from_legacy(source, mask)

    def configure(self, game: Any) -> None:
        game.set_labels_buffer_enabled(True)

    def _read(self, state: Any) -> np.ndarray | None:
        labels = state.labels_buffer  # [H, W] uint8
        if labels is None:
            return None
        small = nearest_resize(labels)  # [64, 64] uint8
        hot = small > STATIC_LABEL_MAX
        for label in state.labels or ():
            if getattr(label, "object_category", None) == SELF_CATEGORY:
                hot &= small != label.value
        return hot.view(np.uint8)[None]  # bool is one byte: False → 0, True → 1

    def cortex(self, extra_channels: int = 0):
        """``[N, 1 + extra_channels, 64, 64]`` → ``[N, 128]``: 3 × (conv 3×3 stride 2 + ReLU) (16, 32, 32 channels)."""
        return conv_cortex(1 + extra_channels, 3, channels=(16, 32, 32), features=128)
