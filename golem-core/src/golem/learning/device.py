"""Which torch device a run uses: ``training.device`` (``auto``: CUDA, then Apple MPS, then CPU)."""

from __future__ import annotations

import torch

from golem.errors import GolemError


def select_device(name: str = "auto") -> torch.device:
    """``auto``: CUDA, then Apple MPS, then CPU; otherwise the named device, which must be available."""
    mps = getattr(torch.backends, "mps", None)
    mps_ok = bool(mps is not None and mps.is_available())
    if name == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        return torch.device("mps" if mps_ok else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise GolemError("training.device=cuda but no CUDA device is available; use --device auto or cpu")
    if name == "mps" and not mps_ok:
        raise GolemError("training.device=mps but Apple MPS is not available; use --device auto or cpu")
    return torch.device(name)
