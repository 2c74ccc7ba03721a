"""Image helpers for image-like sensors (visual, depth, thermal): resizing and legacy-array conversion.

Sensor plugins import these; the built-in visual sensor uses the same ones.
"""

from __future__ import annotations

import numpy as np

from golem.errors import GolemError


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
