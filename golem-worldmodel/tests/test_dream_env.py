"""DreamEnv: warm start, shapes, Gymnasium vector API, reward modes, paired noise."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
import torch

from golem.errors import GolemError
from golem_worldmodel.dream_env import DreamEnv, StartPool, dream_returns


def test_start_pool_samples_full_warmup_windows(pool, latents):
    e, t0 = pool.sample(500, np.random.default_rng(0))
    T = latents.lengths()[e]
    assert (t0 >= pool.warmup).all() and (t0 <= T - 1).all()
    assert set(np.unique(e)) <= set(pool.eligible())


def test_warm_start_uses_only_steps_before_t0(rnn, latents):
    """Changing anything at or after t0 leaves the warm-started state alone; changing t0 - 1 does not."""
    e, t0 = np.array([0]), np.array([12])
    pool = StartPool.from_latents(latents, warmup=8)
    env = DreamEnv(rnn, pool, 1)
    env.warm_start(None, e, t0)
    h_ref = env.obs_tensor()[:, rnn.z_dim :].clone()
    z_ref = env.obs_tensor()[:, : rnn.z_dim].clone()
    torch.testing.assert_close(z_ref[0], torch.from_numpy(latents.mu[12]))  # z_t0 is the posterior mean at t0
    future = latents.subset([0, 1, 2])
    future.mu[12:30] += 5.0
    future.actions[12:30] = (future.actions[12:30] + 1) % 3
    env2 = DreamEnv(rnn, StartPool.from_latents(future, warmup=8), 1)
    env2.warm_start(None, e, t0)
    torch.testing.assert_close(env2.obs_tensor()[:, rnn.z_dim :], h_ref, rtol=0, atol=0)
    past = latents.subset([0, 1, 2])
    past.mu[11] += 1.0
    env3 = DreamEnv(rnn, StartPool.from_latents(past, warmup=8), 1)
    env3.warm_start(None, e, t0)
    assert not torch.allclose(env3.obs_tensor()[:, rnn.z_dim :], h_ref)
    # And steps before the window (t0 - warmup - 1) do not matter either: it is exactly `warmup` steps.
    early = latents.subset([0, 1, 2])
    early.mu[3] += 5.0
    env4 = DreamEnv(rnn, StartPool.from_latents(early, warmup=8), 1)
    env4.warm_start(None, e, t0)
    torch.testing.assert_close(env4.obs_tensor()[:, rnn.z_dim :], h_ref, rtol=0, atol=0)


def test_vector_env_shapes_and_api(rnn, pool):
    B = 5
    env = DreamEnv(rnn, pool, B, max_steps=7)
    assert isinstance(env, gymnasium.vector.VectorEnv)
    obs, info = env.reset(seed=3)
    D = rnn.z_dim + rnn.hidden
    assert obs.shape == (B, D) and obs.dtype == np.float32
    assert env.observation_space.shape == (B, D) and env.single_observation_space.shape == (D,)
    assert env.action_space.shape == (B,)
    assert info["start_t0"].shape == (B,)
    for _ in range(10):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        assert obs.shape == (B, D) and reward.shape == (B,) and terminated.dtype == bool and truncated.shape == (B,)
        assert info["p_done"].shape == (B,)
    assert env.observation_space.contains(obs)


def test_reset_is_seeded(rnn, pool):
    a = DreamEnv(rnn, pool, 4)
    b = DreamEnv(rnn, pool, 4)
    oa, _ = a.reset(seed=1)
    ob, _ = b.reset(seed=1)
    np.testing.assert_array_equal(oa, ob)
    acts = np.array([0, 1, 2, 1])
    np.testing.assert_array_equal(a.step(acts)[0], b.step(acts)[0])


def test_truncation_and_disabled_autoreset(rnn, pool):
    env = DreamEnv(rnn, pool, 3, max_steps=4, autoreset=False)
    with torch.no_grad():
        rnn.done.bias.fill_(-50.0)  # never dies
    env.reset(seed=0)
    for _t in range(4):
        _, reward, terminated, truncated, _ = env.step(np.zeros(3, np.int64))
    assert truncated.all() and not terminated.any()
    _, reward, terminated, truncated, _ = env.step(np.zeros(3, np.int64))
    assert (reward == 0).all() and not truncated.any()  # finished dreams stay finished and earn nothing


def test_death_head_terminates_and_autoreset(rnn, pool):
    with torch.no_grad():
        rnn.done.bias.fill_(50.0)  # dies on the first step
    env = DreamEnv(rnn, pool, 4, autoreset=True)
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(np.zeros(4, np.int64))
    assert terminated.all()
    assert info["_final_obs"].all() and info["final_obs"].shape == obs.shape
    assert info["_final_info"].all() and info["final_info"]["p_done"].shape == (4,)
    assert (env._t == 0).all()  # restarted in the same step (SAME_STEP autoreset)
    out = dream_returns(
        DreamEnv(rnn, pool, 4, autoreset=False),
        lambda o, r: torch.zeros(len(o), dtype=torch.long),
        pool.sample(4, np.random.default_rng(0)),
        seed=0,
    )
    np.testing.assert_array_equal(out["steps"], 1)  # survival counts the step it dies in
    np.testing.assert_array_equal(out["return"], 1.0)


def test_reward_modes(rnn, pool):
    with torch.no_grad():
        rnn.done.bias.fill_(-50.0)
        rnn.reward.weight.zero_()
        rnn.reward.bias.fill_(0.25)
    got = {}
    for mode in ("predicted", "survival", "mix"):
        env = DreamEnv(rnn, pool, 2, reward_mode=mode, reward_lambda=2.0)
        env.reset(seed=0)
        got[mode] = env.step(np.zeros(2, np.int64))[1]
    np.testing.assert_allclose(got["predicted"], 0.25)
    np.testing.assert_allclose(got["survival"], 1.0)
    np.testing.assert_allclose(got["mix"], 1.5)
    with pytest.raises(GolemError):
        DreamEnv(rnn, pool, 2, reward_mode="hit")


def test_noise_period_pairs_candidates(rnn, pool):
    """With noise_period R, dream r of every candidate sees the same start and the same noise."""
    P, R = 3, 2
    env = DreamEnv(rnn, pool, P * R, temperature=1.0, noise_period=R, autoreset=False, max_steps=20)
    e, t0 = pool.sample(R, np.random.default_rng(0))
    out = dream_returns(
        env, lambda o, r: torch.ones(len(o), dtype=torch.long), (np.tile(e, P), np.tile(t0, P)), seed=5, record=True
    )
    z = out["z"]  # [T + 1, P * R, Z]
    for p in range(1, P):
        np.testing.assert_allclose(z[:, p * R : (p + 1) * R], z[:, :R], atol=1e-6)


def test_stepping_a_subset_of_rows_matches_the_full_step(rnn, pool):
    """dream_returns steps only the dreams still running; their draws must not depend on the others."""
    starts = pool.sample(6, np.random.default_rng(2))
    full = DreamEnv(rnn, pool, 6, autoreset=False)
    part = DreamEnv(rnn, pool, 6, autoreset=False)
    for env in (full, part):
        env._gen.manual_seed(9)
        env.warm_start(None, *starts)
    acts = torch.tensor([0, 1, 2, 0, 1, 2])
    rows = torch.tensor([1, 4, 5])
    r_full, p_full, _, _ = full.step_tensor(acts)
    r_part, p_part, _, _ = part.step_tensor(acts[rows], rows=rows)
    torch.testing.assert_close(p_part, p_full[rows])
    torch.testing.assert_close(part.obs_tensor(rows), full.obs_tensor(rows))
    untouched = torch.tensor([0, 2, 3])
    assert (part._t[untouched] == 0).all() and (part._t[rows] == 1).all()


def test_out_of_range_actions_are_one_line_errors(rnn, pool):
    from golem.errors import GolemError

    env = DreamEnv(rnn, pool, 3)
    env.reset(seed=0)
    for bad in (np.array([0, 1, 3]), np.array([-1, 0, 0]), np.zeros(2, np.int64), np.array([0.5, 0, 0])):
        with pytest.raises(GolemError, match="dream actions must be 3 integers in 0..2"):
            env.step(bad)
    env.step(np.array([0, 1, 2]))  # the whole action space is fine


def _member(seed: int, done_bias: float | None = None):
    from golem_worldmodel.actions import N_ACTIONS
    from golem_worldmodel.mdnrnn import MDNRNN

    torch.manual_seed(seed)
    m = MDNRNN(6, N_ACTIONS, hidden=16, gaussians=3).eval()
    if done_bias is not None:
        with torch.no_grad():
            m.done.weight.zero_()
            m.done.bias.fill_(done_bias)
    return m


def test_ensemble_death_rules(rnn, pool):
    """One member that sees a death at once: ``max`` ends every dream on the first step, ``drawn`` about half."""
    with torch.no_grad():
        rnn.done.weight.zero_()
        rnn.done.bias.fill_(-50.0)  # member 0 never dies
    killer = _member(1, done_bias=50.0)
    starts = pool.sample(400, np.random.default_rng(0))
    still = lambda o, r: torch.zeros(len(o), dtype=torch.long)  # noqa: E731
    alone = dream_returns(DreamEnv(rnn, pool, 400, autoreset=False, max_steps=5), still, starts, seed=0)
    np.testing.assert_array_equal(alone["steps"], 5)
    worst = dream_returns(
        DreamEnv(rnn, pool, 400, autoreset=False, max_steps=5, members=[killer], death="max"), still, starts, seed=0
    )
    np.testing.assert_array_equal(worst["steps"], 1)
    drawn = dream_returns(
        DreamEnv(rnn, pool, 400, autoreset=False, max_steps=5, members=[killer], death="drawn"), still, starts, seed=0
    )
    first = (drawn["steps"] == 1).mean()
    assert 0.4 < first < 0.6, first  # the killer is drawn on half the first steps
    assert set(np.unique(drawn["steps"])) <= {1, 2, 3, 4, 5} and (drawn["steps"] == 5).any()


def test_ensemble_draws_next_latent_from_members_and_reads_member_zero(rnn, pool):
    """Next latents come from a drawn member (not member 0 alone); the controller reads member 0's ``h``."""
    other = _member(7)
    starts = pool.sample(64, np.random.default_rng(1))
    lone = DreamEnv(rnn, pool, 64, autoreset=False, temperature=1e-6)
    duo = DreamEnv(rnn, pool, 64, autoreset=False, temperature=1e-6, members=[other], death="drawn")
    for env in (lone, duo):
        env._gen.manual_seed(3)
        env.warm_start(None, *starts)
    torch.testing.assert_close(
        duo.obs_tensor(), lone.obs_tensor()
    )  # member 0's warm-up state is the controller's input
    acts = torch.zeros(64, dtype=torch.long)
    lone.step_tensor(acts)
    duo.step_tensor(acts)
    same = torch.isclose(duo._z, lone._z, atol=1e-5).all(-1)
    assert 0 < int(same.sum()) < 64  # some dreams drew member 0's next latent, the others member 1's
    torch.testing.assert_close(duo.obs_tensor()[:, rnn.z_dim :], lone.obs_tensor()[:, rnn.z_dim :])
    rows = torch.tensor([0, 5, 9])  # a subset steps like the full batch (members' states included)
    part = DreamEnv(rnn, pool, 64, autoreset=False, temperature=1e-6, members=[other], death="drawn")
    part._gen.manual_seed(3)
    part.warm_start(None, *starts)
    part.step_tensor(acts[rows], rows=rows)
    torch.testing.assert_close(part._z[rows], duo._z[rows])
    torch.testing.assert_close(part._member_states[0][0][:, rows], duo._member_states[0][0][:, rows])


def test_ensemble_members_must_fit(rnn, pool):
    from golem_worldmodel.actions import N_ACTIONS
    from golem_worldmodel.mdnrnn import MDNRNN

    with pytest.raises(GolemError, match="ensemble member 1 has z 5"):
        DreamEnv(rnn, pool, 2, members=[MDNRNN(5, N_ACTIONS, hidden=16, gaussians=3)])
    with pytest.raises(GolemError, match="ensemble death must be one of max, drawn"):
        DreamEnv(rnn, pool, 2, members=[_member(2)], death="mean")


def test_each_row_gets_the_heads_of_its_drawn_member():
    """Only the drawn member's heads are computed for a row; they equal that member's :meth:`MDNRNN.heads`."""
    from golem_worldmodel.dream_env import _drawn_heads

    models = [_member(s) for s in (1, 2, 3)]
    outs = [torch.randn(40, 16, generator=torch.Generator().manual_seed(s)) for s in range(3)]
    pick = torch.tensor([0, 1, 2, 2] * 10)
    pick[:5] = 1  # member 0 drawn on fewer rows; every member on some
    got = _drawn_heads(models, outs, pick)
    full = [m.heads(o) for m, o in zip(models, outs, strict=True)]
    for key in ("logit_pi", "mu", "log_sigma", "reward", "done_logit"):
        want = torch.stack([full[int(k)][key][row] for row, k in enumerate(pick)])
        torch.testing.assert_close(got[key], want)
    none_drawn = _drawn_heads(models, outs, torch.ones(40, dtype=torch.long))  # a member no row drew
    torch.testing.assert_close(none_drawn["mu"], full[1]["mu"])
