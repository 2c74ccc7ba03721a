"""PPO fine-tuning of a cloned policy on the scenario's reward, anchored to it — the algorithm, top to bottom.

Behavioural cloning copies the expert where the frames hold what the expert used and stalls
where they do not. As VPT (Baker et al., 2022) does, the cloned policy is then fine-tuned with
PPO (Schulman et al., 2017) on the scenario's own reward (plus optional shapers), with a
KL(π‖π_BC) term to the frozen cloned policy whose weight decays, so the policy improves
where the reward says and stays near the demonstrations elsewhere.

* **Policy**: the checkpoint's network rebuilt from its metadata; each button an independent
  Bernoulli of its logit (the cloned head is multi-label), sampled in the rollouts. The
  feature standardiser keeps the statistics it was cloned with (eval mode throughout, as in play).
* **Critic**: a linear value head on the recurrent core's outputs (:mod:`golem_rl.value`).
* **Rollouts**: ``rl.workers`` engines per rank (:mod:`golem_rl.rollouts`), ``rl.segment``
  decisions each per update, the recurrent state carried across segments and zeroed where an
  episode starts; decisions hold the scenario's frame skip.
* **Update**: GAE (:mod:`golem_rl.gae`) on rewards scaled by the running return's spread
  (:mod:`golem_rl.rewards`); ``rl.epochs`` passes of truncated BPTT over the segments, each
  from its stored initial state; clipped surrogate, clipped value loss, entropy bonus, KL to
  the cloned policy (:mod:`golem_rl.ppo`); gradients averaged over the ranks (DD-PPO,
  :mod:`golem_rl.distributed`).
* **Keeping**: evaluation by play on held-out seeds every ``rl.eval_every`` updates; a better
  candidate is kept only when fresh seeds confirm it (:mod:`golem_rl.selection`); the best
  becomes the profile's active model and an archive (:mod:`golem_rl.checkpoints`).
* **Faults**: a loss or KL that is not finite, or a KL beyond ``rl.max_kl``, stops the run and
  archives the last good weights; a dead worker or rank stops it within ``rl.timeout``;
  Ctrl-C saves the current weights, validates them by play and reports.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import structlog
import torch

from golem.errors import GolemError
from golem.learning.archives import activate
from golem.learning.checkpoints import load_checkpoint, restore, save_checkpoint
from golem.learning.distributed import Ranks
from golem.learning.tensorboard import run_folder
from golem.registry import Registry
from golem.runtime.agent import model_threshold
from golem.runtime.generated import WorldPlan
from golem.settings import GolemSettings, section
from golem.threads import set_threads
from golem_rl.batch import stack_segments
from golem_rl.checkpoints import finetuned_metadata, save_finetuned
from golem_rl.distributed import broadcast, digest, exchange, gathered, summed
from golem_rl.gae import advantages
from golem_rl.ppo import FIGURES, Weights, ppo_losses
from golem_rl.rewards import ReturnScale
from golem_rl.rollouts import RolloutWorkers, WorkerPlan
from golem_rl.runlog import RunLog
from golem_rl.selection import BestByPlay, Evaluation
from golem_rl.settings import RLSettings
from golem_rl.value import ValueHead, centre_head, check_model, policy_and_value, sharpen_head

log = structlog.get_logger(__name__)

#: Frames (a minute of play) after which a scenario whose config declares no reward, and that paid none, stops
#: the run: its reward (if any) comes from the map's scripts, and none has come.
NO_REWARD_FRAMES = 2_100


@dataclass(frozen=True)
class FinetunePlan:
    """What to fine-tune, where.

    Attributes:
        model_path: the cloned checkpoint.
        scenario: scenario name or ``.cfg``/``.wad`` path (checked against the checkpoint by the caller).
        max_steps: tics after which an episode is cut (``None``: the scenario's limit).
        declared_reward: the scenario's config declares a reward (``living_reward``, ``kill_reward``, …); when
            it does not, a run whose first :data:`NO_REWARD_FRAMES` frames paid nothing stops.
        world: generated maps, one per episode (rollouts and evaluations alike); ``scenario`` then describes them
            (``phase-1 maps of builtin``).
    """

    model_path: Path
    scenario: str
    max_steps: int | None = None
    declared_reward: bool = True
    world: WorldPlan | None = None


@dataclass(frozen=True)
class UpdateRecord:
    """One update, as progress, logs and TensorBoard see it.

    Attributes:
        update: 1-based; ``updates`` in all.
        frames: environment frames (tics) seen so far, every rank.
        seconds: wall time of the update (rollouts and learning); ``frames_per_s`` its frames over it.
        episodes: episodes that ended in this update's segments, every rank.
        return_mean: their mean scenario return (``None``: none ended); ``length_mean`` their mean tics.
        frags_mean: their mean frags against bots (``None``: none ended, or no ``rl.bots``).
        kl_bc: mean KL(π‖π_BC) per decision over the last epoch (nats); ``kl_coef`` its weight this update.
        entropy, value_loss, surrogate, clip_fraction, approx_kl: means over the last epoch's minibatches.
        reward_scale: the divisor of the rewards (1 without ``rl.normalise_rewards``).
    """

    update: int
    updates: int
    frames: int
    seconds: float
    frames_per_s: float
    episodes: int
    return_mean: float | None
    length_mean: float | None
    kl_bc: float
    kl_coef: float
    entropy: float
    value_loss: float
    surrogate: float
    clip_fraction: float
    approx_kl: float
    reward_scale: float
    frags_mean: float | None = None


@dataclass
class FinetuneResult:
    """The run, for the CLI's report and ``--json``.

    Attributes:
        source: the cloned checkpoint; ``scenario`` where the policy played.
        frames, updates: done (every rank).
        first_kl: KL(π‖π_BC) of the first minibatch of the first update (exactly 0: the same network).
        history: every update's record; ``evaluations`` every evaluation's (the source's first).
        best: the kept evaluation (``None``: no fine-tuned weights beat the source).
        archive: the kept best's archive; ``active``: the active model it became (``None``: unchanged).
        last: the archive of the last weights when they were not the kept best.
        interrupted: stopped by Ctrl-C (the last weights saved and validated).
        digests: every rank's weights digest at the end (equal: the ranks stayed in step).
        tensorboard: the run folder.
    """

    source: str
    scenario: str
    frames: int = 0
    updates: int = 0
    first_kl: float | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    evaluations: list[dict[str, Any]] = field(default_factory=list)
    best: dict[str, Any] | None = None
    archive: str | None = None
    active: str | None = None
    last: str | None = None
    interrupted: bool = False
    digests: list[str] = field(default_factory=list)
    tensorboard: str | None = None
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class _Diverged(Exception):
    """The update made the loss or the KL non-finite, or the KL passed ``rl.max_kl``."""


def finetune_rank(settings_json: str, plan: FinetunePlan) -> None:
    """A spawned data-parallel rank (``golem rl finetune --nproc``): the same :func:`finetune`, quietly."""
    from golem.logs import configure_logging
    from golem.plugins import load_plugins

    configure_logging(level="warning")
    finetune(GolemSettings.model_validate_json(settings_json), load_plugins().registry, plan)


def finetune(
    settings: GolemSettings,
    registry: Registry,
    plan: FinetunePlan,
    *,
    on_update: Callable[[UpdateRecord], None] | None = None,
    on_evaluation: Callable[[Evaluation], None] | None = None,
) -> FinetuneResult:
    """Fine-tune ``plan.model_path`` with PPO on ``plan.scenario``; rank 0 keeps the best by play and saves.

    Args:
        settings: the run's settings (``rl``, the model's profile and sensors, ``game.frame_skip``).
        registry: the installed components (model, sensors, reward shapers).
        plan: the source checkpoint and the scenario.
        on_update: called after every update (rank 0's progress).
        on_evaluation: called after every evaluation by play (rank 0).

    Raises:
        GolemError: a model that cannot be fine-tuned, a worker or rank that failed, a diverged run,
            a scenario that gave no reward — one line; what was stored stays.
    """
    started = time.perf_counter()
    rl = section(settings, RLSettings)
    ranks = Ranks.current()
    threads = set_threads(ranks.world)
    torch.manual_seed(rl.seed)

    # The cloned policy, a frozen copy of it (the anchor), and the value head on the core's outputs.
    source = restore(plan.model_path, registry)
    spec = source.spec
    width = check_model(source.model, spec.model)
    policy = source.model.eval()
    if rl.thresholds == "centred":
        centre_head(policy, model_threshold(source.metadata))
    if rl.sharpen != 1.0:
        sharpen_head(policy, rl.sharpen)
    # The anchor runs with autograd recording as the policy does (it is never stepped), so at the first update
    # both give the same bits and the KL is exactly 0; a no-grad pass differs in the last bits (~1e-6).
    reference = copy.deepcopy(policy)
    value_head = ValueHead(width)
    broadcast([policy, value_head], ranks)
    params = [p for module in (policy, value_head) for p in module.parameters()]
    optimizer = torch.optim.Adam(params, lr=rl.learning_rate, eps=1e-5)

    rows, steps, skip = rl.workers, rl.segment, int(settings.game.frame_skip)
    if rl.minibatches > rows:
        raise GolemError(f"rl.minibatches {rl.minibatches} exceeds the segments per update (rl.workers {rows})")
    updates = max(1, math.ceil(rl.frames / (ranks.world * rows * steps * skip)))
    scale = ReturnScale(rows, rl.gamma)
    reference_hx = reference.initial_state(rows)
    order = torch.Generator().manual_seed(rl.seed)
    result = FinetuneResult(source=str(plan.model_path), scenario=plan.scenario)
    folder = run_folder(settings.data.root, spec.profile, f"{spec.model}-rl") if ranks.main else None
    worker_plan = WorkerPlan(
        settings_json=settings.model_dump_json(),
        model_path=str(plan.model_path),
        scenario=plan.scenario,
        max_steps=plan.max_steps,
        shapers=dict(rl.shapers),
        bots=rl.bots,
        seed=rl.seed,
        first_worker=ranks.rank * rows,
        stride=ranks.world * rows,
        timeout=rl.timeout,
        world=plan.world,
    )
    log.info("rl.start", source=str(plan.model_path), scenario=plan.scenario, updates=updates, rank=ranks.rank)

    with ExitStack() as stack:
        keeper = None
        if ranks.main:
            selection = BestByPlay(settings, registry, plan.scenario, rl, plan.max_steps, threads, world=plan.world)
            keeper = _Keeper(settings, plan, rl, spec, source.metadata, selection, result, folder, on_evaluation)
        if keeper is not None and rl.tensorboard:
            keeper.events = stack.enter_context(RunLog(folder))
            result.tensorboard = str(folder)
        sampling = np.random.default_rng([rl.seed, ranks.rank])
        workers = stack.enter_context(RolloutWorkers(worker_plan, rows, spec.sensors, sampling))
        good = {k: v.detach().clone() for k, v in policy.state_dict().items()}  # the last weights that were sound
        rewarded = False
        try:
            for update in range(1, updates + 1):
                begun = time.perf_counter()
                # 1. Rollouts: T decisions of every engine, the current policy stepped over all of them at once.
                batch = stack_segments(workers.collect(policy, steps), spec)

                # 2. The collecting policy's logits and values (T + 1: the bootstrap state), the cloned policy's
                #    logits on the same observations (its own state carried across segments), GAE.
                everyone = torch.arange(rows)  # indexed as the minibatches are, so a forward pass gives the same bits
                with torch.no_grad():
                    old_logits, old_values, _ = policy_and_value(
                        policy, value_head, **batch.decisions(everyone, bootstrap=True)
                    )
                seen = batch.decisions(everyone)
                bc_logits, _, reference_hx = policy_and_value(
                    reference, None, seen["inputs"], reference_hx, seen["starts"], seen["timespans"]
                )
                bc_logits, reference_hx = bc_logits.detach(), reference_hx.detach()
                old_logits = old_logits[:, :steps]
                rewards = batch.rewards
                if rl.normalise_rewards:
                    rewards = scale(batch.rewards, batch.dones, reduce=lambda t: summed(t, ranks))
                adv, returns = advantages(rewards, old_values, batch.dones, rl.gamma, rl.gae_lambda)
                old_values = old_values[:, :steps]

                # 3. PPO epochs: truncated BPTT over whole segments, each from its stored initial state.
                weights = Weights(
                    clip=rl.clip,
                    value_clip=rl.value_clip,
                    value=rl.value_coef,
                    entropy=rl.entropy_coef,
                    kl=rl.kl_weight(update),
                    policy=0.0 if update <= rl.value_warmup else 1.0,
                )
                last_epoch: list[torch.Tensor] = []
                for epoch in range(rl.epochs):
                    shuffled = torch.randperm(rows, generator=order) if rl.minibatches > 1 else everyone
                    for mb in shuffled.chunk(rl.minibatches):
                        logits, values, _ = policy_and_value(
                            policy, value_head, **batch.decisions(mb), detach_value=weights.policy == 0.0
                        )
                        losses = ppo_losses(
                            logits,
                            old_logits[mb],
                            bc_logits[mb],
                            batch.actions[mb],
                            adv[mb],
                            values,
                            old_values[mb],
                            returns[mb],
                            weights,
                        )
                        if result.first_kl is None:
                            result.first_kl = float(losses.kl_bc)
                        optimizer.zero_grad(set_to_none=True)
                        losses.total.backward()
                        # DD-PPO: every rank gets the mean gradient, and the mean of these figures
                        parts = exchange(params, losses.figures(), ranks)
                        grads = [p.grad for p in params if p.grad is not None]
                        if not bool(torch.isfinite(parts).all()) or not all(
                            bool(torch.isfinite(g).all()) for g in grads
                        ):
                            raise _Diverged(
                                f"the loss or its gradient is not finite (update {update}, epoch {epoch + 1})"
                            )
                        torch.nn.utils.clip_grad_norm_(params, rl.max_grad_norm)
                        optimizer.step()
                        if epoch == rl.epochs - 1:
                            last_epoch.append(parts)
                means = dict(zip(FIGURES, torch.stack(last_epoch).mean(dim=0).tolist()))
                if means["kl_bc"] > rl.kl_limit:
                    raise _Diverged(
                        f"KL(π‖π_BC) reached {means['kl_bc']:.3g} nats per decision at update {update} "
                        f"(rl.max_kl {rl.max_kl:g}" + (f" × rl.sharpen {rl.sharpen:g})" if rl.sharpen != 1 else ")")
                    )

                # 4. The episodes that ended; logs.
                good = {k: v.detach().clone() for k, v in policy.state_dict().items()}
                frames, episodes, returned, tics, fragged, paid = summed(
                    torch.tensor(
                        [
                            float(batch.frames),
                            float(len(batch.episodes)),
                            sum(e["episode_return"] for e in batch.episodes),
                            float(sum(e["tics"] for e in batch.episodes)),
                            float(sum(e.get("frags", 0) for e in batch.episodes)),
                            float(bool(batch.rewards.abs().sum() > 0)),
                        ],
                        dtype=torch.float64,
                    ),
                    ranks,
                ).tolist()
                result.frames += int(frames)
                result.updates = update
                rewarded = rewarded or paid > 0
                if not rewarded and not plan.declared_reward and result.frames >= NO_REWARD_FRAMES:
                    raise GolemError(
                        f"scenario {plan.scenario} gave no reward in {result.frames} frames and its config declares "
                        "none: nothing to fine-tune on; add reward shapers, e.g. --set 'rl.shapers={kills = 1.0}'"
                    )
                seconds = time.perf_counter() - begun
                record = UpdateRecord(
                    update=update,
                    updates=updates,
                    frames=result.frames,
                    seconds=round(seconds, 3),
                    frames_per_s=round(frames / max(seconds, 1e-9), 1),
                    episodes=int(episodes),
                    return_mean=round(returned / episodes, 4) if episodes else None,
                    length_mean=round(tics / episodes, 2) if episodes else None,
                    frags_mean=round(fragged / episodes, 4) if episodes and rl.bots else None,
                    kl_bc=round(means["kl_bc"], 6),
                    kl_coef=round(weights.kl, 6),
                    entropy=round(means["entropy"], 6),
                    value_loss=round(means["value"], 6),
                    surrogate=round(means["surrogate"], 6),
                    clip_fraction=round(means["clip_fraction"], 4),
                    approx_kl=round(means["approx_kl"], 6),
                    reward_scale=round(scale.scale, 4) if rl.normalise_rewards else 1.0,
                )
                result.history.append(asdict(record))
                log.info("rl.update", **asdict(record))
                if keeper is not None and keeper.events is not None:
                    keeper.events.update(record)
                if on_update is not None:
                    on_update(record)

                # 5. Evaluation by play (rank 0), keeping the best confirmed.
                if keeper is not None and (update == updates or (rl.eval_every and update % rl.eval_every == 0)):
                    keeper.consider(policy.state_dict(), update, last=update == updates)
        except _Diverged as exc:
            if keeper is None:
                raise GolemError(f"fine-tuning diverged: {exc}") from None
            kept = keeper.save(good, "-last-good")
            best = f", the best by play in {result.archive}" if result.archive else ""
            raise GolemError(
                f"fine-tuning diverged: {exc}; stopped, the last good weights are in {kept}{best}"
            ) from None
        except KeyboardInterrupt:
            if keeper is None or result.updates == 0:
                raise
            result.interrupted = True
            log.warning("rl.interrupted", updates=result.updates, frames=result.frames)
            stack.close()  # the workers and their engines stop before the validation plays
            try:  # validated by play as any candidate: kept when confirmed better
                keeper.consider(good, result.updates, last=True)
            except (KeyboardInterrupt, GolemError) as again:
                log.warning("rl.validation_skipped", reason=str(again) or "interrupted again")
                result.last = str(keeper.save(good, "-interrupted"))
        policy.load_state_dict(good)
        # After Ctrl-C rank 0 leaves the group; the other ranks stop at their next exchange.
        result.digests = [] if result.interrupted else gathered(digest([policy, value_head]), ranks)
    if len(set(result.digests)) > 1:
        raise GolemError(f"the ranks' weights drifted apart (digests {', '.join(result.digests)}); report this")
    if keeper is not None:
        if folder is not None and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()  # held only the candidates played (no TensorBoard files)
        if result.archive is not None:  # fine-tuned weights beat the source: they become the active model
            result.active = str(activate(settings, Path(result.archive)))
        result.seconds = round(time.perf_counter() - started, 1)
        log.info("rl.done", frames=result.frames, updates=result.updates, best=result.best, archive=result.archive)
    return result


class _Keeper:
    """Rank 0's bookkeeping: evaluations by play, and the checkpoints they keep (never the active model: the
    run's end decides that)."""

    def __init__(
        self,
        settings: GolemSettings,
        plan: FinetunePlan,
        rl: RLSettings,
        spec: Any,
        source_metadata: dict[str, Any],
        selection: BestByPlay,
        result: FinetuneResult,
        folder: Path,
        on_evaluation: Callable[[Evaluation], None] | None,
    ) -> None:
        self.settings, self.plan, self.rl, self.spec = settings, plan, rl, spec
        self.source_metadata, self.selection, self.result, self.folder = source_metadata, selection, result, folder
        self.on_evaluation = on_evaluation
        self.events: RunLog | None = None

    def metadata(self, evaluation: Evaluation | None) -> dict[str, Any]:
        thresholds = (
            {name: 0.5 for name in self.spec.action_names} if self.rl.thresholds in ("mode", "centred") else None
        )
        return finetuned_metadata(
            self.plan.model_path,
            self.source_metadata,
            rl=self.rl.model_dump(mode="json"),
            frames=self.result.frames,
            frame_skip=int(self.settings.game.frame_skip),
            scenario=None if self.plan.world is not None else self.plan.scenario,
            thresholds=thresholds,
            evaluation=evaluation.record() if evaluation is not None else None,
            interrupted=self.result.interrupted,
            decisions=self.rl.decisions,
            world=None
            if self.plan.world is None
            else {"generator": self.plan.world.generator, "phase": self.plan.world.phase},
        )

    def save(self, state: dict[str, torch.Tensor], tail: str, evaluation: Evaluation | None = None) -> Path:
        """Archive ``state``, read it back whole (hashes, finite weights) and return its path."""
        evaluation = evaluation or (self.selection.history[-1] if self.selection.history else None)
        archive, _ = save_finetuned(self.settings, state, self.spec, self.metadata(evaluation), tail=tail)
        load_checkpoint(archive)
        return archive

    def evaluated(self, evaluation: Evaluation) -> None:
        self.result.evaluations.append(evaluation.record())
        if evaluation.kept:
            self.result.best = evaluation.record()
        if self.events is not None:
            self.events.evaluation(evaluation)
        if self.on_evaluation is not None:
            self.on_evaluation(evaluation)

    def consider(self, weights: dict[str, torch.Tensor], update: int, last: bool = False) -> Evaluation:
        """Play ``weights`` on the held-out seeds as a checkpoint file (as play loads it); archive them when
        confirmed better than the best so far, and when they are the run's ``last`` in any case."""
        if self.selection.best is None:  # the source's score on the held-out seeds: the bar a candidate must clear
            self.evaluated(self.selection.start(self.plan.model_path))
        state = {k: v.detach().clone() for k, v in weights.items()}
        candidate = save_checkpoint(
            self.folder / "candidate.safetensors", state, self.spec.to_metadata(), self.metadata(None)
        )
        try:
            evaluation = self.selection.consider(candidate, update, self.result.frames)
        finally:
            candidate.unlink(missing_ok=True)
        self.evaluated(evaluation)
        interrupted = "-interrupted" if self.result.interrupted else ""
        if evaluation.kept:
            archive = self.save(state, interrupted, evaluation)
            self.selection.accept(archive, evaluation)
            self.result.archive, self.result.last = str(archive), None
        elif last:
            self.result.last = str(self.save(state, interrupted or "-last", evaluation))
        return evaluation


__all__ = ["FinetunePlan", "FinetuneResult", "UpdateRecord", "finetune", "finetune_rank"]
