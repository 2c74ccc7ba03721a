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


#: CPU flags of native bfloat16 arithmetic (Intel AMX, AVX-512 BF16); without them bf16 is emulated and slower.
BF16_CPU_FLAGS = ("amx_bf16", "avx512_bf16")


def cpu_has_native_bf16(cpuinfo: str | None = None) -> bool:
    """Whether this CPU computes bfloat16 natively (``/proc/cpuinfo`` flags; ``False`` where unreadable)."""
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
                cpuinfo = fh.read()
        except OSError:
            return False
    flags = {word for line in cpuinfo.splitlines() if line.startswith("flags") for word in line.split()}
    return any(flag in flags for flag in BF16_CPU_FLAGS)


def autocast_dtype(precision: str, device: torch.device) -> torch.dtype | None:
    """The dtype the cortices compute in while training (``None``: float32 throughout).

    ``training.precision``: ``fp32``; ``bf16`` (bfloat16 autocast, which the device must support);
    ``auto``: bf16 where it is native — a CPU with AMX or AVX-512 BF16, a CUDA device with bf16 — else fp32.

    Raises:
        GolemError: ``bf16`` asked of a device without it (one line).
    """
    if precision == "fp32":
        return None
    if device.type == "cpu":
        native = cpu_has_native_bf16()
    elif device.type == "cuda":
        native = bool(torch.cuda.is_bf16_supported())
    else:
        native = False
    if precision == "bf16":
        if native or device.type == "cpu":  # a CPU without native bf16 emulates it: slower, but it runs
            return torch.bfloat16
        raise GolemError(f"training.precision=bf16 but {device.type} has no bfloat16; use auto or fp32")
    return torch.bfloat16 if native else None
