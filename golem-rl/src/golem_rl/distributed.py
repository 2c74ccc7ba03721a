"""Decentralised PPO (DD-PPO, Wijmans et al., 2020) on ``torch.distributed``: every rank runs its own engines.

Each rank collects its own segments, computes its own loss, and the ranks sum their
gradients (one all-reduce of one flat buffer per minibatch, divided by the ranks), so every
rank takes the same optimiser step and the weights stay identical everywhere. The loss and
the update's KL to the cloned policy travel in the same buffer, so a value that is not
finite on any rank stops every rank at the same step. Ranks are started as training's are
(:mod:`golem.learning.distributed`: ``--nproc N`` or torchrun); a rank that dies makes the
others fail at their next exchange, within ``rl.timeout`` at most.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import torch
import torch.distributed as dist
from torch import nn

from golem.errors import GolemError
from golem.learning.distributed import Ranks


def peer_failure(exc: BaseException, ranks: Ranks) -> GolemError:
    """The one line for an exchange that failed because another rank stopped or timed out."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if text.startswith("[") and "] " in text:  # gloo prefixes its source file
        text = text.split("] ", 1)[1]
    return GolemError(
        f"rank {ranks.rank} of {ranks.world}: another fine-tuning process stopped or stopped answering "
        f"({text[:160]}); the checkpoints written so far are kept"
    )


def exchange(params: Sequence[nn.Parameter], extras: torch.Tensor, ranks: Ranks) -> torch.Tensor:
    """Average the gradients of ``params`` over the ranks in place; return ``extras`` (``[k]``) averaged too.

    Parameters without a gradient (the policy during value warm-up) take no part; every rank
    leaves out the same ones. With one rank nothing is exchanged.

    Raises:
        GolemError: another rank stopped (:func:`peer_failure`).
    """
    if ranks.world == 1:
        return extras
    grads = [p.grad for p in params if p.grad is not None]
    flat = torch.cat([g.reshape(-1) for g in grads] + [extras.reshape(-1).to(torch.float32)])
    try:
        dist.all_reduce(flat)
    except RuntimeError as exc:
        raise peer_failure(exc, ranks) from None
    flat /= ranks.world
    at = 0
    for g in grads:
        g.copy_(flat[at : at + g.numel()].view_as(g))
        at += g.numel()
    return flat[at:].view_as(extras)


def summed(values: torch.Tensor, ranks: Ranks) -> torch.Tensor:
    """``values`` summed over the ranks (float64 kept); itself with one rank."""
    if ranks.world == 1:
        return values
    out = values.clone()
    try:
        dist.all_reduce(out)
    except RuntimeError as exc:
        raise peer_failure(exc, ranks) from None
    return out


def broadcast(modules: Sequence[nn.Module], ranks: Ranks) -> None:
    """Every rank starts from rank 0's parameters and buffers."""
    if ranks.world == 1:
        return
    try:
        for module in modules:
            for tensor in module.state_dict().values():
                dist.broadcast(tensor, src=0)
    except RuntimeError as exc:
        raise peer_failure(exc, ranks) from None


def digest(modules: Sequence[nn.Module]) -> str:
    """SHA-256 (hex, first 16 digits) of the modules' tensors: equal weights, equal digests."""
    h = hashlib.sha256()
    for module in modules:
        for name, tensor in sorted(module.state_dict().items()):
            h.update(name.encode())
            h.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def gathered(text: str, ranks: Ranks) -> list[str]:
    """``text`` of every rank, by rank."""
    if ranks.world == 1:
        return [text]
    out: list[str] = [""] * ranks.world
    try:
        dist.all_gather_object(out, text)
    except RuntimeError as exc:
        raise peer_failure(exc, ranks) from None
    return out


__all__ = ["broadcast", "digest", "exchange", "gathered", "peer_failure", "summed"]
