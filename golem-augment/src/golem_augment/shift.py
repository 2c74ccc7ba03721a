"""``shift``: DrQ's random shift (Kostrikov et al., 2020), one offset per window.

Each image is padded by ``pad`` pixels on every side by repeating its border and cropped back to its
size at a random integer offset: the view moves by up to ±``pad`` pixels in each direction. A window's
steps share the offset, and every image sensor of the window (visual, depth, thermal) moves alike.

Hand-written rather than kornia's ``VideoSequential(RandomCrop(size, padding=pad,
padding_mode="replicate"), data_format="BTCHW", same_on_frame=True)``, which does the same but was
slower: ``bench/bench_augment.py`` (B = 32, L = 16, one CPU thread) measured kornia 0.9.0 at 25 ms a
batch, 1.16× the training step, and this at 15 ms, 1.06×.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from pydantic import Field

from golem import hookimpl
from golem.augment import GEOMETRY, Augmentation
from golem.settings import ComponentSettings, GolemSettings, section
from golem_augment.draws import chosen


class ShiftSettings(ComponentSettings):
    """``augment.shift``: how far the random shift moves the view."""

    key = "augment.shift"
    pad: int = Field(4, ge=1, le=32, description="pixels of border repeated on each side: shifts of up to ±pad")
    p: float = Field(1.0, ge=0.0, le=1.0, description="probability that a window is shifted")


class Shift(Augmentation):
    """Replicate-pad by ``pad`` and crop back at a random offset, per window."""

    name = "shift"
    kind = GEOMETRY
    settings_model = ShiftSettings

    def __init__(self, settings: GolemSettings) -> None:
        super().__init__(settings)
        cfg = section(settings, ShiftSettings)
        self.pad, self.p = cfg.pad, cfg.p

    def __call__(self, images: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """``[B, T, C, H, W]`` → the same, each window cropped at its own offset ``(dy, dx)`` in ``[0, 2·pad]``."""
        B, T, C, H, W = images.shape
        pad = self.pad
        offsets = torch.randint(0, 2 * pad + 1, (B, 2), generator=generator)
        offsets[~chosen(generator, B, self.p)] = pad  # centred: the window unchanged
        padded = F.pad(images.reshape(B, T * C, H, W), (pad, pad, pad, pad), mode="replicate")
        crops = [padded[b, :, y : y + H, x : x + W] for b, (y, x) in enumerate(offsets.tolist())]
        return torch.stack(crops).view(B, T, C, H, W)


@hookimpl
def register_augmentations(register) -> None:
    register(Shift.name, Shift)


__all__ = ["Shift", "ShiftSettings", "register_augmentations"]
