"""Fine-tuning curves as TensorBoard event files, one folder per run (beside training's under ``runs/``)."""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import Any

from golem.errors import GolemError

#: ``(tag, attribute of the update record)`` written after every update.
SCALARS = (
    ("rollout/return", "return_mean"),
    ("rollout/episode_length", "length_mean"),
    ("rollout/frags", "frags_mean"),
    ("loss/kl_to_bc", "kl_bc"),
    ("loss/kl_coef", "kl_coef"),
    ("loss/entropy", "entropy"),
    ("loss/value", "value_loss"),
    ("loss/surrogate", "surrogate"),
    ("loss/clip_fraction", "clip_fraction"),
    ("loss/approx_kl", "approx_kl"),
    ("speed/frames_per_s", "frames_per_s"),
    ("rollout/reward_scale", "reward_scale"),
)


class RunLog:
    """Writes one fine-tuning run's scalars against the environment frames seen; a context manager.

    Raises:
        GolemError: the ``tensorboard`` package is missing (``rl.tensorboard = false`` turns this off).
    """

    def __init__(self, folder: Path) -> None:
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError as exc:
            raise GolemError(
                f"TensorBoard logging needs the tensorboard package ({exc}); install it or --set rl.tensorboard=false"
            ) from None
        self.folder = Path(folder)
        self._writer = SummaryWriter(log_dir=str(self.folder))

    def update(self, record: Any) -> None:
        """One :class:`golem_rl.finetune.UpdateRecord`, at its ``frames``."""
        for tag, name in SCALARS:
            value = getattr(record, name)
            if value is not None:
                self._writer.add_scalar(tag, value, record.frames)
        self._writer.flush()

    def evaluation(self, evaluation: Any) -> None:
        """One :class:`golem_rl.selection.Evaluation`: the held-out mean score (return or frags), at its frames."""
        self._writer.add_scalar("evaluation/return", evaluation.mean, evaluation.frames)
        self._writer.add_scalar("evaluation/kept", float(evaluation.kept), evaluation.frames)
        self._writer.flush()

    def __enter__(self) -> RunLog:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._writer.close()


__all__ = ["RunLog", "SCALARS"]
