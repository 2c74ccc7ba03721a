"""Image helpers for image-like sensors (visual, depth, thermal): resizing and legacy-array conversion.

Sensor plugins import these; the built-in visual sensor uses the same ones.

The resizers run every tic of a recording, so each input shape and output
size gets a cached *plan* (source rows, source columns in the output's channel
order, weights). Rows are blended first over whole flat rows of ``W * C``
values, then one gather picks each output value's two columns straight into
the output's channel order, with every float32 pass in place: the same arithmetic,
in the same order, as the plain separable resize, so the stored bytes do not
depend on the fast path. The values equal
``torch.nn.functional.interpolate(mode="bilinear", align_corners=False,
antialias=False)`` up to float32 rounding.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np
import structlog

from golem.errors import GolemError
from golem.sensors import Sensor

log = structlog.get_logger(__name__)

SIZE = 64


@lru_cache(maxsize=32)
def _bilinear_axis(src: int, dst: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Source indices ``i0, i1`` and weights ``w`` (of ``i1``) for resizing one axis, half-pixel centres."""
    pos = (np.arange(dst, dtype=np.float64) + 0.5) * (src / dst) - 0.5
    pos = np.clip(pos, 0, src - 1)
    i0 = np.floor(pos).astype(np.intp)
    i1 = np.minimum(i0 + 1, src - 1)
    return i0, i1, (pos - i0).astype(np.float32)


@lru_cache(maxsize=32)
def _nearest_axis(src: int, dst: int) -> np.ndarray:
    """Source index of each of ``dst`` outputs, half-pixel centres (torch's ``nearest-exact``)."""
    return np.minimum(((np.arange(dst) + 0.5) * (src / dst)).astype(np.intp), src - 1)


def _column_index(channels: int, x: np.ndarray, channels_first: bool) -> np.ndarray:
    """Positions of the columns ``x`` (every channel) in a row of ``W × channels`` interleaved values.

    Returns intp ``[channels * len(x)]`` ordered ``(c, j)`` with ``channels_first``, else ``(j, c)``.
    """
    c = np.arange(channels)
    index = c[:, None] + x[None, :] * channels if channels_first else x[:, None] * channels + c
    return index.astype(np.intp).reshape(-1)


@dataclass(frozen=True)
class _BilinearPlan:
    """Everything a bilinear resize of one input shape to one output layout needs but the pixels.

    Attributes:
        rows: intp ``[2h]``, the source rows ``y0`` of every output row, then the rows ``y1``.
        wy: float32 ``[h, 1]``, weight of row ``y1``.
        cols: intp ``[2m]`` (``m = w * C``), positions in a source row (``W * C`` interleaved
            values) of the ``x0`` value of every output value of a row, in output order
            (see :func:`_column_index`), then of the ``x1`` values.
        wx: float32 ``[m]``, weight of column ``x1``.
        shape: output shape: ``[h, w, *C]``, or ``[C, h, w]`` when channels first.
    """

    rows: np.ndarray
    wy: np.ndarray
    cols: np.ndarray
    wx: np.ndarray
    shape: tuple[int, ...]


@lru_cache(maxsize=32)
def _bilinear_plan(shape: tuple[int, ...], height: int, width: int, channels_first: bool) -> _BilinearPlan:
    """The cached plan for resizing ``[H, W, *C]`` to ``[height, width, *C]`` (``[C, height, width]`` if
    ``channels_first``)."""
    y0, y1, wy = _bilinear_axis(shape[0], height)
    x0, x1, wx = _bilinear_axis(shape[1], width)
    channels = int(np.prod(shape[2:], dtype=np.intp))
    wx_row = np.repeat(wx[None, :], channels, axis=0) if channels_first else np.repeat(wx, channels)
    plan = _BilinearPlan(
        rows=np.concatenate([y0, y1]),
        wy=wy.reshape(height, 1).copy(),
        cols=np.concatenate([_column_index(channels, x, channels_first) for x in (x0, x1)]),
        wx=np.ascontiguousarray(wx_row, dtype=np.float32).reshape(-1),
        shape=(*shape[2:], height, width) if channels_first else (height, width, *shape[2:]),
    )
    for array in (plan.rows, plan.wy, plan.cols, plan.wx):
        array.flags.writeable = False
    return plan


def _bilinear_rows(image: np.ndarray, plan: _BilinearPlan) -> np.ndarray:
    """The resized values as float32 ``[h, m]`` (any memory layout), each row in output order.

    Rows first, then columns, exactly as the separable reference does it:
    ``rows = a + (b - a)·wy`` over whole source rows, then
    ``out = r0 + (r1 - r0)·wx`` with ``r0, r1`` the ``x0, x1`` values of ``rows``.
    Source rows are flat ``W * C`` values, so the column gather moves single
    floats into output order, and every pass is in place on a contiguous block.
    """
    h, m = plan.wy.shape[0], plan.wx.shape[0]
    flat = np.ascontiguousarray(image).reshape(image.shape[0], -1)  # [H, W * C]
    pairs = flat[plan.rows].astype(np.float32)  # [2h, W * C]: rows y0, then rows y1
    rows, lower = pairs[:h], pairs[h:]
    np.subtract(lower, rows, out=lower)
    np.multiply(lower, plan.wy, out=lower)
    np.add(rows, lower, out=rows)
    columns = rows[:, plan.cols]  # [h, 2m]: values x0, then values x1
    r0, r1 = columns[:, :m], columns[:, m:]
    np.subtract(r1, r0, out=r1)
    np.multiply(r1, plan.wx, out=r1)
    return np.add(r0, r1, out=r0)


def bilinear_resize(image: np.ndarray, height: int = SIZE, width: int = SIZE) -> np.ndarray:
    """Bilinear resize of ``[H, W]`` or ``[H, W, C]`` (any real dtype) → float32 ``[height, width(, C)]``.

    Same sampling as ``torch.nn.functional.interpolate(mode="bilinear", align_corners=False, antialias=False)``.
    """
    plan = _bilinear_plan(image.shape, height, width, False)
    return np.ascontiguousarray(_bilinear_rows(image, plan).reshape(plan.shape))


def bilinear_resize_uint8(image: np.ndarray, height: int = SIZE, width: int = SIZE) -> np.ndarray:
    """Bilinear resize rounded to uint8: ``[H, W]`` → ``[height, width]``, ``[H, W, C]`` → channels first
    ``[C, height, width]``.

    Equals :func:`to_uint8` of :func:`bilinear_resize` (moved to channels first) without its copies.
    A blend of uint8 values stays within ``[0, 255]`` up to float32 rounding (far below
    the 0.5 that would change the truncated result), so uint8 input skips the clip.
    """
    if image.ndim not in (2, 3):
        raise ValueError(f"expected an [H, W] or [H, W, C] image, got shape {image.shape}")
    plan = _bilinear_plan(image.shape, height, width, True)
    values = _bilinear_rows(image, plan)  # [h, C * w]
    np.add(values, 0.5, out=values)
    if image.dtype != np.uint8:
        np.clip(values, 0, 255, out=values)
    small = values.astype(np.uint8)
    if image.ndim == 3:
        small = small.reshape(height, -1, width).transpose(1, 0, 2)  # [C, h, w]
    return np.ascontiguousarray(small)


def to_uint8(x: np.ndarray) -> np.ndarray:
    """Round and clip float values to uint8."""
    return np.clip(x + 0.5, 0, 255).astype(np.uint8)


@lru_cache(maxsize=32)
def _nearest_index(shape: tuple[int, ...], height: int, width: int) -> np.ndarray:
    """Flat intp indices ``[height * width * prod(C)]`` of a nearest-neighbour resize of ``[H, W, *C]``."""
    channels = int(np.prod(shape[2:], dtype=np.intp))
    pixel = _nearest_axis(shape[0], height)[:, None] * shape[1] + _nearest_axis(shape[1], width)[None, :]
    index = (pixel[:, :, None] * channels + np.arange(channels)).astype(np.intp).reshape(-1)
    index.flags.writeable = False
    return index


def nearest_resize(image: np.ndarray, height: int = SIZE, width: int = SIZE) -> np.ndarray:
    """Nearest-neighbour resize of ``[H, W, *C]`` → ``[height, width, *C]``, dtype kept."""
    index = _nearest_index(image.shape, height, width)
    return np.take(np.ascontiguousarray(image).reshape(-1), index).reshape(height, width, *image.shape[2:])


def legacy_uint8(source: str, key: str, arr: np.ndarray) -> np.ndarray:
    """uint8 as it is, float in ``[0, 1]`` scaled to ``0..255`` (rounded); anything else is an error.

    Raises:
        GolemError: floats outside ``[0, 1]`` or NaN, or a non-numeric dtype (one line naming ``source``).
    """
    if arr.dtype == np.uint8:
        return arr
    if arr.dtype.kind == "f":
        if arr.size and (np.nanmin(arr) < -1e-3 or np.nanmax(arr) > 1 + 1e-3 or np.isnan(arr).any()):
            raise GolemError(f"{source}: float {key!r} must lie in [0, 1]")
        return np.rint(np.clip(arr, 0.0, 1.0) * 255.0).astype(np.uint8)
    raise GolemError(f"{source}: {key!r} must be uint8 or float in [0, 1], got {arr.dtype}")


def legacy_image(source: str, key: str, arr: np.ndarray, channels: int) -> np.ndarray:
    """A seed-layout image array as stored uint8 ``[T, channels, H, W]``.

    Accepted: ``[T, channels, H, W]`` or ``[T, H, W, channels]`` (and ``[T, H, W]``
    when ``channels == 1``), uint8 or float in ``[0, 1]``.

    Raises:
        GolemError: another layout or dtype (one line naming ``source``).
    """
    shape = list(arr.shape)
    if channels == 1 and arr.ndim == 3:
        arr = arr[:, None]
    elif arr.ndim == 4 and arr.shape[1] == channels:
        pass
    elif arr.ndim == 4 and arr.shape[3] == channels:
        arr = arr.transpose(0, 3, 1, 2)
    else:
        layouts = "[T, H, W] or [T, 1, H, W]" if channels == 1 else f"[T, H, W, {channels}] or [T, {channels}, H, W]"
        raise GolemError(f"{source}: {key!r} must be {layouts}, got {shape}")
    return np.ascontiguousarray(legacy_uint8(source, key, arr))


class ImageSensor(Sensor):
    """Base of sensors that store uint8 images ``[image_channels, SIZE, SIZE]`` (visual, depth, thermal, automap).

    Subclasses set ``image_channels``; ``step_shape`` follows from it, and
    seed-layout ``.npz`` arrays are converted by :func:`legacy_image`. Image sensors
    are moved by geometry augmentations (``image``) unless they set ``image = False`` (a picture not
    aligned with the screen, such as the automap); only an RGB one sets ``colour``.
    """

    dtype = np.dtype(np.uint8)
    image = True
    image_channels: ClassVar[int] = 3

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "step_shape" not in cls.__dict__:
            cls.step_shape = (cls.image_channels, None, None)

    @property
    def shape(self) -> tuple[int, ...]:
        """``(image_channels, 64, 64)``."""
        return (self.image_channels, SIZE, SIZE)

    @classmethod
    def resize_image(cls, image: np.ndarray) -> np.ndarray:
        """One stored image uint8 ``[C, H, W]`` → ``[C, SIZE, SIZE]`` the way the sensor resizes its buffer
        (bilinear)."""
        return np.stack([bilinear_resize_uint8(channel) for channel in image])

    @classmethod
    def from_legacy(
        cls, source: str, array: np.ndarray, settings: Any = None, recorded: dict[str, Any] | None = None
    ) -> np.ndarray:
        """Seed-layout ``[T, C, H, W]`` or ``[T, H, W, C]`` (``[T, H, W]`` for one channel), uint8 or float
        in ``[0, 1]`` → uint8 ``[T, C, SIZE, SIZE]``.

        Images of another size are resized as the sensor resizes its engine buffer
        (:meth:`resize_image`), and a warning says so.
        """
        images = legacy_image(source, cls.key, array, channels=cls.image_channels)
        if images.shape[2:] == (SIZE, SIZE):
            return images
        log.warning(
            "legacy_images_resized", file=source, array=cls.key, found=list(images.shape[2:]), stored=[SIZE, SIZE]
        )
        return np.ascontiguousarray(np.stack([cls.resize_image(image) for image in images]))
