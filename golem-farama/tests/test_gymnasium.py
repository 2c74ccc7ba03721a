"""Golem's environment through Gymnasium's own registry: ``gymnasium.make("Golem/<scenario>-v0")``."""

from __future__ import annotations

import math
import subprocess
import sys
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env

import golem_farama  # noqa: F401  (registers the Golem/ ids)
from golem.errors import GolemError
from golem.scenarios import known_scenarios, scenario_spec
from golem_farama.env import ScenarioEnv
from golem_farama.registration import env_id, register_envs, scenario_tic_limit, shipped_scenarios


def test_one_id_per_shipped_scenario_with_its_step_limit():
    ids = register_envs()
    assert ids == [env_id(name) for name in shipped_scenarios()]
    # every .cfg ViZDoom ships, except the two maps that only start inside a network game
    assert sorted(set(known_scenarios()) - set(shipped_scenarios())) == ["cig", "multi_duel"]
    for name in shipped_scenarios():
        spec = gymnasium.spec(env_id(name))
        assert spec.entry_point == "golem_farama.env:ScenarioEnv"
        assert spec.kwargs == {"scenario": name, "frame_skip": scenario_spec(name).frame_skip}
        tics = scenario_tic_limit(name)
        assert spec.max_episode_steps == (None if tics is None else math.ceil(tics / scenario_spec(name).frame_skip))
    # the .cfg's own time-out (2,100 tics) at the spec's frame skip 4
    assert gymnasium.spec("Golem/defend_the_center-v0").max_episode_steps == 525
    # no time-out in the .cfg: the spec's max_steps (2,100 tics) at frame skip 4
    assert scenario_tic_limit("take_cover") == 2100
    assert gymnasium.spec("Golem/take_cover-v0").max_episode_steps == 525


def test_make_builds_spaces_from_kwargs_without_starting_the_engine():
    env = gymnasium.make("Golem/defend_the_center-v0", sensors=["visual", "depth"], frame_skip=2, profile="classic")
    try:
        assert env.spec.max_episode_steps == 525
        assert env.unwrapped.frame_skip == 2
        assert env.observation_space == spaces.Dict(
            {
                "frames": spaces.Box(0, 255, (3, 64, 64), np.uint8),
                "depths": spaces.Box(0, 255, (1, 64, 64), np.uint8),
            }
        )
        assert env.action_space == spaces.MultiBinary(10)
        assert env.unwrapped._session is None  # the engine starts on the first reset
    finally:
        env.close()


def test_bad_kwargs_fail_with_one_line():
    with pytest.raises(GolemError, match="unknown sensor 'sonar'"):
        gymnasium.make("Golem/basic-v0", sensors=["sonar"])
    with pytest.raises(GolemError, match="frame_skip must be at least 1"):
        ScenarioEnv("basic", frame_skip=0)


@pytest.mark.slow
def test_a_fresh_interpreter_finds_the_ids():
    code = (
        "import gymnasium\n"
        "env = gymnasium.make('golem_farama:Golem/defend_the_center-v0')\n"  # Gymnasium imports golem_farama
        "print(env.spec.id, env.spec.max_episode_steps, env.unwrapped.frame_skip)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["Golem/defend_the_center-v0", "525", "4"]


@pytest.mark.slow
def test_loading_the_plugins_registers_the_ids():
    """What ``import golem`` did before the environment left the core: any Golem program that loads its plugins."""
    code = (
        "import gymnasium\n"
        "from golem.plugins import load_plugins\n"
        "assert 'Golem/basic-v0' not in gymnasium.registry\n"
        "load_plugins()\n"
        "print(gymnasium.spec('Golem/basic-v0').entry_point)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["golem_farama.env:ScenarioEnv"]


@pytest.mark.engine
def test_check_env_on_the_registered_env():
    env = gymnasium.make("Golem/defend_the_center-v0", sensors=["visual"], frame_skip=4)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the checker's note that make() wraps the env
            check_env(env, skip_render_check=True)
        check_env(env.unwrapped, skip_render_check=True)
        obs, info = env.reset(seed=3)
        assert env.observation_space.contains(obs)
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        assert env.observation_space.contains(obs) and isinstance(reward, float)
    finally:
        env.close()


@pytest.mark.engine
@pytest.mark.parametrize("frame_skip", [1, 4])
def test_tic_limit_truncates_at_any_frame_skip(frame_skip: int):
    # take_cover has no time-out of its own: the env sets one in the engine, in tics
    env = gymnasium.make("Golem/take_cover-v0", frame_skip=frame_skip, max_tics=40, max_episode_steps=-1)
    try:
        env.reset(seed=1)
        steps, terminated, truncated = 0, False, False
        while not (terminated or truncated) and steps < 1000:
            _, _, terminated, truncated, info = env.step(np.zeros(env.action_space.n, np.int8))
            steps += 1
        assert truncated and not terminated and not info["player_dead"]
        assert steps == math.ceil(40 / frame_skip)
    finally:
        env.close()


@pytest.mark.engine
@pytest.mark.slow
def test_async_vector_env_over_the_registered_id():
    envs = gymnasium.make_vec("Golem/basic-v0", num_envs=2, vectorization_mode="async", frame_skip=4)
    try:
        assert envs.single_observation_space == spaces.Dict({"frames": spaces.Box(0, 255, (3, 64, 64), np.uint8)})
        envs.reset_async(seed=[11, 12])
        obs, _ = envs.reset_wait(timeout=120)
        assert obs["frames"].shape == (2, 3, 64, 64) and obs["frames"].dtype == np.uint8
        for _ in range(40):  # basic lasts at most 300 tics = 75 steps at frame skip 4
            envs.step_async(envs.action_space.sample())
            obs, rewards, terminated, truncated, _ = envs.step_wait(timeout=60)
            assert obs["frames"].shape == (2, 3, 64, 64) and rewards.shape == (2,)
            assert envs.observation_space.contains(obs)
        assert np.isfinite(rewards).all()
    finally:
        envs.close(terminate=True)


@pytest.mark.engine
def test_the_step_that_ends_an_episode_returns_new_observation_arrays():
    # the engine has no state after the last tic; the sensors repeat their last value, in a new array
    env = gymnasium.make("Golem/take_cover-v0", sensors=["visual", "depth"], frame_skip=4, max_tics=8)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # Gymnasium's passive checker warns when two steps share an object
            first, _ = env.reset(seed=1)
            second, *_ = env.step(np.zeros(env.action_space.n, np.int8))
            last, _, terminated, truncated, _ = env.step(np.zeros(env.action_space.n, np.int8))
        assert truncated and not terminated
        for key in first:
            assert not np.shares_memory(second[key], last[key]) and not np.shares_memory(first[key], second[key])
            np.testing.assert_array_equal(last[key], second[key])  # the repeated value
    finally:
        env.close()
