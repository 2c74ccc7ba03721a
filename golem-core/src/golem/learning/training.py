"""Behavioural cloning with stateful truncated BPTT, read top to bottom.

:func:`train` is the whole job, in named steps:

1. select episodes from the store (``--module`` = scenario or tag, recovery on request);
2. build the model spec from settings (sensor instances from the registry) and
   check the data's action names and sensors against it (one-line GolemError);
3. split validation by whole episodes (:mod:`golem.learning.training_data`);
4. build model (fresh, or the active one with ``--resume``: :mod:`golem.learning.resume`),
   loss, sampler and augmentations from the registry by name; Adam(lr) — all of it :func:`_prepare`,
   into one :class:`TrainingRun`;
5. per epoch (:func:`_run_epoch`): stateful training on batches changed by the selected
   augmentations (:mod:`golem.augment`; ``hx`` carried across batches,
   detached, rows starting an episode zeroed *before* the forward pass:
   :func:`golem.learning.bptt.train_step`), then the running statistics of batch
   normalisation re-estimated at the epoch's weights (:mod:`golem.learning.calibration`),
   then validation as contiguous streams with carried state;
6. :func:`_finish`: keep the epoch with the lowest validation loss (``training.keep_best``,
   :mod:`golem.learning.keep_best`), calibrate per-action press thresholds on validation
   (``training.calibrate_thresholds``) and save a self-describing checkpoint: a timestamped
   archive plus the active model.

``training.updates`` > 0 trains for that many optimiser steps instead of
``training.epochs`` (the last epoch may stop part way, then validates); else
training runs ``training.epochs`` epochs and more until ``training.min_updates``
optimiser steps, so a small store still gets enough of them. Epochs of fewer
than ``training.validate_every`` updates validate only every that many updates.

Ctrl-C during training saves the current weights the same way and returns a
result with ``interrupted=True`` (the CLI exits 130); they become the active
model only when they validate at least as well as it
(:func:`golem.learning.keep_best.previous_active_stays`).
"""

from __future__ import annotations

import math
import os
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import structlog
import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from golem.augment import Augmentation, augment_inputs, batch_generator, build_augmentations, selected_augmentations
from golem.data.dataset import SequenceDataset
from golem.data.store import TrajectoryStore
from golem.errors import GolemError
from golem.learning.archives import save_model
from golem.learning.bptt import masked_loss, prefetched, train_step
from golem.learning.calibration import calibration_windows, recalibrate_norms
from golem.learning.device import autocast_dtype, select_device
from golem.learning.distributed import Ranks, check_divisible, loss_scale, peer_failure, rank_device
from golem.learning.keep_best import BestEpoch, KeepBest, previous_active_stays
from golem.learning.modelspec import ModelSpec
from golem.learning.resume import resume_active
from golem.learning.tensorboard import EventLog, run_folder
from golem.learning.training_data import (
    data_frame_skip,  # noqa: F401  (imported from this module by its callers)
    generated_sensors,
    scenario_training,  # noqa: F401  (imported from this module by its callers)
    training_data,
)
from golem.learning.validation import Tally, Validation, calibrate_thresholds, to_device, validate
from golem.registry import Registry
from golem.selection import check_selected
from golem.settings import GolemSettings, TrainingSettings
from golem.threads import set_threads

log = structlog.get_logger("golem.learning.training")

#: Batches of training windows over which batch-norm statistics are re-estimated (B·L frames each).
CALIBRATION_BATCHES = 8


# --- plan and results --------------------------------------------------------


@dataclass
class TrainPlan:
    """What to train on, beyond the settings.

    Attributes:
        module: keep episodes whose scenario is this or whose tags contain it (``None``: all).
        include_recovery: also train on recovery episodes (``training.recovery_ratio`` of the streams).
        resume: fine-tune the active model of the profile instead of starting from scratch.
        store: the trajectory store directory (default ``settings.store_path()``).
        given: dotted settings keys the user set (``ResolvedSettings.sources``); a key not among them
            may take the trained scenario's default (:class:`golem.scenarios.ScenarioSpec`).
    """

    module: str | None = None
    include_recovery: bool = False
    resume: bool = False
    store: Path | None = None
    given: frozenset[str] = frozenset()


@dataclass(frozen=True)
class BatchProgress:
    """Where an epoch is, after one training batch.

    Attributes:
        epoch: the epoch (0-based, counting a resumed model's earlier epochs).
        epochs: the epoch this run stops before (``epoch < epochs``).
        batch: batches done in this epoch (1-based).
        batches: batches per epoch, when the sampler knows (else ``None``).
        mean_loss: mean training loss of the epoch's batches so far.
        frames_per_s: recorded training steps (``B · L`` per batch, less padding) per second in this epoch.
    """

    epoch: int
    epochs: int
    batch: int
    batches: int | None
    mean_loss: float
    frames_per_s: float


@dataclass
class EpochRecord:
    """One epoch: training loss (mean over batches), its throughput, and validation (if any)."""

    epoch: int
    train_loss: float
    batches: int
    frames_per_s: float
    seconds: float
    validation: Validation | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "epoch": self.epoch,
            "train_loss": self.train_loss,
            "batches": self.batches,
            "frames_per_s": self.frames_per_s,
            "seconds": self.seconds,
            "validation": self.validation.to_dict() if self.validation else None,
        }


@dataclass
class TrainResult:
    """What :func:`train` did and where the model went."""

    active: Path | None  # None on data-parallel ranks other than 0 (they save nothing)
    archive: Path | None
    device: str
    history: list[dict[str, Any]]
    validation: Validation | None
    data: dict[str, Any]
    interrupted: bool = False
    seconds: float = 0.0
    model: nn.Module | None = field(default=None, repr=False)
    #: action name → press threshold calibrated on validation (``None``: not calibrated).
    thresholds: dict[str, float] | None = None
    #: the epoch whose weights were saved (``None``: the last, e.g. after Ctrl-C or without validation).
    best_epoch: int | None = None
    #: optimiser steps taken in this run.
    updates: int = 0
    #: after Ctrl-C: which model is active and why (``None``: the run finished, its model is active).
    activation: str | None = None
    #: the optimiser's ``state_dict`` at the end (to continue with ``train(..., optimizer_state=…)``).
    optimizer_state: dict[str, Any] | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "active": str(self.active),
            "thresholds": self.thresholds,
            "best_epoch": self.best_epoch,
            "updates": self.updates,
            "archive": str(self.archive),
            "device": self.device,
            "interrupted": self.interrupted,
            "activation": self.activation,
            "seconds": self.seconds,
            "history": self.history,
            "validation": self.validation.to_dict() if self.validation else None,
            "data": {k: v for k, v in self.data.items() if not k.endswith("episodes")}
            | {
                "episodes": len(self.data.get("episodes", ())),
                "validation_episodes": len(self.data.get("validation_episodes", ())),
            },
        }


# --- the job -----------------------------------------------------------------


def train(
    settings: GolemSettings,
    registry: Registry,
    plan: TrainPlan | None = None,
    *,
    on_batch: Callable[[BatchProgress], None] | None = None,
    on_epoch: Callable[[EpochRecord], None] | None = None,
    optimizer_state: dict[str, Any] | None = None,
) -> TrainResult:
    """Train ``settings.brain.model`` on the store by behavioural cloning; save and return the result.

    Args:
        settings: all settings (``brain``, ``training``, ``loss``, ``data``).
        registry: where models, losses, samplers and sensors are looked up by name.
        plan: data selection and ``resume`` (default: all non-recovery episodes, from scratch).
        on_batch: called after each training batch with the epoch's progress (for a progress bar).
        on_epoch: called after each epoch, validation included.
        optimizer_state: an Adam ``state_dict`` to continue from (DAgger rounds fine-tune the
            same model in one process); the result's :attr:`TrainResult.optimizer_state` is the new one.

    Raises:
        GolemError: no or incompatible data, an unknown component, an unusable device,
            or an active model that does not match the settings (with ``resume``).
    """
    plan = plan or TrainPlan()
    started = time.perf_counter()
    check_selected(settings, registry)
    place = _place(settings.training)
    torch.manual_seed(settings.training.seed)

    # 2. the model's spec from settings, then the store it is to read.
    spec = ModelSpec.from_settings(settings, registry)
    store_path = Path(plan.store) if plan.store is not None else settings.store_path()
    if not TrajectoryStore.exists(store_path):
        raise GolemError(f"no trajectory store at {store_path}; record one with `golem run record`")
    store = TrajectoryStore.open(store_path)
    try:
        # the sensors generated maps record beside the screen, where the user chose none
        settings, added = generated_sensors(
            settings,
            registry,
            store,
            module=plan.module,
            include_recovery=plan.include_recovery,
            given=plan.given,
        )
        if added:
            spec = ModelSpec.from_settings(settings, registry)
        # 1-4. episodes selected, checked against the spec and split; model, loss, sampler, optimiser.
        run = _prepare(settings, registry, plan, place, spec, store, store_path, optimizer_state)
        # 5. epochs until the budget is spent, or Ctrl-C.
        interrupted = _run_epochs(run, on_batch, on_epoch)
        if not run.ranks.main:  # rank 0 validates and saves
            return TrainResult(
                active=None,
                archive=None,
                device=str(run.device),
                history=run.history,
                validation=None,
                data=run.data,
                interrupted=interrupted,
                seconds=time.perf_counter() - started,
                model=run.model,
                updates=run.updates,
            )
        # 6. checkpoint: archive + active, self-describing.
        result = _finish(run, interrupted)
    finally:
        store.close()
    result.seconds = time.perf_counter() - started
    log.info(
        "train.done",
        active=str(result.active),
        archive=str(result.archive),
        seconds=round(result.seconds, 2),
        interrupted=interrupted,
    )
    return result


def train_rank(settings_json: str, plan: TrainPlan | None) -> None:
    """A spawned data-parallel rank (``golem run train --nproc``): the same :func:`train`, quietly."""
    from golem.logs import configure_logging
    from golem.plugins import load_plugins

    configure_logging(level="warning")
    train(GolemSettings.model_validate_json(settings_json), load_plugins().registry, plan)


# --- the run's state -----------------------------------------------------------


@dataclass(frozen=True)
class _Placement:
    """Where this process trains: its device, the cortices' autocast dtype (``None``: float32), its
    data-parallel rank and its torch CPU threads."""

    device: torch.device
    autocast: torch.dtype | None
    ranks: Ranks
    threads: int


def _place(cfg: TrainingSettings) -> _Placement:
    """This process's device, precision, rank and share of the cores (set for torch here)."""
    device = select_device(cfg.device)
    autocast = autocast_dtype(cfg.precision, device)
    ranks = Ranks.current()  # data-parallel when a process group is up (golem run train --nproc, torchrun)
    if ranks.world > 1:
        device = rank_device(device)
    # this process's share of the cores beside the run's other processes on this machine (golem.threads)
    threads = set_threads(int(os.environ.get("LOCAL_WORLD_SIZE") or ranks.world), cfg.threads)
    return _Placement(device, autocast, ranks, threads)


@dataclass
class TrainingRun:
    """One call of :func:`train`: what :func:`_prepare` built, and where its epochs stand.

    Attributes:
        settings: the run's settings (``training.sequence_length`` resolved, the scenario's defaults taken).
        spec, registry: the model's spec and where its components came from.
        device, autocast, ranks: see :class:`_Placement`.
        train_ds, val_ds: training and validation windows.
        data: the checkpoint's ``data`` record (:func:`golem.learning.training_data.training_data`, plus
            ``resumed_from``, ``batch_size``, ``threads``, ``processes``, ``tensorboard`` where they apply).
        model: the network trained (validated, saved); ``net`` is the same, or its data-parallel wrapper.
        loss_fn, sampler, optimizer: the loss, the stateful batch sampler and Adam.
        augmentations: ``training.augmentations``, applied to every training batch (:mod:`golem.augment`).
        batch_size: streams B over all ranks (the sampler's, which may be lower than ``training.batch_size``).
        first_epoch: the epoch number this run starts at (a resumed model's epochs before it).
        planned: epochs this run expects to take (for progress: :attr:`BatchProgress.epochs`).
        events: the TensorBoard writer (``None``: off, or not rank 0).
        history: :meth:`EpochRecord.to_dict` of each epoch, a resumed model's earlier ones first.
        keep_best: the epoch that validated best so far.
        epoch: the epoch running (or next).
        updates: optimiser steps taken in this run.
        validated_at: ``updates`` when validation last ran.
        calibrated: batch-norm statistics were re-estimated at the current weights.
        final_validation: the last validation that ran.
    """

    settings: GolemSettings
    spec: ModelSpec
    registry: Registry
    device: torch.device
    autocast: torch.dtype | None
    ranks: Ranks
    train_ds: SequenceDataset
    val_ds: SequenceDataset
    data: dict[str, Any]
    model: nn.Module
    net: nn.Module
    loss_fn: nn.Module
    sampler: Any
    optimizer: torch.optim.Optimizer
    augmentations: list[Augmentation]
    batch_size: int
    first_epoch: int
    planned: int
    events: EventLog | None
    history: list[dict[str, Any]]
    keep_best: KeepBest
    epoch: int
    updates: int = 0
    validated_at: int = 0
    calibrated: bool = False
    final_validation: Validation | None = None

    @property
    def cfg(self) -> TrainingSettings:
        """``settings.training``."""
        return self.settings.training

    @property
    def local_batch_size(self) -> int:
        """This rank's streams: ``batch_size / world``."""
        return self.batch_size // self.ranks.world

    def more_epochs(self, epoch: int) -> bool:
        """Whether epoch ``epoch`` is to run: ``training.updates`` not yet spent, or else
        ``training.epochs`` epochs and ``training.min_updates`` steps not yet both done."""
        cfg = self.cfg
        if cfg.updates:
            return self.updates < cfg.updates
        return epoch < self.first_epoch + cfg.epochs or self.updates < cfg.min_updates


# --- 1-4. prepare ----------------------------------------------------------------


def _prepare(
    settings: GolemSettings,
    registry: Registry,
    plan: TrainPlan,
    place: _Placement,
    spec: ModelSpec,
    store: TrajectoryStore,
    store_path: Path,
    optimizer_state: dict[str, Any] | None,
) -> TrainingRun:
    """The data split, the model (fresh, or the active one to fine-tune), loss, sampler, optimiser,
    the data-parallel wrapper and the TensorBoard writer, in this order (the seeded draws depend on it)."""
    chosen = training_data(
        settings, store, store_path, spec, module=plan.module, include_recovery=plan.include_recovery, given=plan.given
    )
    settings, data = chosen.settings, chosen.data
    cfg, device = settings.training, place.device
    if plan.resume:
        resumed = resume_active(settings, registry, spec)
        model, history, first_epoch = resumed.model, resumed.history, resumed.first_epoch
        data["resumed_from"] = resumed.source
    else:
        model, history, first_epoch = registry.get("models", spec.model).obj(spec), [], 0
    model.to(device).train()
    loss_fn = registry.get("losses", cfg.loss).obj(settings, spec.n_actions).to(device)
    # Without --include-recovery there are no recovery streams to stratify over.
    sampling = (
        settings
        if plan.include_recovery
        else settings.model_copy(update={"training": cfg.model_copy(update={"recovery_ratio": 0.0})})
    )
    sampler = registry.get("samplers", cfg.sampler).obj(chosen.train, sampling)
    if hasattr(sampler, "set_epoch"):
        sampler.set_epoch(first_epoch)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.learning_rate)
    if optimizer_state is not None:
        optimizer.load_state_dict(optimizer_state)
    augmentations = build_augmentations(settings, registry)
    log.info(
        "train.start",
        model=spec.model,
        loss=cfg.loss,
        sampler=cfg.sampler,
        augmentations=selected_augmentations(settings, registry),
        device=str(device),
        cortices=str(place.autocast or torch.float32).removeprefix("torch."),
        sensors=spec.sensor_names,
        parameters=sum(p.numel() for p in model.parameters()),
        train=chosen.train.describe(),
        validation=chosen.validation.describe(),
    )
    # the stateful sampler lowers the stream count to what the data holds (with a warning)
    B = int(getattr(sampler, "batch_size", cfg.batch_size))
    data["batch_size"] = B
    data["threads"] = place.threads  # torch CPU threads of this process
    check_divisible(B, place.ranks)
    net = _data_parallel(model, place)
    if place.ranks.world > 1:
        data["processes"] = place.ranks.world
    planned = _planned_epochs(cfg, sampler)
    events = (
        EventLog(run_folder(settings.data.root, spec.profile, spec.model))
        if cfg.tensorboard and place.ranks.main
        else None
    )
    if events is not None:
        data["tensorboard"] = str(events.folder)
    return TrainingRun(
        settings=settings,
        spec=spec,
        registry=registry,
        device=device,
        autocast=place.autocast,
        ranks=place.ranks,
        train_ds=chosen.train,
        val_ds=chosen.validation,
        data=data,
        model=model,
        net=net,
        loss_fn=loss_fn,
        sampler=sampler,
        optimizer=optimizer,
        augmentations=augmentations,
        batch_size=B,
        first_epoch=first_epoch,
        planned=planned,
        events=events,
        history=history,
        keep_best=KeepBest(cfg.keep_best),
        epoch=first_epoch,
    )


def _data_parallel(model: nn.Module, place: _Placement) -> nn.Module:
    """``model`` in :class:`DistributedDataParallel` when there are several ranks, else ``model`` itself."""
    if place.ranks.world <= 1:
        return model
    device = place.device
    try:  # broadcasts rank 0's weights: the first exchange with the other ranks
        return DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
    except RuntimeError as exc:
        raise peer_failure(exc, place.ranks) from None


def _planned_epochs(cfg: TrainingSettings, sampler: Any) -> int:
    """Epochs the budget takes at the sampler's batches per epoch (unknown length: ``training.epochs``)."""
    per_epoch = len(sampler) if hasattr(sampler, "__len__") else 0
    if cfg.updates:
        return -(-cfg.updates // per_epoch) if per_epoch else cfg.epochs
    planned = max(cfg.epochs, -(-cfg.min_updates // per_epoch) if per_epoch else 0)
    if planned > cfg.epochs:
        log.info("train.min_updates", epochs=planned, min_updates=cfg.min_updates, batches_per_epoch=per_epoch)
    return planned


# --- 5. epochs ------------------------------------------------------------------


def _run_epochs(
    run: TrainingRun,
    on_batch: Callable[[BatchProgress], None] | None,
    on_epoch: Callable[[EpochRecord], None] | None,
) -> bool:
    """Epoch after epoch while :meth:`TrainingRun.more_epochs`; whether Ctrl-C stopped them.

    Raises:
        GolemError: training diverged, the sampler misbehaved, or (data-parallel) another rank failed.
    """
    try:
        while run.more_epochs(run.epoch):
            record = _run_epoch(run, on_batch)
            if on_epoch is not None:
                on_epoch(record)
            run.epoch += 1
    except KeyboardInterrupt:
        log.warning("train.interrupted", epochs_done=len(run.history) - run.first_epoch)
        return True
    except RuntimeError as exc:
        if run.ranks.world > 1:  # a gradient exchange failed: another rank died or timed out
            raise peer_failure(exc, run.ranks) from None
        raise
    finally:
        if run.events is not None:
            run.events.__exit__(None, None, None)
    return False


def _run_epoch(run: TrainingRun, on_batch: Callable[[BatchProgress], None] | None) -> EpochRecord:
    """One epoch: train, validate when due, keep it if best, then record, log and write its scalars."""
    record = _train_epoch(run, on_batch)
    record.validation = _validate_when_due(run)
    run.keep_best.offer(record.epoch, record.validation, run.model)
    run.history.append(record.to_dict())
    validation = record.validation
    log.info(
        "train.epoch",
        epoch=record.epoch + 1,
        train_loss=round(record.train_loss, 5),
        batches=record.batches,
        updates=run.updates,
        frames_per_s=round(record.frames_per_s, 1),
        seconds=round(record.seconds, 2),
        val_loss=round(validation.loss, 5) if validation else None,
        exact_match=round(validation.exact_match, 4) if validation else None,
        f1={k: None if v.f1 is None else round(v.f1, 3) for k, v in validation.actions.items()} if validation else None,
    )
    if run.events is not None:
        run.events.epoch(record, run.updates)
    return record


def _train_epoch(run: TrainingRun, on_batch: Callable[[BatchProgress], None] | None) -> EpochRecord:
    """5a. Stateful truncated BPTT over one pass of the sampler's streams (it stops part way where the
    ``training.updates`` budget ends); the epoch's record, not yet validated.

    Each rank trains its rows of every global batch (:meth:`Ranks.shard`), its loss scaled so that the
    all-reduced gradient is that of the global batch's recorded steps. The selected augmentations change
    each batch's inputs first, their draws seeded by (``training.seed``, epoch, batch, rank).
    """
    cfg, device, ranks = run.cfg, run.device, run.ranks
    total = len(run.sampler) if hasattr(run.sampler, "__len__") else None
    t0 = time.perf_counter()
    hx = run.model.initial_state(run.local_batch_size, device)
    loss_sum, batches, steps = 0.0, 0, 0
    global_steps: deque[int] = deque()  # recorded steps of each global batch, in order
    for batch in prefetched(run.train_ds, _shards(run, global_steps) if ranks.world > 1 else run.sampler):
        run.calibrated = False  # the weights move
        if batch.targets.shape[0] != hx.shape[0]:
            raise GolemError(
                f"sampler {cfg.sampler!r} yielded a batch of {batch.targets.shape[0]} windows but its "
                f"batch_size is {hx.shape[0]}; a stateful sampler keeps one row per stream"
            )
        recorded = int(batch.mask.sum())
        batch_steps = global_steps.popleft() if ranks.world > 1 else recorded  # all ranks' steps
        scale = loss_scale(recorded, batch_steps, ranks)
        inputs = to_device(batch.inputs, device)
        if run.augmentations:
            generator = batch_generator(cfg.seed, run.epoch, batches, ranks.rank)
            inputs = augment_inputs(inputs, run.spec.sensors, run.augmentations, generator)
        loss, hx = train_step(
            run.net,
            run.loss_fn,
            run.optimizer,
            inputs,
            batch.targets.to(device),
            batch.is_first.to(device),
            hx,
            batch.mask.to(device),
            None if batch.timespans is None else batch.timespans.to(device),
            scale,
            run.autocast,
        )
        steps += batch_steps
        if not math.isfinite(loss):
            raise GolemError(f"training diverged at epoch {run.epoch + 1} (loss {loss}); lower training.learning_rate")
        loss_sum += loss
        batches += 1
        run.updates += 1
        if on_batch is not None:
            on_batch(
                BatchProgress(
                    epoch=run.epoch,
                    epochs=run.first_epoch + run.planned,
                    batch=batches,
                    batches=total,
                    mean_loss=loss_sum / batches,
                    frames_per_s=steps / max(time.perf_counter() - t0, 1e-9),
                )
            )
        if cfg.updates and run.updates >= cfg.updates:
            break  # the budget ends inside this epoch
    seconds = time.perf_counter() - t0
    if batches == 0:
        raise GolemError("the sampler yielded no batch; lower training.batch_size")
    return EpochRecord(
        epoch=run.epoch,
        train_loss=loss_sum / batches,
        batches=batches,
        frames_per_s=steps / max(seconds, 1e-9),
        seconds=seconds,
        validation=None,
    )


def _shards(run: TrainingRun, global_steps: deque[int]) -> Iterator[np.ndarray]:
    """This rank's window indices of each of the sampler's global batches; appends each global batch's
    recorded steps to ``global_steps`` (the loss scale needs them)."""
    for indices in run.sampler:
        idx = np.asarray(indices)
        global_steps.append(int(run.train_ds.pointers["length"][idx].sum()))
        yield run.ranks.shard(idx)


def _validate_when_due(run: TrainingRun) -> Validation | None:
    """5b. Rank 0: batch-norm statistics re-estimated at this epoch's weights, then validation streams —
    after every epoch, except that short epochs validate only every ``training.validate_every`` updates
    (and the last always). ``None``: not due, another rank, or no validation episodes."""
    last = not run.more_epochs(run.epoch + 1)
    if not run.ranks.main or not (last or run.updates - run.validated_at >= run.cfg.validate_every):
        return None
    _recalibrate(run, run.cfg.seed + run.epoch)
    run.calibrated, run.validated_at = True, run.updates
    if not len(run.val_ds):
        return None
    run.final_validation = _validate(run)
    return run.final_validation


def _recalibrate(run: TrainingRun, seed: int) -> None:
    """Re-estimate the model's batch-norm statistics on :data:`CALIBRATION_BATCHES` seeded training batches."""
    windows = calibration_windows(run.train_ds, run.batch_size, CALIBRATION_BATCHES, seed)
    recalibrate_norms(run.model, run.train_ds, windows, run.device)


def _validate(run: TrainingRun) -> Validation:
    """The model's scores on the validation streams, ``batch_size`` of them."""
    return validate(run.model, run.loss_fn, run.val_ds, run.device, run.batch_size, run.settings.brain.activation)


# --- 6. finish -------------------------------------------------------------------


def _finish(run: TrainingRun, interrupted: bool) -> TrainResult:
    """Rank 0: settle the weights to save (recalibrated, the best epoch's unless interrupted), calibrate the
    press thresholds, save the archive and (unless the previous active model stays) the active model.

    The result's ``seconds`` is left to :func:`train`.
    """
    if not run.calibrated:  # interrupted, or the last epoch did not validate: the weights moved since
        _recalibrate(run, run.cfg.seed)
        if interrupted and len(run.val_ds):  # the saved weights' scores, as a finished run reports them
            try:
                run.final_validation = _validate(run)
            except KeyboardInterrupt:
                log.warning("train.validation_skipped", reason="interrupted again")
    best = None if interrupted else run.keep_best.best
    validation = _best_weights(run, best)
    metrics: dict[str, Any] = {
        "history": run.history,
        "updates": run.updates,
        "best_epoch": best.epoch if best is not None else None,
        "validation": validation.to_dict() if validation else None,
    }
    thresholds, calibrated = _press_thresholds(run, validation)
    if calibrated is not None:
        metrics["calibrated"] = calibrated
    run.model.eval()
    keep, activation = (False, None)
    if interrupted:
        keep, activation = previous_active_stays(
            run.settings, run.registry, run.spec, run.loss_fn, run.val_ds, run.device, run.batch_size, validation
        )
    archive, active = save_model(
        run.settings,
        run.model,
        run.spec,
        metrics,
        run.data,
        interrupted=interrupted,
        thresholds=thresholds,
        activate=not keep,
    )
    return TrainResult(
        active=active,
        archive=archive,
        device=str(run.device),
        history=run.history,
        validation=validation,
        data=run.data,
        interrupted=interrupted,
        model=run.model,
        thresholds=thresholds,
        best_epoch=metrics["best_epoch"],
        updates=run.updates,
        optimizer_state=run.optimizer.state_dict(),
        activation=activation,
    )


def _best_weights(run: TrainingRun, best: BestEpoch | None) -> Validation | None:
    """Load the best epoch's weights into the model when an earlier epoch than the last validated better;
    the validation of the weights now in the model (``None``: none ran)."""
    if best is None or best.epoch == run.history[-1]["epoch"]:
        return run.final_validation
    run.model.load_state_dict(best.state)  # an earlier epoch validated better: it is the model
    log.info("train.best_epoch", epoch=best.epoch + 1, val_loss=round(best.loss, 5))
    return best.validation


def _press_thresholds(
    run: TrainingRun, validation: Validation | None
) -> tuple[dict[str, float] | None, dict[str, Any] | None]:
    """``training.calibrate_thresholds``: each action's press threshold maximising its F1 on ``validation``,
    and the scores at those thresholds (the checkpoint's ``metrics.calibrated``); ``(None, None)`` when off
    or nothing was validated."""
    if not (
        run.cfg.calibrate_thresholds
        and validation is not None
        and validation.probabilities is not None
        and len(validation.probabilities)
    ):
        return None, None
    spec = run.spec
    values = calibrate_thresholds(validation.probabilities, validation.targets, run.settings.brain.activation)
    thresholds = {name: float(v) for name, v in zip(spec.action_names, values)}
    tally = Tally(spec.n_actions)
    tally.add(validation.probabilities, validation.targets, values)
    calibrated = {
        "exact_match": tally.exact_match,
        "actions": {k: asdict(v) for k, v in tally.scores(spec.action_names).items()},
    }
    log.info("train.thresholds", **{k: round(v, 2) for k, v in thresholds.items()})
    return thresholds, calibrated


__all__ = [
    "EpochRecord",
    "TrainPlan",
    "TrainResult",
    "Validation",
    "masked_loss",
    "prefetched",
    "train",
    "train_rank",
    "train_step",
]
