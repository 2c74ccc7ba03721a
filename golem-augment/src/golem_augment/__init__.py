"""Golem's image augmentations for training: ``shift``, ``colour``, ``cutout``, ``conv``.

Each module is a plugin (an entry point in the ``golem`` group) that registers one
:class:`golem.augment.Augmentation` through ``register_augmentations``, with its own
settings section ``augment.<name>``. Every augmentation draws once per window (row ``b``
of a ``[B, T, C, H, W]`` batch) and uses that draw at all of the window's steps.

* ``shift`` (geometry): DrQ's random shift, replicate-pad and crop back;
* ``cutout`` (geometry): one rectangle per window filled with the frame's mean or a colour;
* ``colour`` (photometric): brightness, contrast, saturation and hue jitter;
* ``conv`` (photometric): a random 3×3 convolution (network randomisation).
"""

from __future__ import annotations

from golem_augment.colour import Colour
from golem_augment.conv import RandomConv
from golem_augment.cutout import Cutout
from golem_augment.shift import Shift

__all__ = ["Colour", "Cutout", "RandomConv", "Shift"]
