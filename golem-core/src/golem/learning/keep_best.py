"""Which weights a training run keeps: the epoch that validated best, and after Ctrl-C, which model is active.

``training.keep_best`` saves the epoch with the lowest finite validation loss
instead of the last (:class:`KeepBest` holds a copy of its weights). An
interrupted run saves its current weights as an archive; they replace the
profile's active model only when they validate at least as well as it on the
same episodes (:func:`previous_active_stays`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from golem.data.dataset import SequenceDataset
from golem.errors import GolemError
from golem.learning.archives import ACTIVE
from golem.learning.checkpoints import restore
from golem.learning.modelspec import ModelSpec
from golem.learning.validation import Validation, validate
from golem.registry import Registry
from golem.settings import GolemSettings

#: What must match between the active model and the interrupted weights to compare them on one validation set.
COMPARABLE_KEYS = ("model", "profile", "action_names", "sensors", "sensor_shapes")


@dataclass
class BestEpoch:
    """The epoch that validated lowest: its loss, number (0-based), weights (a detached copy) and validation."""

    loss: float
    epoch: int
    state: dict[str, torch.Tensor]
    validation: Validation


class KeepBest:
    """The best epoch of a run so far (``training.keep_best``); with ``enabled`` false it keeps none."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.best: BestEpoch | None = None

    def offer(self, epoch: int, validation: Validation | None, model: nn.Module) -> None:
        """Keep a copy of ``model``'s weights if ``validation`` (of ``epoch``) is finite and lower than the best."""
        if (
            self.enabled
            and validation is not None
            and math.isfinite(validation.loss)
            and (self.best is None or validation.loss < self.best.loss)
        ):
            state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            self.best = BestEpoch(validation.loss, epoch, state, validation)


def previous_active_stays(
    settings: GolemSettings,
    registry: Registry,
    spec: ModelSpec,
    loss_fn: nn.Module,
    val_ds: SequenceDataset,
    device: torch.device,
    batch_size: int,
    interrupted: Validation | None,
) -> tuple[bool, str]:
    """After Ctrl-C: whether the profile's active model stays active, and a sentence saying which is and why.

    The interrupted weights replace it only when they validate at least as well as it does on this
    run's validation episodes (the same windows, the same loss); weights that were not validated, or an
    active model of another architecture, sensors or buttons (not comparable), leave it active.
    Without an active model the interrupted weights become it.

    Args:
        loss_fn, val_ds, device, batch_size: the run's loss, validation windows, device and streams B.
        interrupted: the validation of the interrupted weights (``None``: not validated).
    """
    path = settings.models_path() / ACTIVE
    if not path.is_file():
        return False, "made the active model (there was none)"
    if interrupted is None or not math.isfinite(interrupted.loss):
        return True, f"the active model {path} stays: the interrupted weights were not validated"
    try:
        restored = restore(path, registry)
    except GolemError as exc:
        return False, f"made the active model (the previous one is unreadable: {exc})"
    a, b = restored.spec.to_metadata(), spec.to_metadata()
    differs = [k for k in COMPARABLE_KEYS if a.get(k) != b.get(k)]
    if differs:
        return True, (
            f"the active model {path} stays: it differs in {', '.join(differs)}, so the two cannot be "
            "compared on one validation set"
        )
    try:
        previous = validate(
            restored.model.to(device).eval(), loss_fn, val_ds, device, batch_size, settings.brain.activation
        )
    except KeyboardInterrupt:
        return True, f"the active model {path} stays: its validation was interrupted"
    if previous.loss < interrupted.loss:
        return True, (
            f"the active model {path} stays: it validates {previous.loss:.5f} on this run's validation "
            f"episodes, the interrupted weights {interrupted.loss:.5f}"
        )
    return False, (
        f"made the active model: they validate {interrupted.loss:.5f} on this run's validation episodes, "
        f"the previous active model {previous.loss:.5f}"
    )


__all__ = ["COMPARABLE_KEYS", "BestEpoch", "KeepBest", "previous_active_stays"]
