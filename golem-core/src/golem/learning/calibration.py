"""Running statistics of batch normalisation, re-estimated at fixed weights.

A BatchNorm layer normalises with the statistics of its batch in training and
with running averages in evaluation (validation, audit, play one frame at a
time). Its exponential running averages trail the weights: while the cortex is
still changing they describe features of some batches ago, and evaluation then
sees a shifted input (on ``take_cover``, validation BCE 0.333 with the trailing
averages, 0.273 with averages re-estimated at the same weights). So training
re-estimates them, with the weights held fixed, before every validation and
before a checkpoint is written: evaluation mode then computes exactly the
normalisation the training batches saw, on average, at those weights.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import structlog
import torch
from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm

from golem.data.dataset import SequenceDataset

log = structlog.get_logger("golem.learning.calibration")


def batch_norms(model: nn.Module) -> list[_BatchNorm]:
    """The model's BatchNorm layers (any dimensionality) that keep running statistics."""
    return [m for m in model.modules() if isinstance(m, _BatchNorm) and m.track_running_stats]


def calibration_windows(dataset: SequenceDataset, batch_size: int, batches: int, seed: int) -> list[np.ndarray]:
    """``batches`` lists of ``batch_size`` window indices drawn without replacement (as far as they go), seeded."""
    rng = np.random.default_rng([seed, 0xCA1])
    n = len(dataset)
    order = rng.permutation(n) if n >= batch_size * batches else rng.integers(0, n, batch_size * batches)
    return [order[i * batch_size : (i + 1) * batch_size] for i in range(batches) if i * batch_size < len(order)]


@torch.no_grad()
def recalibrate_norms(
    model: nn.Module,
    dataset: SequenceDataset,
    windows: Iterable[np.ndarray],
    device: torch.device,
) -> int:
    """Replace every BatchNorm's running mean/variance by plain averages over ``windows`` at the current weights.

    Each window batch (``inputs[name] = [B, L, *shape]``) runs forward in training
    mode from a zero state, without gradients; the weights do not change. With
    the standardiser before the core (:class:`golem_models.net.DoomNet`) the
    statistics do not depend on the state, so they are exact. The model's
    mode and each layer's momentum are restored.

    Returns:
        the number of BatchNorm layers re-estimated (0: nothing to do, nothing ran).
    """
    norms = batch_norms(model)
    if not norms:
        return 0
    was_training = model.training
    momenta = [m.momentum for m in norms]
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # cumulative average over the batches below
    model.train()
    seen = 0
    try:
        for indices in windows:
            batch = dataset.load_batch(indices, device)
            model(batch.inputs)
            seen += int(indices.shape[0])
    finally:
        for m, momentum in zip(norms, momenta):
            m.momentum = momentum
        model.train(was_training)
    log.debug("calibration.done", layers=len(norms), windows=seen)
    return len(norms)


__all__ = ["batch_norms", "calibration_windows", "recalibrate_norms"]
