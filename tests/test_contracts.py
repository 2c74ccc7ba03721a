"""Every registration hook has a contract: each installed component of each category must pass it.

These run the same `golem.testing` helpers that plugin authors call, against
whatever the real entry points registered, so a new plugin distribution in
the workspace is checked without writing a test for it here.
"""

from __future__ import annotations

import pytest
from gymnasium.utils.env_checker import check_env

from golem.learning.modelspec import ModelSpec
from golem.plugins import load_plugins
from golem.settings import load_settings
from golem.testing import (
    assert_augmentation_contract,
    assert_expert_contract,
    assert_loss_contract,
    assert_model_contract,
    assert_sensor_contract,
)

HOST = load_plugins()
REGISTRY = HOST.registry


def _names(category: str) -> list[str]:
    return REGISTRY.names(category)


def test_all_workspace_plugins_load_cleanly():
    assert not HOST.broken, [(p.name, p.error) for p in HOST.broken]
    expected = {
        "sensors": {"visual", "depth", "thermal", "audio"},
        "models": {"cfc", "lstm"},
        "losses": {"bce", "focal", "asymmetric", "smooth"},
        "samplers": {"stateful"},
        "augmentations": {"mirror", "shift", "colour", "cutout", "conv"},
        "experts": {"basic", "defend_the_center", "health_gathering", "take_cover", "my_way_home"},
        "environments": {"vizdoom"},
    }
    for category, names in expected.items():
        assert names <= set(_names(category)), (category, _names(category))


@pytest.mark.engine
@pytest.mark.parametrize("name", _names("sensors"))
def test_sensor_contract(name: str):
    assert_sensor_contract(REGISTRY.get("sensors", name).obj, engine=True, tics=4)


@pytest.mark.parametrize("name", _names("losses"))
def test_loss_contract(name: str):
    assert_loss_contract(REGISTRY.get("losses", name).obj)


@pytest.mark.parametrize("name", _names("models"))
@pytest.mark.parametrize("sensors", [["visual"], ["visual", "depth", "thermal", "audio"]])
def test_model_contract(name: str, sensors: list[str]):
    settings = load_settings(
        overrides=[("test", {"brain.sensors": sensors, "brain.working_memory": 16, "brain.model": name})], environ={}
    ).settings
    spec = ModelSpec.from_settings(settings, REGISTRY)
    assert_model_contract(REGISTRY.get("models", name).obj, spec, batch=2, steps=3)


@pytest.mark.engine
@pytest.mark.parametrize(
    "name", [n for n in _names("experts") if not getattr(REGISTRY.get("experts", n).obj, "needs_run", False)]
)
def test_expert_contract(name: str, tmp_path):
    cls = REGISTRY.get("experts", name).obj
    scenario = None
    if getattr(cls, "procedural", False):  # plays generated maps: give it one (phase 2: doors, stairs, monsters)
        generator = REGISTRY.get("map_generators", "builtin").obj(load_settings(environ={}).settings)
        scenario = str(generator.build(generator.sample(2, 0).as_dict(), 0, tmp_path / "map.wad").config)
    assert_expert_contract(cls, tics=32, scenario=scenario)


@pytest.mark.engine
@pytest.mark.parametrize("name", ["vizdoom"])
def test_environment_contract(name: str):
    """The real engine's env passes gymnasium's checker (the dream env needs a trained world
    model; golem-worldmodel's own tests check it on a tiny one)."""
    settings = load_settings(environ={}).settings
    env = REGISTRY.get("environments", name).obj(settings, REGISTRY)
    try:
        check_env(env, skip_render_check=True)
    finally:
        env.close()


@pytest.mark.parametrize("name", _names("samplers"))
def test_sampler_contract(name: str, tmp_path):
    from golem.testing import assert_sampler_contract

    assert_sampler_contract(REGISTRY.get("samplers", name).obj, tmp_path)


@pytest.mark.parametrize("name", _names("augmentations"))
def test_augmentation_contract(name: str):
    assert_augmentation_contract(REGISTRY.get("augmentations", name).obj)


def test_a_specs_default_sensors_join_the_chosen_ones_only_where_the_user_chose_none():
    from golem.sensors import with_default_sensors

    settings = load_settings(environ={}).settings
    out, added, missing = with_default_sensors(settings, REGISTRY, ("automap", "nonesuch", "visual"), set())
    assert out.brain.sensors == ["visual", "automap"] and added == ["automap"] and missing == ["nonesuch"]
    assert settings.brain.sensors == ["visual"]  # the settings given are not changed
    same, added, missing = with_default_sensors(settings, REGISTRY, ("automap",), {"brain.sensors"})
    assert same is settings and added == [] and missing == []
