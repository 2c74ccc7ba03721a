"""Press thresholds tuned by play: coordinate ascent over a grid, each candidate scored in the real engine.

Training calibrates each button's press threshold for the best F1 on the
validation episodes — the expert's states. In play the agent meets its own
states, where the probabilities differ: on ``defend_the_center`` the F1 choice
for ATTACK (0.45) left the agent firing half as often as the expert, and 0.30
killed 2.5 more demons a game (100 unseen seeds). Tuning by play searches the
thresholds of the buttons the validation episodes press, one button at a
time over :data:`GRID`, and keeps a change only when the model's mean return
on the tuning seeds rises. Every candidate plays the same seeds (from
:data:`TUNE_START_SEED`, away from training's 0… and evaluation's 10,000…),
so candidates differ by their thresholds, not by their episodes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import structlog

from golem.diagnostics.evaluation import EvalPlan, evaluate
from golem.errors import GolemError
from golem.registry import Registry
from golem.settings import GolemSettings

log = structlog.get_logger(__name__)

#: First tuning seed; candidate episodes play ``TUNE_START_SEED + i``.
TUNE_START_SEED = 5_000
#: Thresholds a button may take: 0.20, 0.25, …, 0.60.
GRID: tuple[float, ...] = tuple(float(v) for v in np.round(np.arange(0.20, 0.601, 0.05), 2))


@dataclass(frozen=True)
class TunePlan:
    """What to tune.

    Attributes:
        model_path: the checkpoint.
        scenario: scenario name (or ``.cfg``/``.wad`` path).
        actions: the buttons' names in the model's order.
        start: the thresholds to start from, one per action (the checkpoint's).
        tune: the names of the buttons to search (the others keep their start value).
        episodes: episodes per candidate.
        workers: parallel engine processes.
        start_seed: seed of the first episode.
        max_steps: cut episodes after this many tics (``None``: the scenario's limit).
        frame_skip: tics each decision holds (reported only).
        grid: the values each searched button may take.
        sweeps: passes over the searched buttons (stops early when a pass changes nothing).
    """

    model_path: Path
    scenario: str
    actions: tuple[str, ...]
    start: tuple[float, ...]
    tune: tuple[str, ...]
    episodes: int = 30
    workers: int = 1
    start_seed: int = TUNE_START_SEED
    max_steps: int | None = None
    frame_skip: int = 1
    grid: tuple[float, ...] = GRID
    sweeps: int = 2

    def __post_init__(self) -> None:
        if len(self.start) != len(self.actions):
            raise GolemError(f"{len(self.start)} start thresholds for {len(self.actions)} actions")
        unknown = [name for name in self.tune if name not in self.actions]
        if unknown:
            raise GolemError(f"unknown action(s) to tune: {', '.join(unknown)}; the model has {', '.join(self.actions)}")
        if not self.tune:
            raise GolemError("no action to tune: the model's validation episodes pressed none")
        if not self.grid or any(not 0.0 < v < 1.0 for v in self.grid):
            raise GolemError(f"threshold grid must hold values between 0 and 1, got {list(self.grid)}")

    @property
    def most_candidates(self) -> int:
        """The most candidates the search can play: the start, then every grid value of every button per sweep."""
        return 1 + self.sweeps * len(self.tune) * len(self.grid)


@dataclass(frozen=True)
class Trial:
    """One candidate: its thresholds (model order), the mean and std of the model's return, and its episodes."""

    thresholds: tuple[float, ...]
    mean: float
    std: float
    action: str | None  # the button this candidate moved (None: the start)


@dataclass
class TuneResult:
    """The search: the start, the best candidate and every trial, in order."""

    plan: TunePlan
    trials: list[Trial] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def start(self) -> Trial:
        return self.trials[0]

    @property
    def best(self) -> Trial:
        """The first trial with the highest mean (the search keeps a change only when it scores higher)."""
        return max(self.trials, key=lambda t: t.mean)

    def thresholds(self) -> dict[str, float]:
        """``{action name: threshold}`` of the best candidate."""
        return dict(zip(self.plan.actions, self.best.thresholds, strict=True))

    def record(self) -> dict[str, Any]:
        """JSON-ready record of the search, stored in the tuned checkpoint's metadata (``tuned_by_play``)."""
        return {
            "scenario": self.plan.scenario,
            "seeds": [self.plan.start_seed, self.plan.start_seed + self.plan.episodes - 1],
            "episodes": self.plan.episodes,
            "tuned": list(self.plan.tune),
            "grid": list(self.plan.grid),
            "start": dict(zip(self.plan.actions, self.start.thresholds, strict=True)),
            "start_return": round(self.start.mean, 4),
            "best_return": round(self.best.mean, 4),
            "candidates": len(self.trials),
            "seconds": round(self.seconds, 1),
        }

    def to_json(self) -> dict[str, Any]:
        return {**self.record(), "best": self.thresholds(), "trials": [asdict(t) for t in self.trials]}


def pressed_actions(metadata: dict[str, Any], actions: Sequence[str]) -> tuple[str, ...]:
    """The buttons the checkpoint's validation episodes pressed (all of them when it does not say)."""
    scores = ((metadata.get("metrics") or {}).get("calibrated") or {}).get("actions")
    if not scores:
        scores = ((metadata.get("metrics") or {}).get("validation") or {}).get("actions")
    if not scores:
        return tuple(actions)
    return tuple(name for name in actions if (scores.get(name) or {}).get("support"))


def tune_thresholds(
    settings: GolemSettings,
    registry: Registry,
    plan: TunePlan,
    on_trial: Callable[[Trial], None] | None = None,
    on_episode: Callable[[Any], None] | None = None,
) -> TuneResult:
    """Coordinate ascent of the press thresholds of ``plan.tune`` by the model's mean return in the engine.

    Each candidate plays ``plan.episodes`` episodes on the same seeds with the
    model alone (no baselines). A button's value changes only when a candidate
    scores strictly higher than the best so far, so the start is kept unless
    play says otherwise. Cost: :attr:`TunePlan.most_candidates` candidates at
    most (cached: a candidate already played is not replayed).

    Raises:
        GolemError: a bad checkpoint or scenario, an engine failure (one line).
    """
    started = time.perf_counter()
    result = TuneResult(plan=plan)
    played: dict[tuple[float, ...], Trial] = {}
    base = EvalPlan(
        model_path=plan.model_path, scenario=plan.scenario, episodes=plan.episodes, workers=plan.workers,
        start_seed=plan.start_seed, max_steps=plan.max_steps, expert=None, baselines=False,
        frame_skip=plan.frame_skip,
    )

    def play(thresholds: tuple[float, ...], action: str | None) -> Trial:
        key = tuple(round(v, 4) for v in thresholds)
        if key in played:
            return played[key]
        board = evaluate(settings, registry, replace(base, threshold=list(key)), on_episode=on_episode)
        stats = board.summary()["policies"]["model"]["return"]
        trial = Trial(thresholds=key, mean=float(stats["mean"]), std=float(stats["std"]), action=action)
        played[key] = trial
        result.trials.append(trial)
        log.info("tune.trial", action=action, thresholds=list(key), mean=trial.mean)
        if on_trial is not None:
            on_trial(trial)
        return trial

    best = play(tuple(plan.start), None)
    index = {name: i for i, name in enumerate(plan.actions)}
    for _ in range(plan.sweeps):
        changed = False
        for name in plan.tune:
            for value in plan.grid:
                candidate = list(best.thresholds)
                candidate[index[name]] = float(value)
                trial = play(tuple(candidate), name)
                if trial.mean > best.mean:
                    best, changed = trial, True
        if not changed:
            break
    result.seconds = time.perf_counter() - started
    log.info("tune.done", start=result.start.mean, best=result.best.mean, candidates=len(result.trials),
             seconds=round(result.seconds, 1))
    return result


__all__ = ["GRID", "TUNE_START_SEED", "Trial", "TunePlan", "TuneResult", "pressed_actions", "tune_thresholds"]
