"""``assert_augmentation_contract``: the checks every augmentation plugin must pass, for plugin authors' tests."""

from __future__ import annotations

from typing import Any

import torch

from golem.augment import KINDS, PHOTOMETRIC, Augmentation
from golem.settings import GolemSettings


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _call(aug: Augmentation, images: torch.Tensor, seed: int) -> torch.Tensor:
    before = images.clone()
    out = aug(images, _generator(seed))
    assert torch.equal(images, before), f"{aug.name}: the input images were modified in place"
    assert isinstance(out, torch.Tensor), f"{aug.name}: returned {type(out).__name__}, not a tensor"
    assert out.shape == images.shape, f"{aug.name}: shape {tuple(images.shape)} became {tuple(out.shape)}"
    assert out.dtype == images.dtype, f"{aug.name}: dtype {images.dtype} became {out.dtype}"
    assert out.device == images.device, f"{aug.name}: device {images.device} became {out.device}"
    assert torch.isfinite(out).all(), f"{aug.name}: output is not finite"
    assert out.min() >= 0.0 and out.max() <= 1.0, (
        f"{aug.name}: images in [0, 1] became [{float(out.min()):.3g}, {float(out.max()):.3g}]"
    )
    return out


def _switch_value(settings: GolemSettings, path: str) -> Any:
    node: Any = settings
    for part in path.split("."):
        assert hasattr(node, part), f"switch {path!r} is not a setting"
        node = getattr(node, part)
    return node


def assert_augmentation_contract(
    cls: type[Augmentation],
    settings: GolemSettings | None = None,
    *,
    batch: int = 16,
    steps: int = 3,
    size: int = 16,
    seed: int = 0,
) -> Augmentation:
    """Check that ``cls`` honours the :class:`golem.augment.Augmentation` contract; return the instance.

    Checks, on random images in ``[0, 1]`` of ``[batch, steps, C, size, size]`` (``C = 3`` for a
    photometric augmentation, ``4`` for a geometry one: RGB and one aligned channel), whose
    frames are identical across the steps:

    * class attributes: ``name``, ``kind`` in ``geometry`` / ``photometric``; a ``switch`` names a
      boolean setting (such an augmentation is applied where batches load: nothing else is checked);
    * shape, dtype and device are kept, values stay in ``[0, 1]``, the input is not modified;
    * one draw per window: frames identical across a window's steps stay identical;
    * reproducible: the same generator seed gives the same output, whatever torch's global RNG;
    * per window: changing one row's images changes no other row's output;
    * independent draws: the same window in every row does not come out the same in every row;
    * geometry: a draw is shared by the channels, so where two channels are equal the same
      pixels change in both.

    Raises:
        AssertionError: naming the augmentation and the broken rule.
    """
    settings = settings or GolemSettings()
    assert isinstance(cls, type) and issubclass(cls, Augmentation), f"{cls!r} is not a golem.augment.Augmentation"
    assert isinstance(getattr(cls, "name", None), str) and cls.name, f"{cls.__name__} lacks a class attribute `name`"
    assert getattr(cls, "kind", None) in KINDS, f"{cls.name}: kind must be one of {KINDS}, got {cls.kind!r}"
    aug = cls(settings)
    if cls.switch is not None:
        assert isinstance(_switch_value(settings, cls.switch), bool), f"{cls.name}: switch {cls.switch!r} is not a flag"
        return aug

    channels = 3 if cls.kind == PHOTOMETRIC else 4
    gen = _generator(seed + 1)
    frame = torch.rand(batch, 1, channels, size, size, generator=gen)
    if cls.kind != PHOTOMETRIC:
        frame[:, :, 3] = frame[:, :, 0]  # an aligned channel repeating the first
    images = frame.expand(-1, steps, -1, -1, -1).contiguous()

    with torch.random.fork_rng(devices=[]):  # the global RNG must not matter (and is left as it was)
        torch.manual_seed(seed + 1000)
        out = _call(aug, images, seed)
        torch.manual_seed(seed + 2000)
        again = _call(aug, images, seed)
    assert torch.equal(again, out), f"{cls.name}: the same generator seed gave another output"
    for t in range(1, steps):
        assert torch.equal(out[:, t], out[:, 0]), (
            f"{cls.name}: identical frames of a window differ after augmentation (step {t} vs 0): "
            "draw once per window, not per step"
        )

    other = images.clone()
    other[0] = torch.rand(steps, channels, size, size, generator=gen)
    assert torch.equal(_call(aug, other, seed)[1:], out[1:]), (
        f"{cls.name}: changing window 0 changed other windows' output: augment each window on its own"
    )

    same = images[:1].expand(batch, -1, -1, -1, -1).contiguous()
    rows = _call(aug, same, seed)
    assert any(not torch.equal(rows[b], rows[0]) for b in range(1, batch)), (
        f"{cls.name}: {batch} copies of one window came out identical: draw independently per window"
    )
    if cls.kind != PHOTOMETRIC:
        changed = out != images
        assert torch.equal(changed[:, :, 3], changed[:, :, 0]), (
            f"{cls.name}: equal channels changed at different pixels: use one draw for every channel of a window"
        )
    return aug


__all__ = ["assert_augmentation_contract"]
