"""Behavioural cloning with stateful truncated BPTT, read top to bottom.

:func:`train` is the whole job:

1. select episodes from the store (``--module`` = scenario or tag, recovery on request);
2. build the model spec from settings (sensor instances from the registry) and
   check the data's action names and sensors against it (one-line GolemError);
3. split validation by whole episodes;
4. build model, loss and sampler from the registry by name; Adam(lr);
5. per epoch: stateful training (``hx`` carried across batches, detached,
   rows starting an episode zeroed *before* the forward pass), then the
   running statistics of batch normalisation re-estimated at the epoch's
   weights (:mod:`golem.learning.calibration`), then validation as contiguous streams
   with carried state;
6. keep the epoch with the lowest validation loss (``training.keep_best``),
   calibrate per-action press thresholds on validation (``training.calibrate_thresholds``)
   and save a self-describing checkpoint: a timestamped archive plus the active model.

``training.updates`` > 0 trains for that many optimiser steps instead of
``training.epochs`` (the last epoch may stop part way, then validates); else
training runs ``training.epochs`` epochs and more until ``training.min_updates``
optimiser steps, so a small store still gets enough of them. Epochs of fewer
than ``training.validate_every`` updates validate only every that many updates.

Ctrl-C during training saves the current weights the same way and returns a
result with ``interrupted=True`` (the CLI exits 130).
"""

from __future__ import annotations

import math
import os
import time
from collections import Counter, deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
import structlog
import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from golem.learning.archives import ACTIVE, save_model
from golem.learning.checkpoints import restore
from golem.data.dataset import Batch, SequenceDataset
from golem.learning.calibration import calibration_windows, recalibrate_norms
from golem.errors import GolemError
from golem.learning.device import autocast_dtype, select_device
from golem.learning.distributed import Ranks, check_divisible, loss_scale, peer_failure, rank_device
from golem.learning.modelspec import ModelSpec
from golem.registry import Registry
from golem.selection import check_selected
from golem.settings import GolemSettings, TrainingSettings
from golem.threads import set_threads
from golem.data.store import EpisodeInfo, TrajectoryStore
from golem.runtime.scenarios import scenario_spec
from golem.learning.tensorboard import EventLog, run_folder
from golem.learning.validation import Tally, Validation, calibrate_thresholds, run_model, to_device, validate

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
            may take the trained scenario's default (:class:`golem.runtime.scenarios.ScenarioSpec`).
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
            | {"episodes": len(self.data.get("episodes", ())),
               "validation_episodes": len(self.data.get("validation_episodes", ()))},
        }


# --- one step ----------------------------------------------------------------


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


# --- data ----------------------------------------------------------------------


def scenario_training(cfg: TrainingSettings, scenarios: Sequence[str], given: Collection[str]) -> dict[str, Any]:
    """The training settings the one scenario of the data changes (its :class:`ScenarioSpec`), where the user
    set none: ``mirror`` off for a fixed maze (mirrored, it is another maze: its twins would teach the wrong
    turns), ``min_updates`` where the scenario needs more steps and ``updates`` where its recommended store is
    too large for ten epochs in the time (either only when no budget is given: updates, epochs or floor), and
    ``tune_episodes`` where its thresholds are to be tuned by play after training."""
    if len(scenarios) != 1:
        return {}
    spec = scenario_spec(scenarios[0])
    taken: dict[str, Any] = {}
    if cfg.mirror and not spec.mirror and "training.mirror" not in given:
        taken["mirror"] = False
    if spec.tune_episodes and not cfg.tune_episodes and "training.tune_episodes" not in given:
        taken["tune_episodes"] = spec.tune_episodes
    budget = {"training.min_updates", "training.updates", "training.epochs"}
    if cfg.updates or budget & set(given):
        return taken
    if spec.updates is not None:
        taken["updates"] = spec.updates
    elif spec.min_updates is not None and spec.min_updates > cfg.min_updates:
        taken["min_updates"] = spec.min_updates
    return taken


def data_frame_skip(episodes: Iterable[EpisodeInfo]) -> int:
    """The tics per decision of ``episodes``: their most common ``frame_skip`` (unrecorded: 1).

    Episodes recorded at several skips train one model that plays at the most common one
    (logged as ``train.mixed_frame_skip``).
    """
    counts = Counter(int(info.meta.frame_skip or 1) for info in episodes)
    if not counts:
        return 1
    if len(counts) > 1:
        log.warning("train.mixed_frame_skip", episodes_by_skip=dict(counts))
    return counts.most_common(1)[0][0]


# --- resume ------------------------------------------------------------------


def _check_resumable(path: Path, found: ModelSpec, wanted: ModelSpec) -> None:
    """The active model must be the architecture the settings describe (one-line GolemError if not)."""
    a, b = found.to_metadata(), wanted.to_metadata()
    for key in ("model", "profile", "action_names", "sensors", "sensor_shapes", "working_memory", "cortical_depth",
                "feature_norm"):
        if a.get(key) != b.get(key):
            raise GolemError(
                f"cannot --resume: the active model {path} has {key}={a.get(key)} but the settings ask for "
                f"{b.get(key)}; change the settings to match it or train without --resume"
            )


def _previous_active_stays(
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
    differs = [k for k in ("model", "profile", "action_names", "sensors", "sensor_shapes") if a.get(k) != b.get(k)]
    if differs:
        return True, (f"the active model {path} stays: it differs in {', '.join(differs)}, so the two cannot be "
                      "compared on one validation set")
    try:
        previous = validate(restored.model.to(device).eval(), loss_fn, val_ds, device, batch_size,
                            settings.brain.activation)
    except KeyboardInterrupt:
        return True, f"the active model {path} stays: its validation was interrupted"
    if previous.loss < interrupted.loss:
        return True, (f"the active model {path} stays: it validates {previous.loss:.5f} on this run's validation "
                      f"episodes, the interrupted weights {interrupted.loss:.5f}")
    return False, (f"made the active model: they validate {interrupted.loss:.5f} on this run's validation episodes, "
                   f"the previous active model {previous.loss:.5f}")


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
    cfg = settings.training
    started = time.perf_counter()
    check_selected(settings, registry)
    device = select_device(cfg.device)
    autocast = autocast_dtype(cfg.precision, device)
    ranks = Ranks.current()  # data-parallel when a process group is up (golem run train --nproc, torchrun)
    if ranks.world > 1:
        device = rank_device(device)
    # this process's share of the cores beside the run's other processes on this machine (golem.threads)
    threads = set_threads(int(os.environ.get("LOCAL_WORLD_SIZE") or ranks.world), cfg.threads)
    torch.manual_seed(cfg.seed)

    # 1-2. spec from settings, then the data it can read.
    spec = ModelSpec.from_settings(settings, registry)
    store_path = Path(plan.store) if plan.store is not None else settings.store_path()
    if not TrajectoryStore.exists(store_path):
        raise GolemError(f"no trajectory store at {store_path}; record one with `golem run record`")
    store = TrajectoryStore.open(store_path)
    try:
        dataset = SequenceDataset.from_store(
            store, spec.sensors, spec.action_names, cfg,
            module=plan.module, include_recovery=plan.include_recovery, profile=spec.profile,
        )
        if cfg.sequence_length != dataset.sequence_length:  # "auto", resolved from the episodes
            cfg = cfg.model_copy(update={"sequence_length": dataset.sequence_length})
            settings = settings.model_copy(update={"training": cfg})
        scenarios = sorted({info.meta.scenario for info in dataset.episodes.values()})
        taken = scenario_training(cfg, scenarios, plan.given)
        if taken:
            log.info("train.scenario_spec", scenario=scenarios[0], **taken)
            cfg = cfg.model_copy(update=taken)
            settings = settings.model_copy(update={"training": cfg})
            if not cfg.mirror and dataset.mirror:
                dataset = dataset.subset(dataset.episodes, mirror=False)
        # 3. whole-episode validation split (validation is never mirrored).
        train_ds, val_ds = dataset.split(cfg.validation_split, cfg.seed)
        if len(train_ds) == 0:
            raise GolemError("no training window left after the validation split; record more episodes")
        if len(val_ds) == 0:
            log.warning("train.no_validation", validation_split=cfg.validation_split, episodes=len(dataset.episodes))
        data = {
            "store": str(store_path.resolve()),
            "module": plan.module,
            # play and evaluate default to the scenario a model was trained on, when it is one
            "scenario": scenarios[0] if len(scenarios) == 1 else None,
            "scenarios": scenarios,
            # the tics each decision held in the data: play and evaluate decide as often by default
            "frame_skip": data_frame_skip(dataset.episodes.values()),
            "include_recovery": plan.include_recovery,
            # episodes per candidate of the tuning by play that follows training (0: none; the CLI runs it)
            "tune_by_play": cfg.tune_episodes,
            "episodes": sorted(dataset.episodes),
            "train_episodes": sorted(train_ds.episodes),
            "validation_episodes": sorted(val_ds.episodes),
            "total_steps": int(sum(info.length for info in dataset.episodes.values())),
            "train_windows": len(train_ds),
            "validation_windows": len(val_ds),
        }

        # 4. model (fresh, or the active one to fine-tune), loss, sampler, optimiser.
        history: list[dict[str, Any]] = []
        first_epoch = 0
        if plan.resume:
            active_path = settings.models_path() / ACTIVE
            if not active_path.is_file():
                raise GolemError(
                    f"cannot --resume: no active model at {active_path}; train once without --resume"
                )
            restored = restore(active_path, registry)
            _check_resumable(active_path, restored.spec, spec)
            model = restored.model
            history = list((restored.metadata.get("metrics") or {}).get("history") or [])
            first_epoch = (history[-1]["epoch"] + 1) if history else 0
            data["resumed_from"] = {"path": str(active_path), "created": restored.metadata.get("created")}
            log.info("train.resume", path=str(active_path), epochs_before=first_epoch)
        else:
            model = registry.get("models", spec.model).obj(spec)
        model.to(device).train()
        loss_fn = registry.get("losses", cfg.loss).obj(settings, spec.n_actions).to(device)
        # Without --include-recovery there are no recovery streams to stratify over.
        sampling = settings if plan.include_recovery else settings.model_copy(
            update={"training": cfg.model_copy(update={"recovery_ratio": 0.0})}
        )
        sampler = registry.get("samplers", cfg.sampler).obj(train_ds, sampling)
        if hasattr(sampler, "set_epoch"):
            sampler.set_epoch(first_epoch)
        optimizer = torch.optim.Adam(model.parameters(), lr=cfg.learning_rate)
        if optimizer_state is not None:
            optimizer.load_state_dict(optimizer_state)
        log.info(
            "train.start", model=spec.model, loss=cfg.loss, sampler=cfg.sampler, device=str(device),
            cortices=str(autocast or torch.float32).removeprefix("torch."),
            sensors=spec.sensor_names, parameters=sum(p.numel() for p in model.parameters()),
            train=train_ds.describe(), validation=val_ds.describe(),
        )

        validation: Validation | None = None
        final_validation: Validation | None = None  # the last validation that ran
        # the stateful sampler lowers the stream count to what the data holds (with a warning)
        B = int(getattr(sampler, "batch_size", cfg.batch_size))
        data["batch_size"] = B
        data["threads"] = threads  # torch CPU threads of this process
        check_divisible(B, ranks)
        local_B = B // ranks.world  # this rank's streams
        net: nn.Module = model
        if ranks.world > 1:
            try:  # broadcasts rank 0's weights: the first exchange with the other ranks
                net = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
            except RuntimeError as exc:
                raise peer_failure(exc, ranks) from None
            data["processes"] = ranks.world
        per_epoch = len(sampler) if hasattr(sampler, "__len__") else 0
        if cfg.updates:
            planned = -(-cfg.updates // per_epoch) if per_epoch else cfg.epochs
        else:
            planned = max(cfg.epochs, -(-cfg.min_updates // per_epoch) if per_epoch else 0)
            if planned > cfg.epochs:
                log.info("train.min_updates", epochs=planned, min_updates=cfg.min_updates, batches_per_epoch=per_epoch)
        validated_at = 0  # updates when validation last ran
        events = EventLog(run_folder(settings.data.root, spec.profile, spec.model)) \
            if cfg.tensorboard and ranks.main else None
        if events is not None:
            data["tensorboard"] = str(events.folder)
        best: tuple[float, int, dict[str, torch.Tensor], Validation] | None = None  # (loss, epoch, state, validation)
        interrupted, calibrated, updates = False, False, 0
        try:
            epoch = first_epoch
            while (updates < cfg.updates) if cfg.updates else (
                epoch < first_epoch + cfg.epochs or updates < cfg.min_updates
            ):
                # 5a. stateful truncated BPTT over the sampler's streams.
                total = len(sampler) if hasattr(sampler, "__len__") else None
                t0 = time.perf_counter()
                hx = model.initial_state(local_B, device)
                loss_sum, batches, steps = 0.0, 0, 0
                global_steps: deque[int] = deque()  # recorded steps of each global batch, in order

                def shards() -> Iterator[np.ndarray]:
                    for indices in sampler:
                        idx = np.asarray(indices)
                        global_steps.append(int(train_ds.pointers["length"][idx].sum()))
                        yield ranks.shard(idx)

                for batch in prefetched(train_ds, shards() if ranks.world > 1 else sampler):
                    calibrated = False
                    if batch.targets.shape[0] != hx.shape[0]:
                        raise GolemError(
                            f"sampler {cfg.sampler!r} yielded a batch of {batch.targets.shape[0]} windows but its "
                            f"batch_size is {hx.shape[0]}; a stateful sampler keeps one row per stream"
                        )
                    recorded = int(batch.mask.sum())
                    batch_steps = global_steps.popleft() if ranks.world > 1 else recorded  # all ranks' steps
                    scale = loss_scale(recorded, batch_steps, ranks)
                    loss, hx = train_step(
                        net, loss_fn, optimizer, to_device(batch.inputs, device),
                        batch.targets.to(device), batch.is_first.to(device), hx, batch.mask.to(device),
                        None if batch.timespans is None else batch.timespans.to(device), scale, autocast,
                    )
                    steps += batch_steps
                    if not math.isfinite(loss):
                        raise GolemError(
                            f"training diverged at epoch {epoch + 1} (loss {loss}); "
                            "lower training.learning_rate"
                        )
                    loss_sum += loss
                    batches += 1
                    updates += 1
                    if on_batch is not None:
                        on_batch(BatchProgress(
                            epoch=epoch, epochs=first_epoch + planned, batch=batches, batches=total,
                            mean_loss=loss_sum / batches,
                            frames_per_s=steps / max(time.perf_counter() - t0, 1e-9),
                        ))
                    if cfg.updates and updates >= cfg.updates:
                        break  # the budget ends inside this epoch
                seconds = time.perf_counter() - t0
                if batches == 0:
                    raise GolemError("the sampler yielded no batch; lower training.batch_size")
                # 5b. evaluation-mode statistics at this epoch's weights, then validation streams —
                # after every epoch, except that short epochs validate only every training.validate_every updates.
                last = (updates >= cfg.updates) if cfg.updates else (
                    epoch + 1 >= first_epoch + cfg.epochs and updates >= cfg.min_updates
                )
                validation = None
                if ranks.main and (last or updates - validated_at >= cfg.validate_every):
                    recalibrate_norms(model, train_ds, calibration_windows(
                        train_ds, B, CALIBRATION_BATCHES, cfg.seed + epoch), device)
                    calibrated, validated_at = True, updates
                    if len(val_ds):
                        validation = validate(model, loss_fn, val_ds, device, B, settings.brain.activation)
                        final_validation = validation
                if cfg.keep_best and validation is not None and math.isfinite(validation.loss) and (
                    best is None or validation.loss < best[0]
                ):
                    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
                    best = (validation.loss, epoch, state, validation)
                record = EpochRecord(
                    epoch=epoch, train_loss=loss_sum / batches, batches=batches,
                    frames_per_s=steps / max(seconds, 1e-9), seconds=seconds, validation=validation,
                )
                history.append(record.to_dict())
                log.info(
                    "train.epoch", epoch=epoch + 1, train_loss=round(record.train_loss, 5), batches=batches,
                    updates=updates, frames_per_s=round(record.frames_per_s, 1), seconds=round(seconds, 2),
                    val_loss=round(validation.loss, 5) if validation else None,
                    exact_match=round(validation.exact_match, 4) if validation else None,
                    f1={k: None if v.f1 is None else round(v.f1, 3) for k, v in validation.actions.items()}
                    if validation else None,
                )
                if events is not None:
                    events.epoch(record, updates)
                if on_epoch is not None:
                    on_epoch(record)
                epoch += 1
        except KeyboardInterrupt:
            interrupted = True
            log.warning("train.interrupted", epochs_done=len(history) - first_epoch)
        except RuntimeError as exc:
            if ranks.world > 1:  # a gradient exchange failed: another rank died or timed out
                raise peer_failure(exc, ranks) from None
            raise
        finally:
            if events is not None:
                events.__exit__(None, None, None)
        if not ranks.main:  # rank 0 validates and saves
            return TrainResult(
                active=None, archive=None, device=str(device), history=history, validation=None, data=data,
                interrupted=interrupted, seconds=time.perf_counter() - started, model=model, updates=updates,
            )

        # 6. checkpoint: archive + active, self-describing.
        if not calibrated:  # interrupted, or the last epoch did not validate: the weights moved since
            recalibrate_norms(model, train_ds, calibration_windows(train_ds, B, CALIBRATION_BATCHES, cfg.seed), device)
            if interrupted and len(val_ds):  # the saved weights' scores, as a finished run reports them
                try:
                    final_validation = validate(model, loss_fn, val_ds, device, B, settings.brain.activation)
                except KeyboardInterrupt:
                    log.warning("train.validation_skipped", reason="interrupted again")
        metrics: dict[str, Any] = {"history": history, "updates": updates}
        validation = final_validation
        if best is not None and not interrupted and best[1] != history[-1]["epoch"]:
            model.load_state_dict(best[2])  # an earlier epoch validated better: it is the model
            validation = best[3]
            log.info("train.best_epoch", epoch=best[1] + 1, val_loss=round(best[0], 5))
        metrics["best_epoch"] = best[1] if best is not None and not interrupted else None
        metrics["validation"] = validation.to_dict() if validation else None
        thresholds = None
        if cfg.calibrate_thresholds and validation is not None and validation.probabilities is not None \
                and len(validation.probabilities):
            values = calibrate_thresholds(validation.probabilities, validation.targets, settings.brain.activation)
            thresholds = {name: float(v) for name, v in zip(spec.action_names, values)}
            tally = Tally(spec.n_actions)
            tally.add(validation.probabilities, validation.targets, values)
            metrics["calibrated"] = {
                "exact_match": tally.exact_match,
                "actions": {k: asdict(v) for k, v in tally.scores(spec.action_names).items()},
            }
            log.info("train.thresholds", **{k: round(v, 2) for k, v in thresholds.items()})
        model.eval()
        keep, activation = (False, None)
        if interrupted:
            keep, activation = _previous_active_stays(settings, registry, spec, loss_fn, val_ds, device, B, validation)
        archive, active = save_model(
            settings, model, spec, metrics, data, interrupted=interrupted, thresholds=thresholds, activate=not keep
        )
    finally:
        store.close()
    elapsed = time.perf_counter() - started
    log.info("train.done", active=str(active), archive=str(archive), seconds=round(elapsed, 2), interrupted=interrupted)
    return TrainResult(
        active=active, archive=archive, device=str(device), history=history, validation=validation,
        data=data, interrupted=interrupted, seconds=elapsed, model=model,
        thresholds=thresholds, best_epoch=metrics["best_epoch"], updates=updates,
        optimizer_state=optimizer.state_dict(), activation=activation,
    )


def train_rank(settings_json: str, plan: TrainPlan | None) -> None:
    """A spawned data-parallel rank (``golem run train --nproc``): the same :func:`train`, quietly."""
    from golem.logs import configure_logging
    from golem.plugins import load_plugins

    configure_logging(level="warning")
    train(GolemSettings.model_validate_json(settings_json), load_plugins().registry, plan)


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
