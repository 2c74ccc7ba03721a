"""``conv``: random convolution (Lee et al., 2020, "Network randomization"), one random 3×3 filter per window.

Per chosen window a 3×3 convolution from RGB to RGB is drawn with Xavier-normal weights (the paper's
initialisation: standard deviation ``sqrt(2 / (fan_in + fan_out)) = sqrt(2 / 54)``) and applied to
every frame of the window (zero padding, as the paper's, keeps the size). Its output is rescaled into
``[0, 1]`` by the window's own minimum and maximum, one affine map for all its steps, so frames that
were equal stay equal. The other windows (probability ``1 − p``) stay clean: the paper trains on a
mix of randomised and clean inputs. Only the colour sensor is changed (``kind = "photometric"``).

Hand-written: kornia has no random convolution.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from pydantic import Field

from golem import hookimpl
from golem.augment import PHOTOMETRIC, Augmentation
from golem.settings import ComponentSettings, GolemSettings, section
from golem_augment.draws import chosen

KERNEL = 3
#: Xavier-normal standard deviation of a 3 → 3 channel, 3×3 convolution.
XAVIER_STD = math.sqrt(2.0 / (2 * 3 * KERNEL * KERNEL))


class ConvSettings(ComponentSettings):
    """``augment.conv``: how often the random convolution is used."""

    key = "augment.conv"
    p: float = Field(
        0.5, ge=0.0, le=1.0, description="probability that a window goes through a random convolution (else clean)"
    )


class RandomConv(Augmentation):
    """A random 3×3 RGB → RGB convolution per window, rescaled into ``[0, 1]`` per window."""

    name = "conv"
    kind = PHOTOMETRIC
    settings_model = ConvSettings

    def __init__(self, settings: GolemSettings) -> None:
        super().__init__(settings)
        self.p = section(settings, ConvSettings).p

    def __call__(self, images: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """RGB ``[B, T, 3, H, W]`` in ``[0, 1]`` → the chosen windows randomised, in ``[0, 1]``."""
        B, T, C, H, W = images.shape
        weights = torch.randn(B, C, C, KERNEL, KERNEL, generator=generator) * XAVIER_STD
        on = chosen(generator, B, self.p)
        rows = on.nonzero().flatten()
        n, device = rows.numel(), images.device
        if n == 0:
            return images.clone()
        picked = images if n == B else images[rows.to(device)]
        # each frame its window's filter, as one grouped convolution (one group of C channels per frame:
        # 1.7x faster on a CPU than one group per window with the steps as a batch); zero padding keeps the size
        kernel = weights[rows].to(device, images.dtype)[:, None].expand(n, T, C, C, KERNEL, KERNEL)
        out = F.conv2d(
            picked.reshape(1, n * T * C, H, W),
            kernel.reshape(n * T * C, C, KERNEL, KERNEL),
            padding=KERNEL // 2,
            groups=n * T,
        ).view(n, T, C, H, W)
        low = out.amin(dim=(1, 2, 3, 4), keepdim=True)
        high = out.amax(dim=(1, 2, 3, 4), keepdim=True)
        out.sub_(low).div_((high - low).clamp_min(1e-6)).clamp_(0.0, 1.0)
        if n == B:
            return out
        result = images.clone()
        result[rows.to(device)] = out
        return result


@hookimpl
def register_augmentations(register) -> None:
    register(RandomConv.name, RandomConv)


__all__ = ["ConvSettings", "RandomConv", "register_augmentations"]
