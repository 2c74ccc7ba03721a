"""Checkpoints of the world model's parts: safetensors + JSON metadata, atomic (via :mod:`golem.learning.checkpoints`).

Every file carries ``golem.spec = {"model": kind, "config": {...}}`` (enough to
rebuild the network) and ``golem.progress`` (how far training got, so a
command can skip or continue). Optimiser moments are stored as tensors under
``optim.*`` so a resumed run continues Adam where it stopped; no pickle is used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from torch import nn

from golem.errors import GolemError
from golem.learning.checkpoints import load_checkpoint, read_metadata, save_checkpoint


def save_part(
    path: Path,
    kind: str,
    config: dict[str, Any],
    tensors: dict[str, torch.Tensor],
    progress: dict[str, Any],
    optimizer: torch.optim.Optimizer | None = None,
    extra: dict[str, Any] | None = None,
) -> Path:
    """Write ``tensors`` (+ optimiser state) with ``kind``/``config``/``progress`` metadata, atomically."""
    out = {f"model.{k}": v for k, v in tensors.items()}
    meta: dict[str, Any] = {"progress": progress, **(extra or {})}
    if optimizer is not None:
        opt_tensors, opt_meta = optimizer_to_tensors(optimizer)
        out.update(opt_tensors)
        meta["optim"] = opt_meta
    return save_checkpoint(path, out, {"model": kind, "config": config}, extra=meta)


def load_part(path: Path, kind: str) -> tuple[dict[str, torch.Tensor], dict[str, Any], dict[str, torch.Tensor]]:
    """``(model state, metadata, optimiser tensors)`` of a checkpoint written by :func:`save_part`.

    Raises:
        GolemError: missing/corrupt file or a checkpoint of another kind.
    """
    state, meta = load_checkpoint(path)
    found = meta.get("spec", {}).get("model")
    if found != kind:
        raise GolemError(f"{path} holds a {found!r} checkpoint, expected {kind!r}")
    model = {k[len("model.") :]: v for k, v in state.items() if k.startswith("model.")}
    optim = {k: v for k, v in state.items() if k.startswith("optim.")}
    return model, meta, optim


def progress_of(path: Path) -> dict[str, Any] | None:
    """The ``progress`` metadata of a checkpoint, or ``None`` when there is no file."""
    if not path.is_file():
        return None
    return dict(read_metadata(path).get("progress", {}))


def optimizer_to_tensors(optimizer: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Adam-style state as ``optim.<param>.<key>`` tensors plus JSON (param groups, scalar state)."""
    sd = optimizer.state_dict()
    tensors: dict[str, torch.Tensor] = {}
    scalars: dict[str, dict[str, float]] = {}
    for pid, st in sd["state"].items():
        for key, value in st.items():
            if torch.is_tensor(value) and value.ndim > 0:
                tensors[f"optim.{pid}.{key}"] = value.detach().cpu().contiguous()
            else:
                scalars.setdefault(str(pid), {})[key] = float(value)
    return tensors, {"param_groups": sd["param_groups"], "scalars": scalars}


def load_optimizer(
    optimizer: torch.optim.Optimizer, tensors: dict[str, torch.Tensor], meta: dict[str, Any] | None
) -> bool:
    """Restore what :func:`optimizer_to_tensors` saved; ``False`` (fresh optimiser) when nothing was saved."""
    if not meta or not tensors:
        return False
    state: dict[int, dict[str, Any]] = {}
    for name, value in tensors.items():
        _, pid, key = name.split(".", 2)
        state.setdefault(int(pid), {})[key] = value
    for pid, values in meta.get("scalars", {}).items():
        for key, value in values.items():
            state.setdefault(int(pid), {})[key] = torch.tensor(value)
    optimizer.load_state_dict({"state": state, "param_groups": meta["param_groups"]})
    return True


def load_module(module: nn.Module, state: dict[str, torch.Tensor], path: Path) -> nn.Module:
    """``module.load_state_dict(state)`` with a one-line error when the shapes disagree."""
    try:
        module.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        raise GolemError(
            f"checkpoint {path} does not fit the network built from its metadata: {' '.join(str(exc).split())[:200]}"
        ) from None
    return module
