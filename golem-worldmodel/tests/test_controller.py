"""The timing convention: the dream and the real runner feed the controller the same inputs."""

from __future__ import annotations

import numpy as np
import torch

from golem_worldmodel.controller import LinearController, act_population, n_params, steer_to_action
from golem_worldmodel.dream_env import DreamEnv, StartPool
from golem_worldmodel.real_runner import RealRecurrence


def test_dream_and_real_timing_agree(rnn, latents):
    """On the same latents and actions, the dream's obs_t and the real runner's obs_t are identical.

    The real runner starts an episode at h_pre_0 = 0 and encodes each frame; the
    dream is warm-started at t0 with warmup = t0 (so its teacher-forced window
    is the whole history 0..t0-1) and then teacher-forced with the same latents.
    From t0 on, both must hand the controller exactly [z_t, h_pre_t].
    """
    ep = latents.episode(0)
    z_all, a_all = torch.from_numpy(ep["mu"]), torch.from_numpy(ep["actions"])
    T, t0 = len(a_all), 5
    # The real runner's recurrence over the whole episode.
    real = RealRecurrence(rnn)
    real_obs = []
    for t in range(T):
        real_obs.append(real.observe(z_all[t : t + 1]).clone())
        real.advance(a_all[t : t + 1])
    # The dream, warm-started at (episode 0, t0) with warmup t0, teacher-forced afterwards.
    pool = StartPool.from_latents(latents, warmup=t0)
    env = DreamEnv(rnn, pool, 1, autoreset=False, max_steps=T)
    env.warm_start(None, np.array([0]), np.array([t0]))
    for t in range(t0, T - 1):
        dream_obs = env.obs_tensor()
        torch.testing.assert_close(dream_obs, real_obs[t], rtol=0, atol=1e-6)
        env.step_tensor(a_all[t : t + 1], z_next=z_all[t + 1 : t + 2])
    # And the controller, fed those inputs, takes the same actions.
    c = LinearController(
        np.random.default_rng(0).standard_normal(n_params(rnn.z_dim, rnn.hidden)), rnn.z_dim, rnn.hidden
    )
    assert c(env.obs_tensor()).tolist() == c(real_obs[T - 1]).tolist()


def test_h_pre_does_not_see_the_current_latent(rnn):
    """obs_t = [z_t, h_pre_t]: changing z_t changes the z part only, never h_pre_t."""
    rec = RealRecurrence(rnn)
    z = torch.randn(3, rnn.z_dim)
    rec.observe(z[0:1])
    rec.advance(torch.tensor([1]))
    a = rec.observe(z[1:2]).clone()
    b = rec.observe(z[2:3]).clone()
    torch.testing.assert_close(a[:, rnn.z_dim :], b[:, rnn.z_dim :])
    assert not torch.equal(a[:, : rnn.z_dim], b[:, : rnn.z_dim])


def test_population_acts_candidate_major(rnn):
    P, R, D = 3, 2, rnn.z_dim + rnn.hidden
    params = torch.randn(P, D + 1)
    obs = torch.randn(P * R, D)
    got = act_population(params, obs)
    for p in range(P):
        c = LinearController(params[p].numpy(), rnn.z_dim, rnn.hidden)
        assert got[p * R : (p + 1) * R].tolist() == c(obs[p * R : (p + 1) * R]).tolist()


def test_steering_thresholds():
    s = torch.tensor([-0.9, -0.2, 0.0, 0.2, 0.9])
    assert steer_to_action(s).tolist() == [1, 0, 0, 0, 2]


def test_the_gate_wants_every_held_action_and_the_controller_within_the_bound():
    from golem_worldmodel.calibration import honest

    def rows(**ratios: float) -> dict:
        return {k: {"dream": [0.0, 0.0], "real": [0.0, 0.0], "ratio": v} for k, v in ratios.items()}

    assert honest(rows(noop=1.2, left=0.8, right=1.5, controller=1.0, random=9.0))  # random is not gated
    assert not honest(rows(noop=1.2, left=0.8, right=1.6, controller=1.0))  # a held action the dream overrates
    assert not honest(rows(noop=1.0, left=1.0, right=1.0, controller=0.6))  # 1 / 0.6 > 1.5: too harsh as well
    assert not honest(rows(noop=1.0, left=float("nan"), right=1.0))
    assert not honest({})
    assert honest(rows(noop=1.9, left=1.0, right=1.0), bound=2.0)


def test_a_round_is_kept_only_when_not_worse_than_the_last_kept_one():
    from golem_worldmodel.rounds import keeps

    assert keeps([], 10.0)  # round 0
    history = [{"kept": True, "real_mean": 500.0}, {"kept": False, "real_mean": 300.0}]
    assert not keeps(history, 499.0)
    assert keeps(history, 500.0)  # compared with the last *kept* round, not the last round
    assert keeps(history + [{"kept": True, "real_mean": 700.0}], 700.0)
    assert not keeps(history + [{"kept": True, "real_mean": 700.0}], 650.0)
