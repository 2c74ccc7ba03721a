"""A GIF: the controller playing inside its own dream (decoded through V) beside a real rollout."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from golem_worldmodel.vae import ConvVAE


@torch.no_grad()
def decode_latents(vae: ConvVAE, z: np.ndarray, batch: int = 256) -> np.ndarray:
    """``z [T, Z]`` → uint8 frames ``[T, 64, 64, 3]``."""
    out = []
    for s in range(0, len(z), batch):
        x = vae.decode(torch.from_numpy(np.ascontiguousarray(z[s : s + batch], np.float32)))
        out.append((x.clamp(0, 1) * 255 + 0.5).byte().permute(0, 2, 3, 1).numpy())
    return np.concatenate(out) if out else np.zeros((0, 64, 64, 3), np.uint8)


def side_by_side(dream: np.ndarray, real: np.ndarray, scale: int = 2) -> list[np.ndarray]:
    """Frames ``[T, 64, 64, 3]`` of the dream (left) and the real game (right), the shorter one held on its last
    frame."""
    T = max(len(dream), len(real))
    blank = np.zeros((64, 64, 3), np.uint8)
    frames = []
    for t in range(T):
        d = dream[min(t, len(dream) - 1)] if len(dream) else blank
        r = real[min(t, len(real) - 1)] if len(real) else blank
        pair = np.concatenate([d, np.full((64, 4, 3), 255, np.uint8), r], axis=1)
        frames.append(pair.repeat(scale, 0).repeat(scale, 1))
    return frames


def write_gif(path: Path, frames: list[np.ndarray], fps: int = 35, every: int = 2) -> Path:
    """Write every ``every``-th frame as a looping GIF (atomically)."""
    import imageio.v2 as imageio

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    imageio.mimsave(tmp, frames[::every], format="GIF", duration=every / fps, loop=0)
    tmp.replace(path)
    return path
