"""Scripted experts against the random baseline, in the real engine (headless)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

vzd = pytest.importorskip("vizdoom")

from golem.builtin.experts import EXPERTS, RandomPolicy  # noqa: E402
from golem.experts import Expert  # noqa: E402
from golem.profiles import BASIC  # noqa: E402
from golem.runtime.rollout import run_episode  # noqa: E402
from golem.runtime.session import Session  # noqa: E402
from golem.settings import load_settings  # noqa: E402

SETTINGS = load_settings(environ={}).settings  # the basic profile, whatever GOLEM_* says

pytestmark = pytest.mark.engine


def run_policy(scenario: str, policy: Any, seeds: list[int], max_tics: int) -> list[Any]:
    """Episode stats of ``policy`` on ``scenario`` for each seed."""
    with Session(SETTINGS, scenario=scenario, configurers=[policy]) as session:
        return [run_episode(session, policy, seed, max_steps=max_tics) for seed in seeds]


def mean(values: Iterator[float] | list[float]) -> float:
    values = list(values)
    return sum(values) / len(values)


def test_registry_names_match_scenarios() -> None:
    assert set(EXPERTS) == {
        "basic",
        "defend_the_center",
        "health_gathering",
        "take_cover",
        "my_way_home",
        "defend_the_line",
        "health_gathering_supreme",
        "predict_position",
        "deadly_corridor",
        "deathmatch",
    }
    for name, cls in EXPERTS.items():
        assert issubclass(cls, Expert)
        assert cls.name == name and name in cls.scenarios
    assert RandomPolicy not in EXPERTS.values()


def test_random_policy_is_reproducible_and_binary() -> None:
    a, b = RandomPolicy(BASIC, seed=3), RandomPolicy(BASIC, seed=3)
    draws = [a.act(None, None) for _ in range(50)]
    assert draws == [b.act(None, None) for _ in range(50)]
    assert all(len(d) == len(BASIC) and set(d) <= {0, 1} for d in draws)
    assert any(any(d) for d in draws)


@pytest.mark.slow
def test_basic_expert_beats_random() -> None:
    seeds = list(range(10))
    expert = run_policy("basic", EXPERTS["basic"](BASIC), seeds, max_tics=300)
    rand = run_policy("basic", RandomPolicy(BASIC, seed=0), seeds, max_tics=300)
    assert mean(s.episode_return for s in expert) > 70
    assert mean(s.episode_return for s in expert) > mean(s.episode_return for s in rand) + 50
    assert all(s.kills == 1 for s in expert)


@pytest.mark.slow
def test_defend_the_center_expert_beats_random() -> None:
    seeds = [0, 1, 2]
    expert = run_policy("defend_the_center", EXPERTS["defend_the_center"](BASIC), seeds, max_tics=2100)
    rand = run_policy("defend_the_center", RandomPolicy(BASIC, seed=0), seeds, max_tics=2100)
    assert mean(s.kills for s in expert) >= 18
    assert mean(s.kills for s in expert) > mean(s.kills for s in rand) + 8
    # Aimed single shots: most rounds fired kill something.
    assert sum(s.kills for s in expert) >= 0.7 * sum(s.ammo_used for s in expert)


@pytest.mark.slow
def test_health_gathering_expert_beats_random() -> None:
    seeds = [0, 1]
    expert = run_policy("health_gathering", EXPERTS["health_gathering"](BASIC), seeds, max_tics=2100)
    rand = run_policy("health_gathering", RandomPolicy(BASIC, seed=0), seeds, max_tics=2100)
    assert mean(s.tics for s in expert) >= 1500
    assert mean(s.tics for s in expert) > mean(s.tics for s in rand) + 700


@pytest.mark.slow
def test_take_cover_expert_beats_random() -> None:
    seeds = [0, 1]
    expert = run_policy("take_cover", EXPERTS["take_cover"](BASIC), seeds, max_tics=2100)
    rand = run_policy("take_cover", RandomPolicy(BASIC, seed=0), seeds, max_tics=2100)
    assert mean(s.tics for s in expert) >= 1500
    assert mean(s.tics for s in expert) > mean(s.tics for s in rand) + 700


@pytest.mark.slow
def test_my_way_home_expert_beats_random() -> None:
    seeds = list(range(5))
    expert = run_policy("my_way_home", EXPERTS["my_way_home"](BASIC), seeds, max_tics=2100)
    rand = run_policy("my_way_home", RandomPolicy(BASIC, seed=0), seeds, max_tics=2100)
    assert sum(s.exited for s in expert) >= len(seeds) - 1
    assert sum(s.exited for s in expert) >= sum(s.exited for s in rand) + 3
    assert mean(s.tics for s in expert if s.exited) < 1000


@pytest.mark.slow
def test_defend_the_line_expert_beats_random() -> None:
    seeds = [0, 1]
    expert = run_policy("defend_the_line", EXPERTS["defend_the_line"](BASIC), seeds, max_tics=1000)
    rand = run_policy("defend_the_line", RandomPolicy(BASIC, seed=0), seeds, max_tics=1000)
    assert mean(s.kills for s in expert) >= 20
    assert mean(s.kills for s in expert) > mean(s.kills for s in rand) + 8
    # Strafing clear of the fireballs: the expert is still standing at the cap.
    assert not any(s.dead for s in expert)


@pytest.mark.slow
def test_health_gathering_supreme_expert_beats_random() -> None:
    seeds = [0]
    expert = run_policy("health_gathering_supreme", EXPERTS["health_gathering_supreme"](BASIC), seeds, max_tics=900)
    rand = run_policy("health_gathering_supreme", RandomPolicy(BASIC, seed=0), seeds, max_tics=900)
    assert all(s.tics == 900 and not s.dead for s in expert)
    assert mean(s.tics for s in expert) > mean(s.tics for s in rand) + 300


@pytest.mark.slow
def test_predict_position_expert_beats_random() -> None:
    seeds = list(range(8))
    expert = run_policy("predict_position", EXPERTS["predict_position"](BASIC), seeds, max_tics=300)
    rand = run_policy("predict_position", RandomPolicy(BASIC, seed=0), seeds, max_tics=300)
    hits = sum(s.episode_return > 0 for s in expert)
    assert hits >= 6
    assert hits >= sum(s.episode_return > 0 for s in rand) + 5


@pytest.mark.slow
def test_deadly_corridor_expert_beats_random() -> None:
    seeds = [0, 1]
    expert = run_policy("deadly_corridor", EXPERTS["deadly_corridor"](BASIC), seeds, max_tics=600)
    rand = run_policy("deadly_corridor", RandomPolicy(BASIC, seed=0), seeds, max_tics=600)
    # Reaching the vest ends the episode: the expert gets there, random dies on the way.
    assert all(s.exited for s in expert)
    assert not any(s.exited for s in rand)
    assert mean(s.episode_return for s in expert) > mean(s.episode_return for s in rand) + 1000
