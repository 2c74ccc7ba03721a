"""Keeping the best policy by play: held-out evaluation during fine-tuning, confirmed on fresh seeds.

Every ``rl.eval_every`` updates the current weights play ``rl.eval_episodes`` held-out
episodes (seeds from :data:`EVAL_START_SEED`, away from the rollouts' and from ``golem run
evaluate``'s 10,000…, so that evaluation stays unbiased) through
:func:`golem.diagnostics.evaluation.evaluate`, as ``golem run evaluate`` would play the file.
A candidate that scores above the best so far (at first: the cloned checkpoint) is not kept
on that score alone — the best of many candidates on the same seeds is partly the luckiest —
but, as ``golem run tune`` does (:func:`golem.workflows.tuning.confirm_gain`), both play a block
of fresh seeds, and the candidate is kept only when the paired gain there exceeds
``rl.confirm_margin`` standard errors. Each confirmation uses the next block of seeds.
On generated maps (a world plan) every seed is a map of its own, built for it: held-out maps
from seed 20,000, away from the recorded maps (0…) and ``golem run evaluate``'s (10,000…).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import structlog

from golem.diagnostics.evaluation import EvalPlan, evaluate, evaluate_maps
from golem.learning.checkpoints import read_metadata
from golem.registry import Registry
from golem.runtime.agent import model_threshold
from golem.runtime.generated import WorldPlan, generated_maps
from golem.settings import GolemSettings
from golem.threads import set_threads
from golem.workflows.tuning import confirm_gain
from golem_rl.settings import RLSettings

log = structlog.get_logger(__name__)

#: First held-out seed of fine-tuning's evaluations (then the confirmation blocks).
EVAL_START_SEED = 20_000


@dataclass(frozen=True)
class Evaluation:
    """One evaluation by play.

    Attributes:
        update: updates done when it was played (0: the cloned checkpoint).
        frames: environment frames seen by then.
        mean: mean score (return, or frags: ``rl.score``) on the held-out seeds.
        std: their sample standard deviation.
        seeds: first and last held-out seed.
        kept: it became the best so far (the cloned checkpoint's own evaluation: ``True``).
        confirmation: ``{"seeds", "best", "candidate", "gain", "se", "confirmed"}`` when a confirmation was played.
        returns: the return of each held-out episode, by seed.
    """

    update: int
    frames: int
    mean: float
    std: float
    seeds: tuple[int, int]
    kept: bool
    confirmation: dict[str, Any] | None = None
    returns: tuple[float, ...] = field(default=(), repr=False)

    def record(self) -> dict[str, Any]:
        """JSON-ready, without the per-episode returns."""
        out = asdict(self)
        out.pop("returns")
        out["seeds"] = list(self.seeds)
        return out


class BestByPlay:
    """The best checkpoint so far by play, and the evaluations that chose it (rank 0 of a run).

    Args:
        settings: the run's settings (profile, sensors, frame skip).
        registry: the installed components.
        scenario: where the episodes are played.
        rl: ``eval_episodes``, ``confirm_episodes`` and ``confirm_margin``.
        max_steps: episodes are cut after this many tics (``None``: the scenario's limit).
        threads: torch threads to set again after each evaluation (play sets one).
        on_episode: called after every episode played (progress).
        world: play each seed on a map of its curriculum phase built for it (``None``: every seed on ``scenario``).
    """

    def __init__(
        self,
        settings: GolemSettings,
        registry: Registry,
        scenario: str,
        rl: RLSettings,
        max_steps: int | None,
        threads: int,
        on_episode: Callable[[Any], None] | None = None,
        world: WorldPlan | None = None,
    ) -> None:
        self.settings, self.registry, self.scenario, self.rl = settings, registry, scenario, rl
        self.world = world
        self.max_steps, self.threads, self.on_episode = max_steps, threads, on_episode
        self.seeds = range(EVAL_START_SEED, EVAL_START_SEED + rl.eval_episodes)
        self._next_fresh = EVAL_START_SEED + rl.eval_episodes
        self.best_path: Path | None = None
        self.best: Evaluation | None = None
        self.history: list[Evaluation] = []

    def play(self, path: Path, seeds: range) -> list[float]:
        """The scores of checkpoint ``path`` on ``seeds``, by seed, played as ``golem run evaluate`` plays it: the
        scenario's return, or the frags where ``rl.score`` says so (against bots)."""
        plan = EvalPlan(
            model_path=Path(path),
            scenario=self.scenario,
            episodes=len(seeds),
            workers=1,
            start_seed=seeds[0],
            max_steps=self.max_steps,
            threshold=model_threshold(read_metadata(path)),
            expert=None,
            baselines=False,
            frame_skip=int(self.settings.game.frame_skip),
            bots=self.rl.bots,
        )
        try:
            if self.world is not None:
                assert self.world.phase is not None, "fine-tuning plays a curriculum phase's maps"
                maps = generated_maps(
                    self.settings,
                    self.registry,
                    self.world.phase,
                    len(seeds),
                    seeds[0],
                    self.world.generator,
                    None if self.world.folder is None else Path(self.world.folder),
                )
                board = evaluate_maps(
                    self.settings,
                    self.registry,
                    plan,
                    [(m.scenario, m.seed) for m in maps],
                    self.scenario,
                    on_episode=self.on_episode,
                )
            else:
                board = evaluate(self.settings, self.registry, plan, on_episode=self.on_episode)
        finally:
            set_threads(requested=self.threads)  # play ran with one thread in this process
        if self.rl.kept_by == "frags":
            return [float(r.frags) for r in board.of("model")]
        return [float(r.episode_return) for r in board.of("model")]

    def start(self, source: Path) -> Evaluation:
        """Score the cloned checkpoint: the best until a candidate is confirmed better."""
        returns = self.play(source, self.seeds)
        self.best_path = Path(source)
        self.best = self._evaluation(0, 0, returns, kept=True)
        self.history.append(self.best)
        log.info("rl.evaluation", update=0, mean=self.best.mean, source=str(source))
        return self.best

    def consider(self, candidate: Path, update: int, frames: int) -> Evaluation:
        """Score ``candidate``; confirm it on fresh seeds when it beats the best. The caller keeps a kept one
        (:meth:`accept`) before the candidate file is overwritten."""
        assert self.best is not None and self.best_path is not None, "BestByPlay.start first"
        returns = self.play(candidate, self.seeds)
        mean = float(np.mean(returns))
        kept, confirmation = mean > self.best.mean, None
        if kept and self.rl.confirm_episodes:
            fresh = range(self._next_fresh, self._next_fresh + self.rl.confirm_episodes)
            self._next_fresh += self.rl.confirm_episodes
            mine = self.play(candidate, fresh)
            theirs = self.play(self.best_path, fresh)
            gain, se, kept = confirm_gain(theirs, mine, self.rl.confirm_margin)
            confirmation = {
                "seeds": [fresh[0], fresh[-1]],
                "best": round(float(np.mean(theirs)), 4),
                "candidate": round(float(np.mean(mine)), 4),
                "gain": round(gain, 4),
                "se": round(se, 4),
                "confirmed": kept,
            }
        evaluation = self._evaluation(update, frames, returns, kept=kept, confirmation=confirmation)
        self.history.append(evaluation)
        log.info("rl.evaluation", update=update, mean=evaluation.mean, kept=kept, confirmation=confirmation)
        return evaluation

    def accept(self, path: Path, evaluation: Evaluation) -> None:
        """``path`` (the kept candidate, now archived) is the best from here on."""
        self.best_path, self.best = Path(path), evaluation

    def _evaluation(
        self, update: int, frames: int, returns: list[float], *, kept: bool, confirmation: dict[str, Any] | None = None
    ) -> Evaluation:
        std = float(np.std(returns, ddof=1)) if len(returns) > 1 else 0.0
        return Evaluation(
            update=update,
            frames=frames,
            mean=round(float(np.mean(returns)), 4),
            std=round(std, 4),
            seeds=(self.seeds[0], self.seeds[-1]),
            kept=kept,
            confirmation=confirmation,
            returns=tuple(returns),
        )


__all__ = ["EVAL_START_SEED", "BestByPlay", "Evaluation"]
