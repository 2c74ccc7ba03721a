"""Automatic DAgger: the learner plays, the expert labels, the model is fine-tuned on what it saw.

Behavioural cloning learns only the expert's states; live, a small error takes
the agent where it has never been. DAgger (Ross et al. 2011, with the
semantics of the ``imitation`` library) records the learner's own states with
the expert's action for each, round after round:

* round ``i`` (1, 2, …; round 0 is the behavioural-cloning data already in the
  store) records ``episodes_per_round`` episodes in which, per tic and
  independently, the expert's buttons are executed with probability ``β_i`` and
  the learner's otherwise (:class:`golem.runtime.rollout.MixingPolicy`); the
  learner's recurrent state is carried through every tic, whoever acted, and
  the expert's buttons are recorded as the label of every tic. The episodes go
  into the store as ``source = "recovery"``, tagged ``dagger`` and
  ``dagger-round-i``, with the round, β and the learner checkpoint's SHA-256;
* the active model is then fine-tuned (``--resume`` semantics, the Adam state
  kept from round to round) on base + recovery episodes, ``training.recovery_ratio``
  of the streams reading recovery data;
* the learner alone is evaluated on fixed held-out seeds.

On generated maps (``worlds``: a curriculum phase of a map generator, the
``explorer`` labelling) every round plays fresh maps — map seeds after every
map of that phase and generator already in the store — and the learner's check
plays one episode on each of the held-out maps from seed ``EVAL_START_SEED``,
which no training or correction map uses; the report then gives the share of
those maps whose exit it reached.

β schedules: ``linear`` β_i = min(1, max(0, (R₀ − i) / R₀)) with R₀ =
``beta_param`` rounds (default 4), ``exponential`` β_i = p^i with p =
``beta_param`` (default 0.5). A run continues after the last round in the store.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import structlog

from golem.data.store import TrajectoryStore
from golem.diagnostics.evaluation import EVAL_START_SEED, EvalPlan, Scoreboard, check_model, evaluate, evaluate_maps
from golem.errors import GolemError
from golem.learning.archives import active_model_path
from golem.learning.checkpoints import read_metadata
from golem.learning.training import TrainPlan, train
from golem.registry import Registry
from golem.runtime.agent import at_trained_frame_skip, model_threshold, settings_for_model
from golem.runtime.generated import WorldPlan, build_world, generated_maps, world_matches
from golem.scenarios import is_scenario_name
from golem.settings import GolemSettings, ResolvedSettings
from golem.workflows.recording import RecordPlan, check_world_expert, continuing_seeds, record, resolve_expert

log = structlog.get_logger("golem.workflows.dagger")

SCHEDULES = ("linear", "exponential")
DEFAULT_BETA_PARAM = {"linear": 4.0, "exponential": 0.5}
TAG = "dagger"


def beta_for_round(round_index: int, schedule: str, param: float | None = None) -> float:
    """β of round ``round_index`` (0, 1, …): the probability that a tic executes the expert's action.

    Raises:
        GolemError: an unknown schedule or a parameter out of range.
    """
    if schedule not in SCHEDULES:
        raise GolemError(f"unknown β schedule {schedule!r}; choose one of {', '.join(SCHEDULES)}")
    p = DEFAULT_BETA_PARAM[schedule] if param is None else float(param)
    if schedule == "linear":
        if p <= 0:
            raise GolemError(f"the linear schedule's --beta-param (rounds to reach β = 0) must be positive, got {p:g}")
        return min(1.0, max(0.0, (p - round_index) / p))
    if not 0.0 <= p <= 1.0:
        raise GolemError(f"the exponential schedule's --beta-param must be in [0, 1], got {p:g}")
    return p**round_index


@dataclass
class DaggerPlan:
    """What to run.

    Attributes:
        expert: the expert component that labels (and plays its own scenario unless ``scenario_given``).
        rounds: rounds to run in this call (continuing after the last stored round).
        episodes_per_round: episodes recorded per round.
        schedule, beta_param: the β schedule (:func:`beta_for_round`).
        updates_per_round: optimiser steps of each round's fine-tuning (``training.updates``).
        eval_episodes: held-out episodes the learner plays alone after each round (0: none).
        workers: parallel engine processes for recording and evaluation.
        store: the trajectory store (default ``settings.store_path()``).
        scenario_given: ``settings.game.scenario`` was chosen by the user.
        max_steps: cut episodes after this many tics (``None``: the scenario's limit).
        other_scenario: correct a model on a scenario it was not trained on (refused otherwise: the rounds
            would mix scenarios in its data and replace the active model).
        worlds: play every episode on a fresh generated map of this curriculum phase instead of one scenario
            (:class:`golem.runtime.generated.WorldPlan` with ``phase``); the expert must play generated maps.
    """

    expert: str
    rounds: int = 3
    episodes_per_round: int = 10
    schedule: str = "linear"
    beta_param: float | None = None
    updates_per_round: int = 300
    eval_episodes: int = 10
    workers: int = 1
    store: Path | None = None
    scenario_given: bool = False
    max_steps: int | None = None
    other_scenario: bool = False
    worlds: WorldPlan | None = None


@dataclass
class RoundReport:
    """One round: β, what was recorded, how often learner and expert disagreed, the learner alone afterwards."""

    round: int
    beta: float
    episodes: list[int]
    steps: int
    disagreement: float | None  # share of recorded tics where the learner's buttons differed from the expert's
    expert_share: float | None  # share of tics that executed the expert's buttons
    val_loss: float | None
    learner_return: dict[str, float] | None  # mean, std over the held-out seeds
    seconds: float
    learner_exits: float | None = None  # generated maps: the share of held-out maps whose exit the learner reached
    maps: list[int] | None = None  # generated maps: the seeds of the maps this round played


@dataclass
class DaggerReport:
    """The rounds run by :func:`dagger`."""

    scenario: str
    expert: str
    model: str
    rounds: list[RoundReport] = field(default_factory=list)
    interrupted: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "expert": self.expert,
            "model": self.model,
            "interrupted": self.interrupted,
            "rounds": [asdict(r) for r in self.rounds],
        }


def last_round(store: TrajectoryStore, scenario: str, worlds: WorldPlan | None = None) -> int:
    """The highest DAgger round stored for ``scenario`` (or on ``worlds``' maps); 0: none yet."""
    rounds = [
        int(i.meta.extra.get("dagger_round") or 0)
        for i in store.episodes()
        if TAG in i.meta.tags
        and (
            i.meta.scenario == scenario
            if worlds is None
            else world_matches(i.meta.extra, worlds.generator, worlds.phase)
        )
    ]
    return max(rounds, default=0)


def fresh_map_seeds(store: TrajectoryStore, worlds: WorldPlan, n: int, held_out: int) -> list[int]:
    """``n`` map seeds of ``worlds`` after every one stored (reserved in the store, so no two calls share one).

    Raises:
        GolemError: the seeds would reach the held-out maps' (``EVAL_START_SEED`` … ``+ held_out``).
    """
    stored = [
        int((i.meta.extra.get("world") or {}).get("seed", -1))
        for i in store.episodes()
        if world_matches(i.meta.extra, worlds.generator, worlds.phase)
    ]
    seeds = store.reserve_seeds(worlds.seed_key, max(stored, default=-1) + 1, n)
    if seeds[0] < EVAL_START_SEED + max(held_out, 1) and seeds[-1] >= EVAL_START_SEED:
        raise GolemError(
            f"the next {n} map seeds ({seeds[0]}–{seeds[-1]}) reach the held-out maps' (from {EVAL_START_SEED}): "
            "record into another store"
        )
    return seeds


def settings_from_model(resolved: ResolvedSettings, registry: Registry) -> GolemSettings:
    """The run's settings with the active model's profile, sensors, sensor sections and architecture.

    DAgger fine-tunes the checkpoint it corrects, so ``brain.model``, ``working_memory``,
    ``cortical_depth`` and ``feature_norm`` come from it too, wherever the user set none.
    Without an active model the settings are returned as they are (:func:`dagger` then says so).
    """
    path = active_model_path(resolved.settings)
    if not path.is_file():
        return resolved.settings
    metadata = read_metadata(path)
    settings = at_trained_frame_skip(settings_for_model(resolved, metadata, registry), resolved.sources, metadata)
    spec = metadata.get("spec") or {}
    taken = {
        k: spec[k]
        for k in ("model", "working_memory", "cortical_depth", "feature_norm")
        if k in spec and f"brain.{k}" not in resolved.sources
    }
    return settings.model_copy(update={"brain": settings.brain.model_copy(update=taken)})


def _stats(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {"mean": statistics.fmean(values), "std": statistics.pstdev(values) if len(values) > 1 else 0.0}


def dagger(
    settings: GolemSettings,
    registry: Registry,
    plan: DaggerPlan,
    *,
    on_round: Callable[[RoundReport], None] | None = None,
    on_stage: Callable[[str], None] | None = None,
) -> DaggerReport:
    """Run ``plan.rounds`` DAgger rounds on the profile's active model; fine-tune it after each.

    Raises:
        GolemError: no active model, no store, an expert for another scenario,
            a model that does not fit the profile or sensors, a bad β schedule.
    """
    beta_for_round(1, plan.schedule, plan.beta_param)  # a bad schedule fails before anything runs
    if plan.rounds < 1 or plan.episodes_per_round < 1:
        raise GolemError("--rounds and --episodes-per-round must be at least 1")
    worlds = plan.worlds
    procedural = getattr(registry.get("experts", plan.expert).obj, "procedural", False)
    if worlds is None and procedural and not plan.scenario_given:
        raise GolemError(f"expert {plan.expert!r} plays generated maps: pass --procgen-phase P, or --scenario MAP.cfg")
    if worlds is None:
        _, scenario = resolve_expert(settings, registry, plan.expert, plan.scenario_given)
    else:
        if worlds.phase is None:
            raise GolemError("DAgger on generated maps plays a curriculum phase's maps (--procgen-phase P)")
        if plan.scenario_given:
            raise GolemError("--procgen-phase plays generated maps: leave out --scenario")
        scenario = worlds.label()
        # an unknown generator or phase, or an expert that does not play these maps: one line, nothing recorded
        check_world_expert(
            RecordPlan(demonstrator="expert", episodes=1, expert=plan.expert, worlds=worlds),
            registry,
            build_world(settings, registry, worlds, EVAL_START_SEED),
        )
    model = active_model_path(settings)
    if not model.is_file():
        raise GolemError(
            f"no active model for profile {settings.brain.profile} at {model}; DAgger fine-tunes one: "
            "run `golem run train` first"
        )
    check_model(settings, registry, model)
    trained_on = (read_metadata(model).get("data") or {}).get("scenarios") or []
    if worlds is not None and trained_on and all(is_scenario_name(s) for s in trained_on) and not plan.other_scenario:
        raise GolemError(
            f"the active model {model} was trained on {', '.join(trained_on)}, not on generated maps; DAgger would "
            "mix them in its data and replace it: train it on maps first (`golem procgen curriculum`), "
            "or pass --other-scenario to correct it there on purpose"
        )
    if worlds is None and trained_on and scenario not in trained_on and not plan.other_scenario:
        raise GolemError(
            f"the active model {model} was trained on {', '.join(trained_on)}, not on {scenario!r} "
            f"(expert {plan.expert!r}); DAgger would mix the scenarios and replace it: choose the model's expert, "
            "or pass --other-scenario to correct it there on purpose"
        )
    store_path = Path(plan.store) if plan.store is not None else settings.store_path()
    if not TrajectoryStore.exists(store_path):
        raise GolemError(
            f"no trajectory store at {store_path}; record behavioural-cloning data with `golem run record`"
        )
    report = DaggerReport(scenario=scenario, expert=plan.expert, model=str(model))
    tuned = settings.model_copy(
        update={"training": settings.training.model_copy(update={"updates": plan.updates_per_round})}
    )
    optimizer_state: dict[str, Any] | None = None
    with TrajectoryStore.open(store_path) as store:
        first = last_round(store, scenario, worlds) + 1
    held_out = (
        generated_maps(settings, registry, worlds.phase, plan.eval_episodes, EVAL_START_SEED, worlds.generator)
        if worlds is not None and worlds.phase is not None and plan.eval_episodes > 0
        else []
    )
    try:
        for i in range(first, first + plan.rounds):
            started = time.perf_counter()
            beta = beta_for_round(i, plan.schedule, plan.beta_param)
            if on_stage is not None:
                on_map = "" if worlds is None else f" on fresh {worlds.label()}"
                on_stage(f"round {i}: recording {plan.episodes_per_round} episodes{on_map}, β = {beta:.3f}")
            with TrajectoryStore.open(store_path, readonly=False) as store:
                if worlds is None:
                    seeds = continuing_seeds(store, scenario, settings.game.seed, plan.episodes_per_round)
                else:
                    seeds = fresh_map_seeds(store, worlds, plan.episodes_per_round, plan.eval_episodes)
                rec = RecordPlan(
                    demonstrator="expert",
                    expert=plan.expert,
                    episodes=len(seeds),
                    workers=plan.workers,
                    seeds=seeds,
                    tags=[TAG, f"{TAG}-round-{i}"],
                    max_steps=plan.max_steps,
                    learner=str(model),
                    beta=beta,
                    dagger_round=i,
                    worlds=worlds,
                )
                ids = record(settings, registry, rec, store, scenario if worlds is None else worlds.seed_key)
                infos = [store.get(e) for e in ids]
            steps = sum(info.length for info in infos)
            disagree = sum(float(info.meta.extra.get("disagreements", 0)) for info in infos)
            expert_tics = sum(float(info.meta.extra.get("executed_expert", 0)) for info in infos)
            if on_stage is not None:
                on_stage(f"round {i}: fine-tuning for {plan.updates_per_round} updates on base + recovery episodes")
            trained = train(
                tuned,
                registry,
                # the sensors are the corrected model's (settings_from_model), not the data's defaults
                TrainPlan(include_recovery=True, resume=True, store=store_path, given=frozenset({"brain.sensors"})),
                optimizer_state=optimizer_state,
            )
            optimizer_state = trained.optimizer_state
            if trained.interrupted:
                raise KeyboardInterrupt
            learner, exits = None, None
            if plan.eval_episodes > 0:
                if on_stage is not None:
                    held = "maps" if worlds is not None else "seeds"
                    on_stage(f"round {i}: the learner alone on {plan.eval_episodes} held-out {held}")
                metadata = read_metadata(model)
                eval_plan = EvalPlan(
                    model_path=model,
                    scenario=scenario,
                    episodes=plan.eval_episodes,
                    workers=plan.workers,
                    start_seed=EVAL_START_SEED,
                    max_steps=plan.max_steps,
                    baselines=False,
                    threshold=model_threshold(metadata, settings.brain.activation),
                )
                board: Scoreboard
                if held_out:
                    board = evaluate_maps(
                        settings, registry, eval_plan, [(m.scenario, m.seed) for m in held_out], scenario
                    )
                    exits = statistics.fmean(float(r.exited) for r in board.of("model"))
                else:
                    board = evaluate(settings, registry, eval_plan)
                learner = _stats([r.episode_return for r in board.of("model")])
            round_report = RoundReport(
                round=i,
                beta=beta,
                episodes=list(ids),
                steps=steps,
                disagreement=disagree / steps if steps else None,
                expert_share=expert_tics / steps if steps else None,
                val_loss=trained.validation.loss if trained.validation else None,
                learner_return=learner,
                seconds=round(time.perf_counter() - started, 1),
                learner_exits=exits,
                maps=list(seeds) if worlds is not None else None,
            )
            report.rounds.append(round_report)
            log.info("dagger.round", **asdict(round_report) | {"episodes": len(ids)})
            if on_round is not None:
                on_round(round_report)
    except KeyboardInterrupt:
        report.interrupted = True
        log.warning("dagger.interrupted", rounds_done=len(report.rounds))
    return report


__all__ = [
    "SCHEDULES",
    "DaggerPlan",
    "DaggerReport",
    "RoundReport",
    "beta_for_round",
    "dagger",
    "fresh_map_seeds",
    "last_round",
    "settings_from_model",
]
