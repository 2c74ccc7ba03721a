"""The running return scale."""

from __future__ import annotations

import torch

from golem_rl.rewards import ReturnScale


def test_rewards_are_divided_by_the_spread_of_the_discounted_return():
    scale = ReturnScale(rows=1, gamma=0.5)
    rewards = torch.tensor([[2.0, 2.0, 2.0, 2.0]])
    dones = torch.tensor([[0.0, 1.0, 0.0, 0.0]])
    out = scale(rewards, dones)
    # returns: 2, 3 (then the episode ends), 2, 3 → mean 2.5, variance 0.25 (merged with the prior's 1e-4)
    assert abs(scale.var - 0.25) < 1e-3
    torch.testing.assert_close(out, rewards / scale.scale)
    assert (out > 0).all()  # not centred: the sign of a reward stays


def test_ranks_share_one_scale_through_reduce():
    a, b = ReturnScale(1, 0.9), ReturnScale(1, 0.9)
    ra, rb = torch.tensor([[1.0, 0.0]]), torch.tensor([[5.0, 5.0]])
    both = ReturnScale(2, 0.9)
    both(torch.cat([ra, rb]), torch.zeros(2, 2))
    moments = []

    def record(t):
        moments.append(t)
        return t

    a(ra, torch.zeros(1, 2), reduce=record)
    b(rb, torch.zeros(1, 2), reduce=lambda t: moments[0] + t)
    assert abs(b.var - both.var) < 1e-9 and abs(b.mean - both.mean) < 1e-9
