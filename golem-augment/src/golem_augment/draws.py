"""Per-window random draws shared by the augmentations: which windows are changed, uniform values.

Every draw is on the CPU from the batch's generator (:func:`golem.augment.batch_generator`), one value
per window, so a seeded run is repeatable on any device; the augmentations move the values to the
images' device.
"""

from __future__ import annotations

import torch


def chosen(generator: torch.Generator, windows: int, p: float) -> torch.Tensor:
    """bool ``[windows]``: each window changed with probability ``p``."""
    return torch.rand(windows, generator=generator) < p


def uniform(generator: torch.Generator, windows: int, low: float, high: float) -> torch.Tensor:
    """float32 ``[windows]`` drawn uniformly from ``[low, high)``."""
    return low + (high - low) * torch.rand(windows, generator=generator)


def per_window(flags: torch.Tensor, images: torch.Tensor) -> torch.Tensor:
    """``flags[B]`` shaped to broadcast over ``images[B, T, C, H, W]`` on their device."""
    return flags.to(images.device).view(-1, 1, 1, 1, 1)
