"""``cutout``: one random rectangle per window blanked out (DeVries & Taylor, 2017), at every step.

Per window a rectangle's height and width are drawn as shares of the image's side from
``[min_size, max_size]`` and its place uniformly inside the image; at every step of the window it is
filled with each channel's mean over that frame (``fill = "mean"``) or with one random colour drawn
per window (``"random"``, values in ``[0, 1]``). It is a geometry augmentation: every image sensor of
the window (visual, depth, thermal) loses the same rectangle.

Hand-written: kornia's ``RandomErasing`` fills with one constant only, neither a frame's mean nor a
colour per channel.
"""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import Field, model_validator

from golem import hookimpl
from golem.augment import GEOMETRY, Augmentation
from golem.settings import ComponentSettings, GolemSettings, section
from golem_augment.draws import chosen, per_window, uniform


class CutoutSettings(ComponentSettings):
    """``augment.cutout``: the rectangle's size and fill."""

    key = "augment.cutout"
    min_size: float = Field(0.1, gt=0.0, le=1.0, description="smallest height or width, share of the image's side")
    max_size: float = Field(0.4, gt=0.0, le=1.0, description="largest height or width, share of the image's side")
    fill: Literal["mean", "random"] = Field(
        "mean", description="mean: each channel's mean over the frame; random: one random colour per window"
    )
    p: float = Field(0.5, ge=0.0, le=1.0, description="probability that a window loses a rectangle")

    @model_validator(mode="after")
    def _sizes_in_order(self) -> CutoutSettings:
        if self.min_size > self.max_size:
            raise ValueError(f"min_size {self.min_size} is larger than max_size {self.max_size}")
        return self


class Cutout(Augmentation):
    """One rectangle per window, at the same place at every step, filled with the frame's mean or a colour."""

    name = "cutout"
    kind = GEOMETRY
    settings_model = CutoutSettings

    def __init__(self, settings: GolemSettings) -> None:
        super().__init__(settings)
        self.cfg = section(settings, CutoutSettings)

    def __call__(self, images: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """``[B, T, C, H, W]`` → the same with one rectangle per chosen window filled."""
        B, T, C, H, W = images.shape
        cfg = self.cfg
        heights = (uniform(generator, B, cfg.min_size, cfg.max_size) * H).round().clamp(1, H).long()
        widths = (uniform(generator, B, cfg.min_size, cfg.max_size) * W).round().clamp(1, W).long()
        tops = (torch.rand(B, generator=generator) * (H - heights + 1)).long()
        lefts = (torch.rand(B, generator=generator) * (W - widths + 1)).long()
        colours = torch.rand(B, 1, C, 1, 1, generator=generator)
        on = chosen(generator, B, cfg.p)
        device = images.device
        rows, cols = torch.arange(H, device=device), torch.arange(W, device=device)
        tops, lefts, heights, widths = (v.to(device).view(B, 1) for v in (tops, lefts, heights, widths))
        inside_rows = (rows >= tops) & (rows < tops + heights)  # [B, H]
        inside_cols = (cols >= lefts) & (cols < lefts + widths)  # [B, W]
        hole = (inside_rows[:, :, None] & inside_cols[:, None, :]).view(B, 1, 1, H, W) & per_window(on, images)
        if cfg.fill == "mean":
            fill = images.mean(dim=(-2, -1), keepdim=True)  # [B, T, C, 1, 1]
        else:
            fill = colours.to(device, images.dtype)
        return torch.where(hole, fill, images)


@hookimpl
def register_augmentations(register) -> None:
    register(Cutout.name, Cutout)


__all__ = ["Cutout", "CutoutSettings", "register_augmentations"]
