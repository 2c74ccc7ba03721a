"""The action distribution and PPO's losses on cases computed by hand."""

from __future__ import annotations

import math

import torch

from golem_rl import bernoulli
from golem_rl.ppo import FIGURES, Weights, normalise, ppo_losses, surrogate_loss, value_loss


def test_bernoulli_log_prob_entropy_kl_by_hand():
    logits = torch.tensor([[0.0, math.log(3.0)]])  # p = 0.5 and 0.75
    actions = torch.tensor([[1.0, 0.0]])
    torch.testing.assert_close(bernoulli.log_prob(logits, actions), torch.tensor([math.log(0.5) + math.log(0.25)]))
    h = -(0.5 * math.log(0.5) * 2) - (0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    torch.testing.assert_close(bernoulli.entropy(logits), torch.tensor([h]))
    other = torch.tensor([[math.log(3.0), 0.0]])  # q = 0.75 and 0.5
    kl = (0.5 * math.log(0.5 / 0.75) + 0.5 * math.log(0.5 / 0.25)) + (
        0.75 * math.log(0.75 / 0.5) + 0.25 * math.log(0.25 / 0.5)
    )
    torch.testing.assert_close(bernoulli.kl(logits, other), torch.tensor([kl]))


def test_kl_of_equal_logits_is_exactly_zero_and_finite_at_extremes():
    logits = torch.randn(4, 7, 8) * 5
    assert (bernoulli.kl(logits, logits.clone()) == 0).all()
    huge = torch.tensor([[100.0, -100.0]])
    assert torch.isfinite(bernoulli.kl(huge, -huge)).all()
    assert torch.isfinite(bernoulli.log_prob(huge, torch.tensor([[0.0, 1.0]]))).all()


def test_sampling_follows_the_probabilities():
    logits = torch.tensor([[-100.0, 100.0, 0.0]])
    assert bernoulli.sample(logits, torch.tensor([[0.0, 0.999, 0.4]])).tolist() == [[0, 1, 1]]
    assert bernoulli.sample(logits, torch.tensor([[0.0, 0.999, 0.6]])).tolist() == [[0, 1, 0]]


def test_surrogate_clips_by_hand():
    old = torch.zeros(3)
    logp = torch.log(torch.tensor([1.5, 0.5, 1.1]))  # ratios 1.5, 0.5, 1.1
    adv = torch.tensor([1.0, 1.0, -2.0])
    loss, approx_kl, clipped = surrogate_loss(logp, old, adv, clip=0.2)
    # max(−A r, −A clip(r)): −min(1.5, 1.2) = −1.2; −min(0.5, 0.8) = −0.5; 2·max(1.1, 1.1) = 2.2
    torch.testing.assert_close(loss, torch.tensor((-1.2 - 0.5 + 2.2) / 3))
    torch.testing.assert_close(clipped, torch.tensor(2 / 3))
    expected_kl = sum((r - 1) - math.log(r) for r in (1.5, 0.5, 1.1)) / 3
    torch.testing.assert_close(approx_kl, torch.tensor(expected_kl))


def test_value_loss_clips_by_hand():
    values, old, returns = torch.tensor([2.0, 0.0]), torch.tensor([1.0, 0.0]), torch.tensor([3.0, 1.0])
    # unclipped (2−3)² = 1 and (0−1)² = 1; clipped 1 + clamp(1, ±0.5) = 1.5 → (1.5−3)² = 2.25
    torch.testing.assert_close(value_loss(values, old, returns, 0.5), torch.tensor(0.5 * (2.25 + 1.0) / 2))
    torch.testing.assert_close(value_loss(values, old, returns, 0.0), torch.tensor(0.5 * (1.0 + 1.0) / 2))


def test_normalise():
    adv = normalise(torch.tensor([1.0, 2.0, 3.0]))
    torch.testing.assert_close(adv.mean(), torch.tensor(0.0))
    torch.testing.assert_close(adv.std(), torch.tensor(1.0), atol=1e-6, rtol=0)


def test_the_loss_adds_its_weighted_terms():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 3, 4, generator=g).requires_grad_(True)
    old = logits.detach()
    bc = torch.randn(2, 3, 4, generator=g)
    actions = (torch.rand(2, 3, 4, generator=g) < 0.5).float()
    adv, values, returns = (
        torch.randn(2, 3, generator=g),
        torch.randn(2, 3, generator=g),
        torch.randn(2, 3, generator=g),
    )
    w = Weights(clip=0.2, value_clip=0.0, value=0.5, entropy=0.01, kl=0.3)
    out = ppo_losses(logits, old, bc, actions, adv, values, values.detach(), returns, w)
    # at the collecting policy the ratio is 1: the surrogate is −mean(normalised A) = 0
    torch.testing.assert_close(out.surrogate, torch.tensor(0.0), atol=1e-6, rtol=0)
    assert float(out.clip_fraction) == 0.0 and abs(float(out.approx_kl)) < 1e-7
    expected = out.surrogate - 0.01 * out.entropy + 0.3 * out.kl_bc + 0.5 * out.value
    torch.testing.assert_close(out.total.detach(), expected)
    out.total.backward()
    assert logits.grad is not None and torch.isfinite(logits.grad).all()
    assert out.figures().shape == (len(FIGURES),)
    frozen = ppo_losses(
        logits, old, bc, actions, adv, values, values.detach(), returns, Weights(0.2, 0, 0.5, 0.01, 0.3, 0)
    )
    torch.testing.assert_close(frozen.total.detach(), 0.5 * frozen.value)
