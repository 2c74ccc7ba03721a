"""What a training run reads: the store's windows split by whole episodes, and the scenario's training defaults.

:func:`training_data` selects the episodes (``--module``, recovery on request),
resolves ``training.sequence_length = "auto"`` from them, takes the one
scenario's defaults where the user set none (:func:`scenario_training`), and
holds out whole episodes for validation (never mirrored). Its ``data`` record
goes into the checkpoint's metadata as it is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from golem.data.dataset import SequenceDataset, select_episodes
from golem.data.store import EpisodeInfo, TrajectoryStore
from golem.errors import GolemError
from golem.learning.modelspec import ModelSpec
from golem.registry import Registry
from golem.scenarios import generated_spec, scenario_spec
from golem.sensors import with_default_sensors
from golem.settings import GolemSettings, TrainingSettings

# the events are the training job's own (train.*)
log = structlog.get_logger("golem.learning.training")


@dataclass
class TrainingData:
    """The windows a run trains and validates on.

    Attributes:
        settings: the run's settings, with ``training.sequence_length`` resolved and the scenario's defaults taken.
        train: the training windows (mirrored twins included when ``training.mirror``).
        validation: the held-out episodes' windows (possibly none).
        data: what the checkpoint records about them (store, scenario(s), frame skip, episode ids, counts).
    """

    settings: GolemSettings
    train: SequenceDataset
    validation: SequenceDataset
    data: dict[str, Any]


def training_data(
    settings: GolemSettings,
    store: TrajectoryStore,
    store_path: Path,
    spec: ModelSpec,
    *,
    module: str | None,
    include_recovery: bool,
    given: Collection[str],
) -> TrainingData:
    """The episodes of ``store`` that ``spec`` can read, split by whole episodes into training and validation.

    Args:
        settings: all settings; ``training`` decides the window length, mirroring, split share and seed.
        store: the open trajectory store at ``store_path``.
        spec: the model to train; its sensors, action names and profile select and check the episodes.
        module: keep episodes whose scenario is this or whose tags contain it (``None``: all).
        include_recovery: also read recovery episodes.
        given: dotted settings keys the user set; the others may take the scenario's default.

    Raises:
        GolemError: no or incompatible data (:meth:`SequenceDataset.from_store`), or no training window
            left after the split.
    """
    cfg = settings.training
    dataset = SequenceDataset.from_store(
        store,
        spec.sensors,
        spec.action_names,
        cfg,
        module=module,
        include_recovery=include_recovery,
        profile=spec.profile,
    )
    if cfg.sequence_length != dataset.sequence_length:  # "auto", resolved from the episodes
        cfg = cfg.model_copy(update={"sequence_length": dataset.sequence_length})
        settings = settings.model_copy(update={"training": cfg})
    scenarios = sorted({info.meta.scenario for info in dataset.episodes.values()})
    taken = scenario_training(cfg, scenarios, given)
    if taken:
        log.info("train.scenario_spec", scenario=scenarios[0], **taken)
        cfg = cfg.model_copy(update=taken)
        settings = settings.model_copy(update={"training": cfg})
        if not cfg.mirror and dataset.mirror:
            dataset = dataset.subset(dataset.episodes, mirror=False)
    train_ds, val_ds = dataset.split(cfg.validation_split, cfg.seed)
    if len(train_ds) == 0:
        raise GolemError("no training window left after the validation split; record more episodes")
    if len(val_ds) == 0:
        log.warning("train.no_validation", validation_split=cfg.validation_split, episodes=len(dataset.episodes))
    data = {
        "store": str(store_path.resolve()),
        "module": module,
        # play and evaluate default to the scenario a model was trained on, when it is one
        "scenario": scenarios[0] if len(scenarios) == 1 else None,
        "scenarios": scenarios,
        # the tics each decision held in the data: play and evaluate decide as often by default
        "frame_skip": data_frame_skip(dataset.episodes.values()),
        "include_recovery": include_recovery,
        # episodes per candidate of the tuning by play that follows training (0: none; the CLI runs it)
        "tune_by_play": cfg.tune_episodes,
        "episodes": sorted(dataset.episodes),
        "train_episodes": sorted(train_ds.episodes),
        "validation_episodes": sorted(val_ds.episodes),
        "total_steps": int(sum(info.length for info in dataset.episodes.values())),
        "train_windows": len(train_ds),
        "validation_windows": len(val_ds),
    }
    return TrainingData(settings=settings, train=train_ds, validation=val_ds, data=data)


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


def generated_sensors(
    settings: GolemSettings,
    registry: Registry,
    store: TrajectoryStore,
    *,
    module: str | None,
    include_recovery: bool,
    given: Collection[str],
) -> tuple[GolemSettings, list[str]]:
    """``settings`` with the sensors the generated maps' spec records beside the screen
    (:attr:`golem.scenarios.ScenarioSpec.sensors` of :func:`golem.scenarios.generated_spec`), where the user
    chose none and every episode training would read was played on a generated map of such a phase and
    carries them: a store recorded with ``golem run record --procgen-phase 1`` trains on its automap without
    a flag. Returns the settings and the names added (none: the settings as they were).
    """
    if "brain.sensors" in given:
        return settings, []
    episodes = select_episodes(store, module=module, include_recovery=include_recovery)
    phases = set()
    for info in episodes:
        world = info.meta.extra.get("world")
        phases.add(world.get("phase") if isinstance(world, dict) else None)
    if not episodes or not all(isinstance(p, int) for p in phases):  # an episode not on a generated map
        return settings, []
    wanted = [
        name
        for name in generated_spec(min(phases)).sensors
        if all(name in generated_spec(p).sensors for p in phases)
        and all(name in info.meta.sensors for info in episodes)
    ]
    settings, added, _ = with_default_sensors(settings, registry, wanted, given)
    if added:
        log.info("train.generated_sensors", added=added)
    return settings, added


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


__all__ = ["TrainingData", "data_frame_skip", "generated_sensors", "scenario_training", "training_data"]
