"""Training curves as TensorBoard event files (``torch.utils.tensorboard``), one folder per run.

``tensorboard --logdir golem-data/runs`` then shows every run of every profile:
training loss and throughput, validation loss, exact match and each action's
F1, per epoch, against the optimiser steps taken.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

import structlog

from golem.errors import GolemError

log = structlog.get_logger(__name__)


def run_folder(root: Path, profile: str, model: str) -> Path:
    """``root/runs/<profile>/<UTC stamp>-<model>`` (a suffix ``-1``, ``-2`` … if taken)."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    base = Path(root) / "runs" / profile / f"{stamp}-{model}"
    path, n = base, 1
    while path.exists():
        path, n = base.with_name(f"{base.name}-{n}"), n + 1
    return path


class EventLog:
    """Writes one run's scalars; a context manager (the file is flushed and closed on exit).

    Raises:
        GolemError: the ``tensorboard`` package is missing (``training.tensorboard = false`` turns this off).
    """

    def __init__(self, folder: Path) -> None:
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError as exc:
            raise GolemError(
                f"TensorBoard logging needs the tensorboard package ({exc}); install it or "
                "--set training.tensorboard=false"
            ) from None
        self.folder = Path(folder)
        self._writer = SummaryWriter(log_dir=str(self.folder))

    def epoch(self, record: Any, updates: int) -> None:
        """One :class:`golem.learning.training.EpochRecord`, at global step ``updates``."""
        w = self._writer
        w.add_scalar("train/loss", record.train_loss, updates)
        w.add_scalar("train/frames_per_s", record.frames_per_s, updates)
        w.add_scalar("train/epoch", record.epoch + 1, updates)
        val = record.validation
        if val is not None:
            w.add_scalar("validation/loss", val.loss, updates)
            w.add_scalar("validation/exact_match", val.exact_match, updates)
            for name, score in val.actions.items():
                if score.f1 is not None:
                    w.add_scalar(f"validation_f1/{name}", score.f1, updates)
        w.flush()

    def __enter__(self) -> EventLog:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._writer.close()


__all__ = ["EventLog", "run_folder"]
