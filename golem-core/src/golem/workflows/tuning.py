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

The best of dozens of candidates scored on the same 30 episodes is partly the
luckiest: on ``take_cover`` (survival spread ± 450 tics) the search reported
981 tics against 713 on its own seeds and the agent then survived 797 against
746 on 100 unseen ones. So the search ends with a confirmation: the start and
the best candidate play ``confirm`` further seeds, and the tuned thresholds
are kept only when the paired gain there exceeds ``margin`` standard errors
(:func:`confirm_gain`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import structlog

from golem.diagnostics.evaluation import EvalPlan, ModelPlayer, mean_std
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
        confirm: episodes on fresh seeds (after the tuning seeds) on which the start and the best
            candidate play again; 0 skips the confirmation and keeps the best candidate.
        margin: the paired gain on the confirmation seeds must exceed this many standard errors.
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
    confirm: int = 30
    margin: float = 1.0

    def __post_init__(self) -> None:
        if len(self.start) != len(self.actions):
            raise GolemError(f"{len(self.start)} start thresholds for {len(self.actions)} actions")
        unknown = [name for name in self.tune if name not in self.actions]
        if unknown:
            raise GolemError(
                f"unknown action(s) to tune: {', '.join(unknown)}; the model has {', '.join(self.actions)}"
            )
        if not self.tune:
            raise GolemError("no action to tune: the model's validation episodes pressed none")
        if not self.grid or any(not 0.0 < v < 1.0 for v in self.grid):
            raise GolemError(f"threshold grid must hold values between 0 and 1, got {list(self.grid)}")
        if self.confirm < 0 or self.confirm == 1:
            raise GolemError(f"confirmation needs 0 (none) or at least 2 episodes, got {self.confirm}")

    @property
    def most_candidates(self) -> int:
        """The most candidates the search can play: the start, then every grid value of every button per sweep."""
        return 1 + self.sweeps * len(self.tune) * len(self.grid)


@dataclass(frozen=True)
class Trial:
    """One candidate: its thresholds (model order), the mean and std of the model's return, its returns by seed."""

    thresholds: tuple[float, ...]
    mean: float
    std: float
    action: str | None  # the button this candidate moved (None: the start)
    returns: tuple[float, ...] = ()


@dataclass(frozen=True)
class Confirmation:
    """The start and the best candidate replayed on fresh seeds, compared seed by seed.

    Attributes:
        seeds: first and last confirmation seed.
        start: the start thresholds' mean return there.
        best: the best candidate's mean return there.
        gain: mean of the per-seed differences (best − start).
        se: standard error of that mean (sample std of the differences / √n).
        confirmed: ``gain > margin · se`` and ``gain > 0``.
    """

    seeds: tuple[int, int]
    start: float
    best: float
    gain: float
    se: float
    confirmed: bool


def confirm_gain(start: Sequence[float], best: Sequence[float], margin: float = 1.0) -> tuple[float, float, bool]:
    """Paired comparison of two policies' returns on the same seeds.

    Args:
        start: returns of the start thresholds, one per seed.
        best: returns of the tuned thresholds on the same seeds, same order.
        margin: how many standard errors the mean gain must exceed.

    Returns:
        ``(gain, se, confirmed)``: the mean per-seed gain, its standard error, and whether
        it is positive and above ``margin`` standard errors.
    """
    if len(start) != len(best) or len(start) < 2:
        raise GolemError(f"a paired comparison needs the same ≥ 2 seeds for both, got {len(start)} and {len(best)}")
    diff = np.asarray(best, dtype=np.float64) - np.asarray(start, dtype=np.float64)
    gain = float(diff.mean())
    se = float(diff.std(ddof=1) / np.sqrt(len(diff)))
    return gain, se, bool(gain > 0.0 and gain > margin * se)


@dataclass
class TuneResult:
    """The search: the start, the best candidate and every trial, in order."""

    plan: TunePlan
    trials: list[Trial] = field(default_factory=list)
    confirmation: Confirmation | None = None
    seconds: float = 0.0

    @property
    def start(self) -> Trial:
        return self.trials[0]

    @property
    def best(self) -> Trial:
        """The first trial with the highest mean (the search keeps a change only when it scores higher)."""
        return max(self.trials, key=lambda t: t.mean)

    @property
    def accepted(self) -> bool:
        """The search found better thresholds and the confirmation (when played) upheld them."""
        if self.best is self.start:
            return False
        return self.confirmation is None or self.confirmation.confirmed

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
            "confirmation": None
            if self.confirmation is None
            else {
                k: (list(v) if isinstance(v, tuple) else round(v, 4) if isinstance(v, float) else v)
                for k, v in asdict(self.confirmation).items()
            },
            "accepted": self.accepted,
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
    on_confirm: Callable[[tuple[int, int]], None] | None = None,
) -> TuneResult:
    """Coordinate ascent of the press thresholds of ``plan.tune`` by the model's mean return in the engine.

    Each candidate plays ``plan.episodes`` episodes on the same seeds with the
    model alone (no baselines). A button's value changes only when a candidate
    scores strictly higher than the best so far, so the start is kept unless
    play says otherwise. Then, when the best differs from the start and
    ``plan.confirm`` > 0, both play the ``confirm`` seeds after the tuning
    seeds (:attr:`TuneResult.confirmation`; :attr:`TuneResult.accepted`).
    Cost: :attr:`TunePlan.most_candidates` candidates at most (cached: a
    candidate already played is not replayed), plus two confirmation runs, on engines started once
    (:class:`~golem.diagnostics.evaluation.ModelPlayer`).

    Raises:
        GolemError: a bad checkpoint or scenario, an engine failure (one line).
    """
    started = time.perf_counter()
    result = TuneResult(plan=plan)
    played: dict[tuple[float, ...], Trial] = {}
    base = EvalPlan(
        model_path=plan.model_path,
        scenario=plan.scenario,
        episodes=plan.episodes,
        workers=plan.workers,
        start_seed=plan.start_seed,
        max_steps=plan.max_steps,
        expert=None,
        baselines=False,
        frame_skip=plan.frame_skip,
    )
    seeds = base.seeds
    with ModelPlayer(settings, registry, base) as player:  # the engines start once for every candidate

        def returns(thresholds: tuple[float, ...], on: Sequence[int]) -> tuple[float, ...]:
            return tuple(float(r.episode_return) for r in player.play(thresholds, on, on_episode=on_episode))

        def play(thresholds: tuple[float, ...], action: str | None) -> Trial:
            key = tuple(round(v, 4) for v in thresholds)
            if key in played:
                return played[key]
            got = returns(key, seeds)
            stats = mean_std(got)  # as evaluate's summary reports the return
            trial = Trial(
                thresholds=key, mean=float(stats["mean"]), std=float(stats["std"]), action=action, returns=got
            )
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
        if plan.confirm and result.best is not result.start:
            again = range(plan.start_seed + plan.episodes, plan.start_seed + plan.episodes + plan.confirm)
            if on_confirm is not None:
                on_confirm((again[0], again[-1]))
            start_returns = returns(result.start.thresholds, again)
            best_returns = returns(result.best.thresholds, again)
            gain, se, confirmed = confirm_gain(start_returns, best_returns, plan.margin)
            result.confirmation = Confirmation(
                seeds=(again[0], again[-1]),
                start=float(np.mean(start_returns)),
                best=float(np.mean(best_returns)),
                gain=gain,
                se=se,
                confirmed=confirmed,
            )
            log.info("tune.confirmation", gain=gain, se=se, confirmed=confirmed)
    result.seconds = time.perf_counter() - started
    log.info(
        "tune.done",
        start=result.start.mean,
        best=result.best.mean,
        candidates=len(result.trials),
        seconds=round(result.seconds, 1),
    )
    return result


__all__ = [
    "GRID",
    "TUNE_START_SEED",
    "Confirmation",
    "Trial",
    "TunePlan",
    "TuneResult",
    "confirm_gain",
    "pressed_actions",
    "tune_thresholds",
]
