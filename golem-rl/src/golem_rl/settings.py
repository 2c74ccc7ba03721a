"""The ``rl`` settings section: PPO fine-tuning of a cloned policy, anchored to it by a KL term."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from golem.settings import ComponentSettings


class RLSettings(ComponentSettings):
    """``rl``: PPO fine-tuning of a cloned policy (``golem rl finetune``), anchored to it by KL(π‖π_BC).

    A decision is one action held for the scenario's frame skip; a frame is one engine tic.
    """

    key = "rl"

    frames: int = Field(
        200_000, ge=1, le=10_000_000_000, description="environment frames (engine tics) to fine-tune for, all ranks"
    )
    workers: int = Field(2, ge=1, le=256, description="engine worker processes of each rank (one engine each)")
    segment: int = Field(
        64, ge=2, le=4096, description="decisions per rollout segment: the truncated-BPTT window of the updates"
    )
    epochs: int = Field(4, ge=1, le=100, description="passes of PPO over each update's segments")
    minibatches: int = Field(
        1, ge=1, le=1024, description="minibatches per epoch, split by segment (must not exceed the segments per rank)"
    )
    learning_rate: float = Field(2.5e-4, gt=0.0, lt=1.0, description="Adam step size")
    gamma: float = Field(0.99, gt=0.0, le=1.0, description="discount per decision")
    gae_lambda: float = Field(0.95, ge=0.0, le=1.0, description="GAE λ")
    clip: float = Field(0.2, gt=0.0, lt=1.0, description="PPO's clip of the probability ratio")
    value_clip: float = Field(
        0.2, ge=0.0, description="clip of the value prediction's change per update, in normalised return units (0: off)"
    )
    value_coef: float = Field(0.5, ge=0.0, description="weight of the value loss")
    entropy_coef: float = Field(0.003, ge=0.0, description="weight of the entropy bonus (nats per decision)")
    kl_coef: float = Field(
        0.2, ge=0.0, description="weight of KL(π‖π_BC) to the frozen cloned policy at the first update (nats/decision)"
    )
    kl_decay: float = Field(
        0.995, gt=0.0, le=1.0, description="factor on the KL weight after every update (VPT: anneal the anchor)"
    )
    kl_floor: float = Field(0.0, ge=0.0, description="the KL weight decays no lower than this (0: down to nothing)")
    max_kl: float = Field(
        10.0,
        gt=0.0,
        description="mean KL(π‖π_BC) per decision (nats) beyond which the run counts as diverged and stops, times "
        "rl.sharpen (a sharpened head's flipped button costs about that many times more nats)",
    )
    max_grad_norm: float = Field(0.5, gt=0.0, description="clip of the gradient's global norm")
    normalise_rewards: bool = Field(
        True, description="divide rewards by the running standard deviation of the discounted return"
    )
    value_warmup: int = Field(
        0, ge=0, le=1_000_000, description="first updates that train the value head alone (the policy stays as cloned)"
    )
    shapers: dict[str, float] = Field(
        default_factory=dict,
        description="reward shapers and their weights, e.g. {kills = 1.0, health = 0.01} "
        "(see `golem plugins list`); their reward is added to the scenario's",
    )
    eval_every: int = Field(
        20, ge=0, le=1_000_000, description="updates between evaluations by play on held-out seeds (0: only at the end)"
    )
    eval_episodes: int = Field(20, ge=1, le=10_000, description="held-out episodes per evaluation")
    confirm_episodes: int = Field(
        20,
        ge=0,
        le=10_000,
        description="fresh episodes on which a better candidate and the best so far play again; kept only when the "
        "paired gain exceeds confirm_margin standard errors (0: keep on the held-out score alone)",
    )
    confirm_margin: float = Field(1.0, ge=0.0, description="standard errors the confirmed gain must exceed")
    thresholds: Literal["source", "mode", "centred"] = Field(
        "source",
        description="press thresholds of the fine-tuned checkpoint in play and evaluation: source = the cloned "
        "checkpoint's (calibrated for its probabilities, so fine-tuning starts from the play it had), mode = 0.5 "
        "(each button's likelier value under the sampled policy), centred = the head's biases take in the "
        "source's thresholds, so the sampled policy presses a button more often than not exactly where the "
        "source's play presses it, and the fine-tuned checkpoint presses at 0.5",
    )
    decisions: Literal["threshold", "sample"] = Field(
        "threshold",
        description="how play and evaluation decide with the fine-tuned checkpoint: threshold = press a button when "
        "its probability passes its threshold (as cloned checkpoints play), sample = draw each button from its "
        "probability, seeded by the episode's seed — the policy the rollouts sample, so what PPO improves is "
        "what plays (a cloned head of low confidence plays worse sampled: pair it with thresholds = centred and "
        "sharpen)",
    )
    sharpen: float = Field(
        1.0,
        ge=1.0,
        le=100.0,
        description="factor on the head's weights and biases at the start, for the policy and its anchor: the "
        "sampled buttons follow the likelier value more often (1: the source's probabilities; with "
        "thresholds = centred the likelier value is the source's play)",
    )
    bots: int = Field(
        0,
        ge=0,
        le=15,
        description="the engine's bots in every rollout and evaluation episode: each engine hosts a deathmatch of "
        "its own player (as cig and multi_duel need anyway)",
    )
    episode_tics: int = Field(
        0,
        ge=0,
        le=1_000_000,
        description="tics after which rollout and evaluation episodes are cut (0: the scenario's own limit; "
        "cig's is 12 minutes)",
    )
    score: Literal["auto", "return", "frags"] = Field(
        "auto",
        description="what the held-out evaluations keep the best by: the scenario's return, or frags (FRAGCOUNT: "
        "kills of players and bots, minus deaths by one's own hand); auto = frags when rl.bots > 0",
    )
    seed: int = Field(0, ge=0, le=1_000, description="seed of the value head, the sampling and the episodes")
    timeout: float = Field(
        300.0,
        gt=0.0,
        description="seconds any wait on a rollout worker or another rank may last before the run stops",
    )
    tensorboard: bool = Field(True, description="write TensorBoard event files under data.root/runs")

    @field_validator("confirm_episodes")
    @classmethod
    def _paired(cls, value: int) -> int:
        if value == 1:
            raise ValueError("a paired confirmation needs 0 (none) or at least 2 episodes")
        return value

    @model_validator(mode="after")
    def _sharpen_keeps_play(self) -> RLSettings:
        if self.sharpen != 1.0 and self.thresholds == "source":
            raise ValueError(
                "rl.sharpen moves probabilities across the source's thresholds: use it with rl.thresholds = "
                "centred (or mode)"
            )
        return self

    @property
    def kept_by(self) -> Literal["return", "frags"]:
        """What evaluations keep the best by (``rl.score``; ``auto``: frags with bots, else the return)."""
        if self.score == "auto":
            return "frags" if self.bots > 0 else "return"
        return self.score

    @property
    def kl_limit(self) -> float:
        """The KL to the cloned policy (nats per decision) past which the run has diverged: ``max_kl × sharpen``.

        A button the anchor presses with logit ``z`` costs about ``|z|`` nats when the policy flips it, and
        ``sharpen`` multiplies the logits.
        """
        return self.max_kl * self.sharpen

    def kl_weight(self, update: int) -> float:
        """The KL weight of update ``update`` (1, 2, …): ``kl_coef · kl_decay^(update − 1)``, not below
        ``kl_floor`` (nor above ``kl_coef``: a floor above the start weight holds it at the start)."""
        return max(min(self.kl_floor, self.kl_coef), self.kl_coef * self.kl_decay ** (update - 1))


__all__ = ["RLSettings"]
