"""Curriculum training (seed 001, §5): phase 1 → 2 → 3 on fresh generated maps, promoted by held-out completion.

For each phase, round after round: the expert (``explorer``) plays
``maps_per_round`` fresh maps of the phase (map seeds continue from the
previous round's), the episodes go into the store tagged ``curriculum`` and
``procgen-phase<P>``, and the model is trained on **every** curriculum episode
so far — the earlier phases' data stays in the training set, read by the
stateful stratified sampler like any base data — fine-tuning the previous
round's model (the Adam state carried along; the very first round starts
from scratch unless ``resume``). Then the model alone plays ``eval_maps``
held-out maps of the phase (seeds from 10000, never trained on).

**Promotion rule**: the curriculum moves to the next phase when the model
reaches the exit on at least ``promote_at`` of the held-out maps, or after
``max_rounds`` rounds of the phase (then the promotion is recorded as
forced). The last phase runs its rounds until it passes or they run out.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import structlog

from golem.data.store import TrajectoryStore
from golem.diagnostics.evaluation import EVAL_START_SEED, EvalPlan, evaluate_maps
from golem.errors import GolemError
from golem.learning.archives import active_model_path
from golem.learning.checkpoints import read_metadata
from golem.learning.training import TrainPlan, train
from golem.registry import Registry
from golem.runtime.agent import model_threshold
from golem.runtime.generated import WorldPlan, generated_maps
from golem.settings import GolemSettings
from golem.workflows.recording import RecordPlan, record
from golem_procgen.space import check_phase

log = structlog.get_logger("golem_procgen.curriculum")

TAG = "curriculum"


@dataclass
class CurriculumPlan:
    """What :func:`curriculum` runs (see the module docstring for the rule).

    Attributes:
        phases: the phases in order (default 1, 2, 3).
        maps_per_round: fresh maps the expert plays per round (one episode each).
        max_rounds: rounds a phase may take before it is promoted anyway.
        promote_at: held-out completion rate (0–1) that promotes a phase.
        eval_maps: held-out maps per evaluation.
        updates_per_round: optimiser steps per round (``None``: the training settings' epochs).
        generator: the map generator (``builtin``, ``oblige``).
        expert: the demonstrator (must play generated maps).
        resume: fine-tune the profile's active model from the first round on.
        store: the store (default: the settings').
        max_steps: cut episodes after this many tics (``None``: the maps' own time-out).
        workers: engine processes recording a round's maps in parallel (each builds the maps it plays).
    """

    phases: Sequence[int] = (1, 2, 3)
    maps_per_round: int = 20
    max_rounds: int = 2
    promote_at: float = 0.5
    eval_maps: int = 10
    updates_per_round: int | None = None
    generator: str = "builtin"
    expert: str = "explorer"
    resume: bool = False
    store: Path | None = None
    max_steps: int | None = None
    workers: int = 1


@dataclass
class RoundReport:
    """One round: the phase, the maps' seeds, frames recorded, the expert's and the model's held-out completion."""

    phase: int
    round: int
    map_seeds: list[int]
    frames: int
    expert_exits: float
    updates: int
    val_loss: float | None
    completion: float | None
    promoted: str | None  # "passed", "forced" or None (another round follows)
    seconds: float


@dataclass
class CurriculumReport:
    """Every round :func:`curriculum` ran, and the model it leaves."""

    model: str
    rounds: list[RoundReport] = field(default_factory=list)
    interrupted: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "interrupted": self.interrupted, "rounds": [asdict(r) for r in self.rounds]}


def _check(plan: CurriculumPlan) -> None:
    for phase in plan.phases:
        check_phase(phase)
    if not plan.phases:
        raise GolemError("the curriculum needs at least one phase")
    if plan.maps_per_round < 1 or plan.max_rounds < 1 or plan.eval_maps < 1:
        raise GolemError("--maps-per-round, --rounds and --eval-maps must be at least 1")
    if not 0.0 <= plan.promote_at <= 1.0:
        raise GolemError(f"--promote-at is a completion rate between 0 and 1, got {plan.promote_at}")


def curriculum(
    settings: GolemSettings,
    registry: Registry,
    plan: CurriculumPlan,
    *,
    on_round: Callable[[RoundReport], None] | None = None,
    on_stage: Callable[[str], None] | None = None,
) -> CurriculumReport:
    """Run the curriculum; the profile's active model is the result.

    Raises:
        GolemError: a bad plan, an unknown generator or expert, an expert that does not play generated maps,
            ``resume`` without an active model.
    """
    _check(plan)
    expert_cls = registry.get("experts", plan.expert).obj
    if not getattr(expert_cls, "procedural", False):
        raise GolemError(f"expert {plan.expert!r} does not play generated maps; use --expert explorer")
    model = active_model_path(settings)
    if plan.resume and not model.is_file():
        raise GolemError(f"--resume: no active model for profile {settings.brain.profile} at {model}")
    store_path = Path(plan.store) if plan.store is not None else settings.store_path()
    tuned = settings
    if plan.updates_per_round is not None:
        tuned = settings.model_copy(
            update={"training": settings.training.model_copy(update={"updates": plan.updates_per_round})}
        )
    report = CurriculumReport(model=str(model))
    optimizer_state: dict[str, Any] | None = None
    trained_once = plan.resume
    stage = on_stage or (lambda text: None)
    try:
        for phase in plan.phases:
            for rnd in range(plan.max_rounds):
                started = time.perf_counter()
                first = rnd * plan.maps_per_round
                seeds = list(range(first, first + plan.maps_per_round))
                stage(f"phase {phase}, round {rnd + 1}: the {plan.expert} expert plays {len(seeds)} maps")
                frames, exits = 0, 0
                worlds = WorldPlan(generator=plan.generator, phase=phase)
                rec = RecordPlan(
                    demonstrator="expert",
                    expert=plan.expert,
                    episodes=len(seeds),
                    workers=plan.workers,
                    seeds=seeds,
                    tags=[TAG],
                    max_steps=plan.max_steps,
                    worlds=worlds,
                    spawn=True,  # this process trains between rounds: its workers must not be forked
                )
                with TrajectoryStore.open_or_create(store_path) as store:
                    for eid in record(settings, registry, rec, store, worlds.seed_key):
                        info = store.get(eid)
                        frames += info.length
                        exits += int(float(info.meta.extra.get("exited", 0.0)) > 0)
                stage(f"phase {phase}, round {rnd + 1}: training on every curriculum episode so far")
                result = train(
                    tuned,
                    registry,
                    TrainPlan(module=TAG, resume=trained_once, store=store_path),
                    optimizer_state=optimizer_state,
                )
                optimizer_state, trained_once = result.optimizer_state, True
                if result.interrupted:
                    raise KeyboardInterrupt
                stage(f"phase {phase}, round {rnd + 1}: the model alone on {plan.eval_maps} held-out maps")
                held_out = generated_maps(settings, registry, phase, plan.eval_maps, EVAL_START_SEED, plan.generator)
                board = evaluate_maps(
                    settings,
                    registry,
                    EvalPlan(
                        model_path=model,
                        scenario=held_out[0].scenario,
                        episodes=1,
                        baselines=False,
                        max_steps=plan.max_steps,
                        threshold=model_threshold(read_metadata(model), settings.brain.activation),
                    ),
                    [(m.scenario, m.seed) for m in held_out],
                    f"procgen phase {phase} (held out)",
                )
                completion = board.summary()["policies"]["model"]["goal_rate"]
                passed = completion is not None and completion >= plan.promote_at
                last = rnd == plan.max_rounds - 1
                promoted = "passed" if passed else ("forced" if last else None)
                row = RoundReport(
                    phase=phase,
                    round=rnd + 1,
                    map_seeds=seeds,
                    frames=frames,
                    expert_exits=exits / len(seeds),
                    updates=result.updates,
                    val_loss=result.validation.loss if result.validation else None,
                    completion=completion,
                    promoted=promoted,
                    seconds=round(time.perf_counter() - started, 1),
                )
                report.rounds.append(row)
                log.info("curriculum.round", **asdict(row) | {"map_seeds": len(row.map_seeds)})
                if on_round is not None:
                    on_round(row)
                if promoted:
                    break
    except KeyboardInterrupt:
        report.interrupted = True
        log.warning("curriculum.interrupted", rounds_done=len(report.rounds))
    return report


__all__ = ["CurriculumPlan", "CurriculumReport", "RoundReport", "TAG", "curriculum"]
