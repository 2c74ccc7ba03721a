"""The Gymnasium environment over the real engine."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env

from golem.builtin.visual import VisualSensor
from golem.plugins import load_plugins
from golem.settings import GolemSettings
from golem_farama.env import make_vizdoom_env

REGISTRY = load_plugins().registry


def test_spaces_follow_sensors_and_profile():
    settings = GolemSettings()
    settings.brain.profile = "classic"
    env = make_vizdoom_env(settings, REGISTRY, sensors=[VisualSensor(settings)])
    assert env.observation_space == spaces.Dict({"frames": spaces.Box(0, 255, (3, 64, 64), np.uint8)})
    assert env.action_space == spaces.MultiBinary(10)
    env.close()  # never started: nothing to do


@pytest.mark.engine
def test_check_env_passes():
    settings = GolemSettings()
    env = make_vizdoom_env(settings, REGISTRY, sensors=[VisualSensor(settings)], frame_skip=4, render_mode="rgb_array")
    try:
        check_env(env, skip_render_check=True)
        obs, info = env.reset(seed=5)
        assert env.observation_space.contains(obs)
        done = False
        steps = 0
        while not done:
            obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
            done = terminated or truncated
            steps += 1
        assert steps <= 300 // 4 + 1
        assert env.render().shape == (120, 160, 3)
    finally:
        env.close()
