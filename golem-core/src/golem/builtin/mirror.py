"""The left-right mirror as an augmentation component (built in): listed and selected like the others.

Its work is done where a batch is loaded: with ``training.mirror`` every window also
exists as a mirrored twin in the dataset's pointer map, whose images are flipped by
each sensor's ``mirror`` (width; audio: the stereo channels) and whose MOVE/TURN
buttons are swapped left↔right (:mod:`golem.data.dataset`). ``--plugin mirror`` and
``--plugin no:mirror`` set ``training.mirror``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from golem.augment import GEOMETRY, Augmentation

if TYPE_CHECKING:
    import torch


class MirrorAugmentation(Augmentation):
    """Mirrored twins of every training window (flip width, swap stereo channels and left/right buttons)."""

    name = "mirror"
    kind = GEOMETRY
    switch = "training.mirror"

    def __call__(self, images: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """``images`` unchanged: the mirror is applied when the batch is loaded, with its actions."""
        return images
