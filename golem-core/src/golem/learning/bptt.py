"""One optimiser step of stateful truncated BPTT, its loss over the recorded steps, and batches loaded ahead.

:func:`golem.learning.training.train` runs :func:`train_step` on every batch
:func:`prefetched` yields; benchmarks time the same two functions.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import islice

import torch
from torch import nn

from golem.data.dataset import Batch, SequenceDataset
from golem.learning.validation import run_model


def train_step(
    model: nn.Module,
    loss_fn: nn.Module,
    optimizer: torch.optim.Optimizer,
    inputs: Mapping[str, torch.Tensor],
    targets: torch.Tensor,
    is_first: torch.Tensor,
    hx: torch.Tensor,
    mask: torch.Tensor | None = None,
    timespans: torch.Tensor | None = None,
    scale: float = 1.0,
    autocast: torch.dtype | None = None,
) -> tuple[float, torch.Tensor]:
    """One step of stateful truncated BPTT on a batch already on the model's device.

    Args:
        inputs: sensor name → ``[B, L, *shape]`` float.
        targets: ``[B, L, A]`` 0./1.
        is_first: bool ``[B]``; rows whose window starts an episode.
        hx: ``[B, S]`` state carried from the previous batch (detached).
        mask: bool ``[B, L]``, the recorded steps (``None``: all); see :func:`masked_loss`.
        timespans: float ``[B, L]``, engine tics per step (``None``: one each); see :func:`run_model`.
        scale: factor on the loss before ``backward`` (data-parallel ranks:
            :func:`golem.learning.distributed.loss_scale`); the returned loss is unscaled.
        autocast: run the forward pass under ``torch.autocast`` in this dtype (``None``: float32);
            the loss is taken in float32 (:func:`golem.learning.device.autocast_dtype`).

    Returns:
        ``(loss, hx)``: the scalar loss and the new state ``[B, S]``, detached.

    Rows starting an episode are zeroed **before** the forward pass, so no
    state leaks from one episode into the next.
    """
    hx = getattr(model, "module", model).reset_rows(hx, is_first)  # DistributedDataParallel wraps the model
    with torch.autocast(hx.device.type, dtype=autocast or torch.bfloat16, enabled=autocast is not None):
        logits, hx = run_model(model, inputs, hx, timespans)
    loss = masked_loss(loss_fn, logits.float(), targets, mask)
    optimizer.zero_grad(set_to_none=True)
    (loss * scale if scale != 1.0 else loss).backward()
    optimizer.step()
    return float(loss.detach()), hx.detach()


def masked_loss(
    loss_fn: nn.Module, logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor | None
) -> torch.Tensor:
    """The loss over the recorded steps only.

    Without padding (``mask`` ``None`` or all True) this is ``loss_fn(logits, targets)``
    on ``[B, L, A]``. Otherwise the ``N`` recorded steps are gathered into one
    row, ``[1, N, A]``, so a mean-reduced loss averages exactly over them and
    the padding (which repeats an episode's last step) adds nothing.
    """
    if mask is None or bool(mask.all()):
        return loss_fn(logits, targets)
    return loss_fn(logits[mask].unsqueeze(0), targets[mask].unsqueeze(0))


def prefetched(dataset: SequenceDataset, batches: Iterable[Sequence[int]], depth: int = 2) -> Iterator[Batch]:
    """``dataset.load_batch`` of each index list of ``batches``, in order, loaded ``depth`` batches ahead.

    A single background thread reads the store (and converts to network
    tensors) while the caller computes on the previous batch; the order, and so
    the result of a seeded run, is the same as loading in line.
    """
    it = iter(batches)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="golem-batches") as pool:
        pending: deque[Future[Batch]] = deque(pool.submit(dataset.load_batch, i) for i in islice(it, depth))
        while pending:
            batch = pending.popleft().result()
            nxt = next(it, None)
            if nxt is not None:
                pending.append(pool.submit(dataset.load_batch, nxt))
            yield batch


__all__ = ["masked_loss", "prefetched", "train_step"]
