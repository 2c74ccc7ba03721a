"""GAE on cases computed by hand."""

from __future__ import annotations

import pytest
import torch

from golem_rl.gae import advantages


def test_one_segment_by_hand():
    # γ = 0.5, λ = 0.5; rewards 1, 2, 3; values 0.5, 1, 1.5 and the bootstrap 2; no episode end.
    rewards = torch.tensor([[1.0, 2.0, 3.0]])
    values = torch.tensor([[0.5, 1.0, 1.5, 2.0]])
    dones = torch.zeros(1, 3)
    adv, ret = advantages(rewards, values, dones, gamma=0.5, lam=0.5)
    # δ = r + γ V' − V: 1 + 0.5 − 0.5 = 1, 2 + 0.75 − 1 = 1.75, 3 + 1 − 1.5 = 2.5
    # A_2 = 2.5; A_1 = 1.75 + 0.25·2.5 = 2.375; A_0 = 1 + 0.25·2.375 = 1.59375
    torch.testing.assert_close(adv, torch.tensor([[1.59375, 2.375, 2.5]]))
    torch.testing.assert_close(ret, adv + values[:, :3])


def test_an_episode_end_cuts_the_bootstrap_and_the_trace():
    rewards = torch.tensor([[1.0, 1.0, 1.0]])
    values = torch.tensor([[10.0, 10.0, 10.0, 10.0]])
    dones = torch.tensor([[0.0, 1.0, 0.0]])  # the episode ends with the second decision
    adv, _ = advantages(rewards, values, dones, gamma=1.0, lam=1.0)
    # A_2 = 1 + 10 − 10 = 1 (a new episode, bootstrapped); A_1 = 1 − 10 = −9 (no V' after the end);
    # A_0 = (1 + 10 − 10) + A_1 = −8
    torch.testing.assert_close(adv, torch.tensor([[-8.0, -9.0, 1.0]]))


@pytest.mark.parametrize("lam", [0.0, 1.0])
def test_lambda_zero_is_td_and_one_is_monte_carlo(lam):
    g = torch.Generator().manual_seed(0)
    rewards, values = torch.randn(2, 5, generator=g), torch.randn(2, 6, generator=g)
    dones = torch.zeros(2, 5)
    adv, ret = advantages(rewards, values, dones, gamma=0.9, lam=lam)
    if lam == 0.0:
        torch.testing.assert_close(adv, rewards + 0.9 * values[:, 1:] - values[:, :5])
    else:
        expected = torch.zeros(2, 5)
        running = values[:, 5]
        for t in range(4, -1, -1):
            running = rewards[:, t] + 0.9 * running
            expected[:, t] = running
        torch.testing.assert_close(ret, expected)


def test_shapes_are_checked():
    with pytest.raises(ValueError, match="do not fit"):
        advantages(torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(2, 3), 0.9, 0.9)
