"""golem-rl's reward shapers honour the shaper contract; a run's shaping is their weighted sum."""

from __future__ import annotations

import pytest

from golem.errors import GolemError, UnknownComponentError
from golem.plugins import load_plugins
from golem.settings import GolemSettings
from golem.testing import assert_plugin_registers, assert_reward_shaper_contract
from golem_rl import plugin
from golem_rl.shapers import SHAPERS, Explore, Shaping, VariableChange, build_shaping


@pytest.mark.parametrize("name", sorted(SHAPERS))
def test_shapers_register_and_honour_the_contract(name):
    component = assert_plugin_registers(plugin, "reward_shapers", name)
    shaper = assert_reward_shaper_contract(component.obj)
    if isinstance(shaper, VariableChange):
        variable = shaper.variables[0]
        assert shaper({variable: 3.0}, {variable: 5.0}) == 2.0


def _at(x: float, y: float) -> dict[str, float]:
    return {"POSITION_X": x, "POSITION_Y": y}


def test_explore_pays_once_for_each_new_square_of_an_episode():
    explore = Explore()
    assert explore(_at(10, 10), _at(40, 20)) == 0.0  # still in the start's 64-unit square
    assert explore(_at(40, 20), _at(70, 20)) == 1.0  # the next square east
    assert explore(_at(70, 20), _at(30, 20)) == 0.0  # back in the start's square
    assert explore(_at(30, 20), _at(70, 30)) == 0.0  # east again: seen already
    assert explore(_at(70, 30), _at(70, -10)) == 1.0  # south of the start row (negative coordinates)


def test_a_new_episode_forgets_the_squares_it_saw():
    shaping = Shaping({"explore": (0.5, Explore())})
    assert shaping.variables == ("POSITION_X", "POSITION_Y")
    assert shaping(_at(0, 0), _at(100, 0)) == 0.5
    assert shaping(_at(100, 0), _at(100, 0)) == 0.0
    shaping.begin()
    assert shaping(_at(0, 0), _at(100, 0)) == 0.5  # paid again: another episode


def test_the_rl_section_rides_on_the_first_shaper():
    registry = load_plugins(only=["rl"]).registry
    assert registry.settings_sections()["rl"].__name__ == "RLSettings"


def test_shaping_is_the_weighted_sum():
    registry = load_plugins(only=["rl"]).registry
    shaping = build_shaping(GolemSettings(), registry, {"kills": 1.0, "health": 0.5})
    assert shaping.variables == ("HEALTH", "KILLCOUNT")
    assert shaping({"KILLCOUNT": 0, "HEALTH": 100}, {"KILLCOUNT": 2, "HEALTH": 90}) == 2.0 - 5.0
    assert not build_shaping(GolemSettings(), registry, {})


def test_an_unknown_shaper_or_variable_is_one_line():
    registry = load_plugins(only=["rl"]).registry
    with pytest.raises(UnknownComponentError, match="unknown reward shaper 'kils'"):
        build_shaping(GolemSettings(), registry, {"kils": 1.0})

    class Odd:
        variables = ("NO_SUCH_VARIABLE",)

        def __init__(self, settings):
            pass

        def __call__(self, before, after):
            return 0.0

    registry.add("reward_shapers", "odd", Odd, registry.get("reward_shapers", "kills").owner)
    with pytest.raises(GolemError, match="unknown game variable"):
        build_shaping(GolemSettings(), registry, {"odd": 1.0})


def test_the_contract_catches_an_impure_shaper():
    class Counting:
        variables = ("KILLCOUNT",)

        def __init__(self, settings):
            self.calls = 0

        def __call__(self, before, after):
            self.calls += 1
            return float(self.calls)

    with pytest.raises(AssertionError, match="pure"):
        assert_reward_shaper_contract(Counting)

    class Forgetful(Counting):
        def begin(self):  # claims to start an episode afresh, but keeps counting
            pass

    with pytest.raises(AssertionError, match="pure"):
        assert_reward_shaper_contract(Forgetful)
