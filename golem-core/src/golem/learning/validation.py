"""Validation metrics, computed as the agent lives: contiguous streams with carried state.

:func:`stream_batches` walks every window of a dataset exactly once as ``B``
parallel streams (row ``b`` continues its episode window by window, then takes
the next episode); :func:`validate` runs a model over them with ``hx`` carried
and zeroed where an episode starts, and scores every step: loss, exact match
(every button right) and per-button precision / recall / F1 at the activation
threshold.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from golem.data.dataset import SequenceDataset


@dataclass
class ActionScore:
    """Validation scores of one action at the activation threshold (``None`` where undefined: 0/0)."""

    precision: float | None
    recall: float | None
    f1: float | None
    support: int  # steps where the action is pressed in the validation data
    predicted: int  # steps where the model presses it


@dataclass
class Validation:
    """Validation metrics over every validation window once, run as streams with carried state.

    Attributes:
        loss: mean loss per element (as the training loss).
        exact_match: share of steps whose every action is right.
        actions: per action name, :class:`ActionScore`.
        steps: validation steps scored.
        probabilities: float32 ``[steps, A]`` of every scored step (kept for threshold calibration; not serialised).
        targets: uint8 ``[steps, A]``, the recorded buttons of those steps.
        constant_loss: the same loss for a predictor that knows only how often each button is
            pressed in these episodes and says so at every step (the rates-only baseline: a model
            that learned nothing from its sensors scores about this); ``nan`` without steps.
    """

    loss: float
    exact_match: float
    actions: dict[str, ActionScore]
    steps: int
    constant_loss: float = float("nan")
    probabilities: np.ndarray | None = field(default=None, repr=False, compare=False)
    targets: np.ndarray | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "loss": self.loss,
            "exact_match": self.exact_match,
            "steps": self.steps,
            "constant_loss": self.constant_loss,
            "actions": {name: asdict(score) for name, score in self.actions.items()},
        }


def run_model(
    model: nn.Module,
    inputs: Mapping[str, torch.Tensor],
    hx: torch.Tensor | None,
    timespans: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``model(inputs, hx)``, with ``timespans=`` ``[B, L]`` (tics per step) only when some step is not one tic.

    A model that integrates time (``DoomNet`` with a CfC core) takes them; one
    that does not is never handed them while the data advances one tic a step.
    """
    if timespans is None:
        return model(inputs, hx)
    return model(inputs, hx, timespans=timespans)


def to_device(inputs: Mapping[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    """Move every input tensor to ``device`` (non-blocking where the copy allows it)."""
    return {name: x.to(device, non_blocking=True) for name, x in inputs.items()}


def stream_batches(dataset: SequenceDataset, batch_size: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Every window of ``dataset`` exactly once, as ``B`` contiguous streams.

    Row ``b`` walks whole episodes (mirrored twins are their own streams) in
    window order and takes the next one when its stream ends; once nothing is
    left, rows that ran out are padded (inactive) until every row is done.

    Yields:
        ``(indices[B], active[B])``: window indices into ``dataset.pointers``
        and which rows are real (padding repeats a valid index).
    """
    p = dataset.pointers
    if len(p) == 0:
        return
    order = np.lexsort((p["start"], p["mirrored"], p["episode"]))
    key = p["episode"][order] * 2 + p["mirrored"][order]
    cuts = np.flatnonzero(key[1:] != key[:-1]) + 1
    pool = [s.tolist() for s in np.split(order, cuts)][::-1]
    B = max(1, min(batch_size, len(pool)))
    streams: list[list[int]] = [[] for _ in range(B)]
    pos = [0] * B
    pad = int(order[0])
    while True:
        indices = np.full(B, pad, dtype=np.int64)
        active = np.zeros(B, dtype=bool)
        for b in range(B):
            if pos[b] >= len(streams[b]) and pool:
                streams[b], pos[b] = pool.pop(), 0
            if pos[b] < len(streams[b]):
                indices[b], active[b] = streams[b][pos[b]], True
                pos[b] += 1
        if not active.any():
            return
        yield indices, active


@torch.no_grad()
def validate(
    model: nn.Module,
    loss_fn: nn.Module,
    dataset: SequenceDataset,
    device: torch.device,
    batch_size: int,
    activation: float = 0.5,
) -> Validation:
    """Loss, exact-match accuracy and per-action precision/recall/F1 over ``dataset``.

    Windows run as contiguous streams (:func:`stream_batches`) with ``hx``
    carried and zeroed where an episode starts, as the agent lives. An action
    is pressed when ``sigmoid(logit) > activation``.
    """
    was_training = model.training
    model.eval()
    A = len(dataset.action_names)
    tally = Tally(A)
    loss_sum, loss_n = 0.0, 0
    kept_p: list[np.ndarray] = []
    kept_y: list[np.ndarray] = []
    hx: torch.Tensor | None = None
    for indices, active in stream_batches(dataset, batch_size):
        batch = dataset.load_batch(indices)
        if hx is None:
            hx = model.initial_state(len(indices), device)
        hx = model.reset_rows(hx, batch.is_first.to(device))
        spans = None if batch.timespans is None else batch.timespans.to(device)
        logits, hx = run_model(model, to_device(batch.inputs, device), hx, spans)
        keep = batch.mask.to(device) & torch.from_numpy(active).to(device)[:, None]  # [B, L] real steps
        z, y = logits[keep].unsqueeze(0), batch.targets.to(device)[keep].unsqueeze(0)  # [1, N, A]
        n = z.numel()
        if n == 0:
            continue
        loss_sum += float(loss_fn(z, y)) * n
        loss_n += n
        probs, labels = torch.sigmoid(z).reshape(-1, A).float().cpu().numpy(), y.reshape(-1, A).cpu().numpy()
        tally.add(probs, labels, activation)
        kept_p.append(probs)
        kept_y.append(labels.astype(np.uint8))
    model.train(was_training)
    targets = np.concatenate(kept_y) if kept_y else np.zeros((0, A), np.uint8)
    return Validation(
        loss=loss_sum / loss_n if loss_n else float("nan"),
        exact_match=tally.exact_match,
        actions=tally.scores(dataset.action_names),
        steps=tally.steps,
        probabilities=np.concatenate(kept_p) if kept_p else np.zeros((0, A), np.float32),
        targets=targets,
        constant_loss=constant_loss(loss_fn, targets, device),
    )


def constant_loss(loss_fn: nn.Module, targets: np.ndarray, device: torch.device | str = "cpu") -> float:
    """``loss_fn`` of the rates-only predictor on ``targets`` (uint8 ``[N, A]``): every step, each button's
    press rate over these steps (clipped to 1e-4…1 − 1e-4); ``nan`` for no steps."""
    if targets.shape[0] == 0:
        return float("nan")
    y = torch.from_numpy(targets.astype(np.float32)).to(device).unsqueeze(0)  # [1, N, A]
    rates = y.mean(dim=1, keepdim=True).clamp(1e-4, 1 - 1e-4)
    with torch.no_grad():
        return float(loss_fn(torch.logit(rates).expand_as(y).contiguous(), y))


#: Candidate press thresholds for calibration: 0.05, 0.10, …, 0.95.
THRESHOLD_GRID = np.round(np.arange(0.05, 0.951, 0.05), 2)


def calibrate_thresholds(
    probabilities: np.ndarray, targets: np.ndarray, default: float = 0.5, grid: np.ndarray = THRESHOLD_GRID
) -> np.ndarray:
    """Per action, the press threshold of ``grid`` with the best F1 on these steps.

    Args:
        probabilities: float ``[N, A]``, ``sigmoid(logits)`` of validation steps.
        targets: 0/1 ``[N, A]``, the recorded buttons.
        default: kept for an action never pressed in ``targets`` (its F1 is undefined).

    Returns:
        float ``[A]`` thresholds in ``(0, 1)``; ties go to the threshold nearest ``default``.

    A rare action (ATTACK on ``defend_the_center``, pressed in a few per cent of
    tics) whose probability seldom crosses 0.5 is pressed below it when that
    recovers more of the expert's presses than it adds false ones.
    """
    p = np.asarray(probabilities, dtype=np.float32)
    y = np.asarray(targets).astype(bool)
    out = np.full(p.shape[1], float(default), dtype=np.float64)
    order = np.argsort(np.abs(grid - default), kind="stable")  # nearest the default first: wins ties
    for a in range(p.shape[1]):
        if not y[:, a].any():
            continue
        pred = p[:, a][None, :] > grid[order][:, None]  # [G, N]
        tp = (pred & y[:, a]).sum(axis=1)
        f1 = 2 * tp / (pred.sum(axis=1) + y[:, a].sum())
        out[a] = float(grid[order][int(np.argmax(f1))])
    return out


def score_action(tp: int, fp: int, fn: int) -> ActionScore:
    """Precision, recall and F1 of one action from its confusion counts (``None`` where 0/0)."""
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else None
    return ActionScore(precision=precision, recall=recall, f1=f1, support=tp + fn, predicted=tp + fp)


@dataclass
class Tally:
    """Counts behind the scores: per action true/false positives and false negatives, exact steps."""

    n_actions: int
    tp: np.ndarray = field(init=False)
    fp: np.ndarray = field(init=False)
    fn: np.ndarray = field(init=False)
    exact: int = 0
    steps: int = 0

    def __post_init__(self) -> None:
        self.tp = np.zeros(self.n_actions, dtype=np.int64)
        self.fp = np.zeros(self.n_actions, dtype=np.int64)
        self.fn = np.zeros(self.n_actions, dtype=np.int64)

    def add(self, probabilities: np.ndarray, targets: np.ndarray, threshold: float | np.ndarray) -> None:
        """Count ``probabilities[T, A]`` pressed above ``threshold`` (scalar or per action ``[A]``) against
        ``targets[T, A]``."""
        pred = probabilities > threshold
        true = targets.astype(bool)
        self.tp += (pred & true).sum(axis=0)
        self.fp += (pred & ~true).sum(axis=0)
        self.fn += (~pred & true).sum(axis=0)
        self.exact += int((pred == true).all(axis=-1).sum())
        self.steps += int(pred.shape[0])

    def scores(self, action_names: Sequence[str]) -> dict[str, ActionScore]:
        """Per action name, precision/recall/F1 (``None`` where 0/0), support and predicted counts."""
        return {
            name: score_action(int(self.tp[i]), int(self.fp[i]), int(self.fn[i])) for i, name in enumerate(action_names)
        }

    @property
    def exact_match(self) -> float:
        """Share of steps whose every action is right (NaN with no step)."""
        return self.exact / self.steps if self.steps else float("nan")


__all__ = [
    "THRESHOLD_GRID",
    "ActionScore",
    "Validation",
    "calibrate_thresholds",
    "score_action",
    "stream_batches",
    "run_model",
    "to_device",
    "validate",
]
