"""PPO's losses for a policy anchored to a frozen cloned one: clipped surrogate, clipped value, entropy, KL.

Hand-written rather than TorchRL's ``ClipPPOLoss``: that loss takes a TensorDict actor and
one distribution per step, while here the log-probabilities come from a recurrent network
re-run over whole rollout segments (truncated BPTT from each segment's stored state), and the
anchor is a KL to a *frozen reference* policy with its own decaying weight, which
``ClipPPOLoss`` has no term for (its ``KLPENPPOLoss`` penalises the KL to the previous update's
policy instead).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from golem_rl import bernoulli


@dataclass(frozen=True)
class Weights:
    """The weights of the loss's terms for one update.

    Attributes:
        clip: PPO's ratio clip ε.
        value_clip: clip of the value prediction's change (0: unclipped).
        value: weight of the value loss.
        entropy: weight of the entropy bonus.
        kl: weight of KL(π‖π_BC) (already decayed for this update).
        policy: 1, or 0 while only the value head learns (``rl.value_warmup``).
    """

    clip: float
    value_clip: float
    value: float
    entropy: float
    kl: float
    policy: float = 1.0


#: The figures of :meth:`Losses.figures`, in order.
FIGURES = ("total", "kl_bc", "entropy", "value", "surrogate", "clip_fraction", "approx_kl")


@dataclass(frozen=True)
class Losses:
    """One minibatch's loss and its parts (scalars; all but ``total`` detached).

    Attributes:
        total: what is minimised: ``policy·(surrogate − entropy_w·entropy + kl_w·kl_bc) + value_w·value``.
        surrogate: PPO's clipped surrogate loss (mean over decisions).
        value: the (clipped) value loss, ½ (V − R)², mean.
        entropy: mean entropy of π per decision (nats).
        kl_bc: mean KL(π‖π_BC) per decision (nats).
        approx_kl: mean KL estimate to the policy that collected the data, ``(r − 1) − log r``.
        clip_fraction: share of decisions whose ratio left [1 − ε, 1 + ε].
    """

    total: torch.Tensor
    surrogate: torch.Tensor
    value: torch.Tensor
    entropy: torch.Tensor
    kl_bc: torch.Tensor
    approx_kl: torch.Tensor
    clip_fraction: torch.Tensor

    def figures(self) -> torch.Tensor:
        """The :data:`FIGURES` as one detached float32 vector ``[7]`` (exchanged between ranks in one go)."""
        return torch.stack([getattr(self, name).detach().float() for name in FIGURES])


def normalise(advantages: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """Advantages centred and scaled to unit standard deviation over the minibatch (any shape)."""
    if advantages.numel() < 2:
        return advantages - advantages.mean()
    return (advantages - advantages.mean()) / (advantages.std() + eps)


def surrogate_loss(
    logp: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor, clip: float
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """PPO's clipped surrogate: ``mean(max(−A·r, −A·clip(r, 1 − ε, 1 + ε)))`` with ``r = exp(logp − old_logp)``.

    Args:
        logp, old_logp, advantages: ``[...]`` per decision (nats, nats, advantage units).

    Returns:
        ``(loss, approx_kl, clip_fraction)``, scalars; the last two detached.
    """
    log_ratio = logp - old_logp
    ratio = log_ratio.exp()
    loss = torch.max(-advantages * ratio, -advantages * ratio.clamp(1.0 - clip, 1.0 + clip)).mean()
    with torch.no_grad():
        approx_kl = ((ratio - 1.0) - log_ratio).mean()
        clipped = ((ratio - 1.0).abs() > clip).float().mean()
    return loss, approx_kl, clipped


def value_loss(values: torch.Tensor, old_values: torch.Tensor, returns: torch.Tensor, clip: float) -> torch.Tensor:
    """½ (V − R)², mean; with ``clip`` > 0 the larger of that and the loss of V moved at most ``clip`` from
    ``old_values`` (PPO2's value clipping). All ``[...]`` in return units."""
    unclipped = (values - returns) ** 2
    if clip <= 0.0:
        return 0.5 * unclipped.mean()
    moved = old_values + (values - old_values).clamp(-clip, clip)
    return 0.5 * torch.max(unclipped, (moved - returns) ** 2).mean()


def ppo_losses(
    logits: torch.Tensor,
    old_logits: torch.Tensor,
    bc_logits: torch.Tensor,
    actions: torch.Tensor,
    advantages: torch.Tensor,
    values: torch.Tensor,
    old_values: torch.Tensor,
    returns: torch.Tensor,
    weights: Weights,
) -> Losses:
    """The loss of one minibatch of ``N`` segments of ``T`` decisions.

    Args:
        logits: ``[N, T, A]`` the policy's logits now (with gradient).
        old_logits: ``[N, T, A]`` the logits of the policy that collected the segments.
        bc_logits: ``[N, T, A]`` the frozen cloned policy's logits on the same observations.
        actions: ``[N, T, A]`` 0/1, the buttons executed.
        advantages: ``[N, T]`` GAE advantages (normalised here, over the minibatch).
        values: ``[N, T]`` the value head now (with gradient).
        old_values: ``[N, T]`` the value head when the segments were collected.
        returns: ``[N, T]`` value targets.
        weights: the terms' weights.
    """
    logp = bernoulli.log_prob(logits, actions)
    old_logp = bernoulli.log_prob(old_logits, actions)
    surrogate, approx_kl, clip_fraction = surrogate_loss(logp, old_logp, normalise(advantages), weights.clip)
    ent = bernoulli.entropy(logits).mean()
    kl_bc = bernoulli.kl(logits, bc_logits).mean()
    v_loss = value_loss(values, old_values, returns, weights.value_clip)
    policy = surrogate - weights.entropy * ent + weights.kl * kl_bc
    total = weights.policy * policy + weights.value * v_loss
    return Losses(
        total=total,
        surrogate=surrogate.detach(),
        value=v_loss.detach(),
        entropy=ent.detach(),
        kl_bc=kl_bc.detach(),
        approx_kl=approx_kl,
        clip_fraction=clip_fraction,
    )


__all__ = ["FIGURES", "Losses", "Weights", "normalise", "ppo_losses", "surrogate_loss", "value_loss"]
