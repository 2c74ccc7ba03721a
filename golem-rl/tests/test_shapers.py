"""golem-rl's reward shapers honour the shaper contract; a run's shaping is their weighted sum."""

from __future__ import annotations

import pytest

from golem.errors import GolemError, UnknownComponentError
from golem.plugins import load_plugins
from golem.settings import GolemSettings
from golem.testing import assert_plugin_registers, assert_reward_shaper_contract
from golem_rl import plugin
from golem_rl.shapers import SHAPERS, build_shaping


@pytest.mark.parametrize("name", sorted(SHAPERS))
def test_shapers_register_and_honour_the_contract(name):
    component = assert_plugin_registers(plugin, "reward_shapers", name)
    shaper = assert_reward_shaper_contract(component.obj)
    variable = shaper.variables[0]
    assert shaper({variable: 3.0}, {variable: 5.0}) == 2.0


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
