"""``colour``: brightness, contrast, saturation and hue jitter of the RGB image, one draw per window.

Per window four factors are drawn: brightness ``β ∈ [1 − b, 1 + b]``, contrast ``κ ∈ [1 − c, 1 + c]``,
saturation ``σ ∈ [1 − s, 1 + s]`` and a hue rotation ``θ ∈ [−h, h]`` turns. Saturation (a blend with
the grey image), hue (a rotation about the grey axis) and brightness are linear, so they make one
3×3 colour matrix ``M = β · R(θ) · (σ I + (1 − σ) G)`` per window (``G`` maps a pixel to its grey,
ITU-R 601 luma); contrast then blends each frame with its mean grey, as torchvision's does, and the
result is clipped to ``[0, 1]``::

    out = clip(κ · M x + (1 − κ) · mean_grey(M x), 0, 1)

A window not drawn (probability ``1 − p``) gets the identity and stays exactly as it was. Only the
colour sensor is changed (``kind = "photometric"``): never depth, thermal or audio.

Hand-written rather than kornia's ``VideoSequential(ColorJitter(b, c, s, h), data_format="BTCHW",
same_on_frame=True)``, whose hue goes through HSV frame by frame: ``bench/bench_augment.py`` (B = 32,
L = 16, one CPU thread) measured kornia 0.9.0 at 355 ms a batch, 2.43× the training step, and this
at 13 ms, 1.06×.
"""

from __future__ import annotations

import math

import torch
from pydantic import Field

from golem import hookimpl
from golem.augment import PHOTOMETRIC, Augmentation
from golem.settings import ComponentSettings, GolemSettings, section
from golem_augment.draws import chosen, uniform

#: ITU-R 601 luma weights of R, G, B: a pixel's grey.
LUMA = (0.299, 0.587, 0.114)


class ColourSettings(ComponentSettings):
    """``augment.colour``: the strength of each jitter (0: that one off)."""

    key = "augment.colour"
    brightness: float = Field(0.4, ge=0.0, lt=1.0, description="brightness factor drawn from [1 - b, 1 + b]")
    contrast: float = Field(0.4, ge=0.0, lt=1.0, description="contrast factor drawn from [1 - c, 1 + c]")
    saturation: float = Field(0.4, ge=0.0, lt=1.0, description="saturation factor drawn from [1 - s, 1 + s]")
    hue: float = Field(0.1, ge=0.0, le=0.5, description="hue rotation drawn from [-h, h] turns of the colour wheel")
    p: float = Field(0.8, ge=0.0, le=1.0, description="probability that a window is jittered")


def colour_matrices(brightness: torch.Tensor, saturation: torch.Tensor, hue: torch.Tensor) -> torch.Tensor:
    """float32 ``[B, 3, 3]``: ``β · R(θ) · (σ I + (1 − σ) G)`` for factors ``[B]`` (hue ``θ`` in turns).

    ``R(θ)`` is the rotation by ``2πθ`` about the grey axis ``(1, 1, 1)/√3`` (Rodrigues' formula);
    every factor at its neutral value (1, 1, 0) gives exactly the identity.
    """
    eye = torch.eye(3)
    grey = torch.tensor(LUMA).expand(3, 3)  # every row: the luma weights
    sat = saturation.view(-1, 1, 1) * eye + (1.0 - saturation).view(-1, 1, 1) * grey
    angle = 2.0 * math.pi * hue
    cos, sin = torch.cos(angle).view(-1, 1, 1), torch.sin(angle).view(-1, 1, 1)
    axis = torch.full((3,), 1.0 / math.sqrt(3.0))
    cross = torch.tensor([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    rotation = cos * eye + sin * cross + (1.0 - cos) * torch.outer(axis, axis)
    return brightness.view(-1, 1, 1) * rotation @ sat


class Colour(Augmentation):
    """Brightness, contrast, saturation and hue jitter, one draw per window."""

    name = "colour"
    kind = PHOTOMETRIC
    settings_model = ColourSettings

    def __init__(self, settings: GolemSettings) -> None:
        super().__init__(settings)
        self.cfg = section(settings, ColourSettings)

    def __call__(self, images: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """RGB ``[B, T, 3, H, W]`` in ``[0, 1]`` → jittered, in ``[0, 1]``."""
        B, T, C, H, W = images.shape
        cfg = self.cfg
        brightness = uniform(generator, B, 1.0 - cfg.brightness, 1.0 + cfg.brightness)
        contrast = uniform(generator, B, 1.0 - cfg.contrast, 1.0 + cfg.contrast)
        saturation = uniform(generator, B, 1.0 - cfg.saturation, 1.0 + cfg.saturation)
        hue = uniform(generator, B, -cfg.hue, cfg.hue)
        keep = ~chosen(generator, B, cfg.p)
        for factor in (brightness, contrast, saturation):
            factor[keep] = 1.0
        hue[keep] = 0.0
        device = images.device
        matrices = colour_matrices(brightness, saturation, hue).to(device, images.dtype)  # [B, 3, 3]
        contrast = contrast.to(device, images.dtype).view(B, 1, 1)
        # κ·M x, then + (1 − κ)·mean grey of M x per frame (the mean over pixels commutes with M)
        mixed = torch.matmul((contrast * matrices).unsqueeze(1), images.reshape(B, T, C, H * W))  # [B, T, 3, HW]
        grey_of = torch.tensor(LUMA, device=device, dtype=images.dtype) @ matrices  # [B, 3]
        mean_grey = images.mean(dim=(-2, -1)) @ grey_of.unsqueeze(-1)  # [B, T, 1]
        mixed += ((1.0 - contrast) * mean_grey).unsqueeze(-1)
        return mixed.clamp_(0.0, 1.0).view(B, T, C, H, W)


@hookimpl
def register_augmentations(register) -> None:
    register(Colour.name, Colour)


__all__ = ["Colour", "ColourSettings", "colour_matrices", "register_augmentations"]
