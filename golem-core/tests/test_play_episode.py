"""The :class:`Recorder` reads the sensors on a helper thread: same arrays as reading them in line, errors surface."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from golem.runtime.rollout import run_episode
from golem.sensors import Sensor
from golem.settings import GolemSettings
from golem.workflows.recording import Recorder, episode_counters


class TicSensor(Sensor):
    """Stores the tic number; every third tic its buffer is missing (the held value repeats)."""

    name = "tic"
    key = "tics"
    dtype = np.dtype(np.int32)

    @property
    def shape(self) -> tuple[int, ...]:
        return (2,)

    def configure(self, game: Any) -> None:
        pass

    def _read(self, state: Any) -> np.ndarray | None:
        if state.tic % 3 == 2:
            return None
        return np.array([state.tic, state.tic * 2], dtype=np.int32)


class FailingSensor(TicSensor):
    name = "failing"
    key = "failing"

    def _read(self, state: Any) -> np.ndarray | None:
        if state.tic == 5:
            raise RuntimeError("sensor broke at tic 5")
        return super()._read(state)


class FakeGame:
    """Enough of ``vizdoom.DoomGame`` for ``run_episode``: ``length`` tics, reward = tic number."""

    def __init__(self, length: int, timeout: int = 0) -> None:
        self.length, self.timeout, self.tic = length, timeout, 0

    def get_episode_timeout(self) -> int:
        return self.timeout

    def new_episode(self) -> None:
        self.tic = 0

    def is_episode_finished(self) -> bool:
        return self.tic >= self.length

    def get_state(self) -> SimpleNamespace:
        return SimpleNamespace(tic=self.tic)

    def make_action(self, action: list[int], tics: int = 1) -> float:
        self.tic += tics
        return float(self.tic)

    def get_game_variable(self, variable: Any) -> float:
        return 0.0

    def get_total_reward(self) -> float:
        return float(sum(range(1, self.tic + 1)))

    def get_episode_time(self) -> int:
        return self.tic

    def is_player_dead(self) -> bool:
        return False


class FakeSession:
    def __init__(self, sensors: list[Sensor], length: int, timeout: int = 0) -> None:
        self.sensors = tuple(sensors)
        self.game = FakeGame(length, timeout)

    def new_episode(self, seed: int | None = None) -> None:
        self.game.new_episode()
        for sensor in self.sensors:
            sensor.reset()

    def act(self, action: list[int], tics: int = 1) -> float:
        return self.game.make_action(action, tics)


def policy(game: FakeGame, state: SimpleNamespace) -> list[int]:
    return [state.tic % 2, 1]


class FunctionPolicy:
    """A policy from an ``act(game, state)`` function."""

    def __init__(self, act: Any) -> None:
        self.act = act

    def reset(self, game: Any) -> None:
        pass


def play_episode(session: FakeSession, seed: int, act: Any, max_steps: int | None = None):
    """One recorded episode through the rollout loop: ``(arrays, counters)``."""
    recorder = Recorder(max_steps)
    result = run_episode(session, FunctionPolicy(act), seed, max_steps=max_steps, observers=[recorder])
    return recorder.arrays, episode_counters(result)


def in_line(length: int) -> np.ndarray:
    """What reading the sensor before each action gives."""
    sensor = TicSensor(GolemSettings())
    return np.stack([sensor.extract(SimpleNamespace(tic=t)) for t in range(length)])


@pytest.mark.parametrize(
    ("length", "max_steps", "timeout"),
    [(200, None, 0), (50, 20, 0), (1, None, 0), (1024, None, 0), (3000, None, 0), (600, None, 600), (900, 513, 2100)],
)
def test_arrays_equal_reading_in_line(length, max_steps, timeout):
    session = FakeSession([TicSensor(GolemSettings())], length, timeout)
    arrays, counters = play_episode(session, seed=0, act=policy, max_steps=max_steps)
    steps = min(length, max_steps or length)
    assert arrays["tics"].dtype == np.int32 and arrays["tics"].flags.c_contiguous
    assert np.array_equal(arrays["tics"], in_line(length)[:steps])
    assert np.array_equal(arrays["actions"], [[t % 2, 1] for t in range(steps)])
    assert np.array_equal(arrays["rewards"], np.arange(1, steps + 1, dtype=np.float32))
    assert counters["tics"] == steps
    # the next episode starts from a reset sensor
    again, _ = play_episode(session, seed=1, act=policy, max_steps=max_steps)
    assert np.array_equal(again["tics"], arrays["tics"])


def test_sensor_error_is_raised_and_the_thread_ends():
    before = threading.active_count()
    session = FakeSession([TicSensor(GolemSettings()), FailingSensor(GolemSettings())], 1000)
    with pytest.raises(RuntimeError, match="tic 5"):
        play_episode(session, seed=0, act=policy)
    assert session.game.tic < 1000  # stopped early
    assert threading.active_count() == before


def test_policy_error_ends_the_thread():
    before = threading.active_count()

    def broken(game: FakeGame, state: SimpleNamespace) -> list[int]:
        if state.tic == 7:
            raise ValueError("policy broke")
        return [0, 0]

    with pytest.raises(ValueError, match="policy broke"):
        play_episode(FakeSession([TicSensor(GolemSettings())], 100), seed=0, act=broken)
    assert threading.active_count() == before


def test_ctrl_c_while_the_sensor_thread_starts_stays_an_interrupt(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C that lands inside ``begin``'s ``Thread.start`` reaches the caller as the interrupt it is: closing the
    recorder must not replace it with ``cannot join thread before it is started`` (exit 1 instead of 130)."""

    def interrupted(self: threading.Thread) -> None:
        raise KeyboardInterrupt  # the signal arrived before the new thread ran

    monkeypatch.setattr(threading.Thread, "start", interrupted)
    session = SimpleNamespace(game=SimpleNamespace(get_episode_timeout=lambda: 100), sensors=[])
    recorder = Recorder()
    with pytest.raises(KeyboardInterrupt):
        try:
            recorder.begin(session, 0)  # type: ignore[arg-type]
        finally:
            recorder.close()  # what run_episode's finally does
