"""ModelSpec: validation, cortex groups, JSON metadata, building from settings."""

from __future__ import annotations

import json

import numpy as np
import pytest

from golem import hookimpl
from golem.errors import GolemError, UnknownComponentError
from golem.learning.modelspec import ModelSpec, brain_settings
from golem.plugins import load_plugins
from golem.profiles import PROFILES
from golem.sensors import Sensor
from golem.settings import ComponentSettings, GolemSettings, section


class OpticsSettings(ComponentSettings):
    """A sensor's own settings section, as the audio sensor's ``brain.dsp``."""

    key = "brain.optics"
    focus: int = 32


class _Img(Sensor):
    dtype = np.dtype(np.uint8)

    def configure(self, game) -> None:  # pragma: no cover
        pass

    def _read(self, state):  # pragma: no cover
        return None


class Eye(_Img):
    name, key = "eye", "eyes"
    settings_model = OpticsSettings

    @property
    def shape(self):
        return (3, 16, 16)


class Far(_Img):
    name, key, joins = "far", "fars", "eye"

    @property
    def shape(self):
        return (1, 16, 16)


class Heat(_Img):
    name, key, joins = "heat", "heats", "eye"

    @property
    def shape(self):
        return (2, 16, 16)


class Odd(_Img):
    name, key, joins = "odd", "odds", "eye"

    @property
    def shape(self):
        return (1, 8, 8)


class Plugin:
    @hookimpl
    def register_sensors(self, register) -> None:
        for cls in (Eye, Far, Heat, Odd):
            register(cls.name, cls)


S = GolemSettings.model_construct()


def spec(*classes, **kw) -> ModelSpec:
    return ModelSpec(sensors=[c(S) for c in classes], n_actions=kw.pop("n_actions", 4), **kw)


def test_cortex_groups_put_joiners_under_their_owner():
    groups = spec(Far, Eye, Heat).cortex_groups()
    assert list(groups) == ["eye"]
    assert [s.name for s in groups["eye"]] == ["far", "heat"]
    assert sum(s.channels for s in groups["eye"]) == 3


@pytest.mark.parametrize(
    ("classes", "kw", "match"),
    [
        ((Far,), {}, "joins 'eye', which is not enabled"),
        ((Eye, Odd), {}, "sizes after the channel axis differ"),
        ((Eye, Eye), {}, "listed twice"),
        ((), {}, "at least one sensor"),
        ((Eye,), {"n_actions": 0}, "at least one action"),
        ((Eye,), {"action_names": ("a", "b")}, "2 action names"),
    ],
)
def test_invalid_specs(classes, kw, match):
    with pytest.raises(GolemError, match=match):
        spec(*classes, **kw)


def test_metadata_is_json_and_round_trips():
    registry = load_plugins(only=[], extra=[("eyes", Plugin())]).registry
    built_with = brain_settings("lstm", ["eye", "far"], 16, 2, "fluid", {"brain.optics": {"focus": 16}})
    original = ModelSpec(
        sensors=[Eye(built_with), Far(built_with)],
        n_actions=4,
        working_memory=16,
        model="lstm",
        profile="fluid",
        action_names=tuple("abcd"),
    )
    assert (
        original.cortical_depth == 2 and original.sensor_settings["brain.optics"]["focus"] == 16
    )  # taken from the sensors' settings
    meta = json.loads(json.dumps(original.to_metadata()))
    assert meta["sensors"] == ["eye", "far"] and meta["sensor_shapes"]["eye"] == [3, 16, 16]
    again = ModelSpec.from_metadata(meta, registry)
    assert again.to_metadata() == meta
    assert again.sensors[0].settings.brain.cortical_depth == 2
    assert section(again.sensors[0].settings, OpticsSettings).focus == 16


def test_spec_must_agree_with_its_sensors_settings():
    with pytest.raises(GolemError, match="cortical_depth=2 but the sensors were built with brain.cortical_depth=3"):
        spec(Eye, cortical_depth=2)
    with pytest.raises(GolemError, match="brain.optics"):
        spec(Eye, sensor_settings={"brain.optics": {"focus": 16}})
    same = spec(Eye, cortical_depth=3, sensor_settings={"brain.optics": {"focus": 32}})
    assert same.sensor_settings["brain.optics"] == section(S, OpticsSettings).model_dump(mode="json")


def test_from_metadata_errors():
    registry = load_plugins(only=[], extra=[("eyes", Plugin())]).registry
    meta = spec(Eye).to_metadata()
    with pytest.raises(GolemError, match="lacks n_actions"):
        ModelSpec.from_metadata({k: v for k, v in meta.items() if k != "n_actions"}, registry)
    with pytest.raises(UnknownComponentError, match="unknown sensor 'ghost'"):
        ModelSpec.from_metadata(meta | {"sensors": ["ghost"]}, registry)
    with pytest.raises(GolemError, match="newer"):
        ModelSpec.from_metadata(meta | {"format": 99}, registry)


def test_from_settings():
    registry = load_plugins(only=[], extra=[("eyes", Plugin())]).registry
    brain = {"sensors": ["eye", "heat"], "profile": "classic", "model": "lstm"}
    settings = GolemSettings.model_validate({"brain": brain})
    built = ModelSpec.from_settings(settings, registry)
    assert built.n_actions == len(PROFILES["classic"]) and built.action_names == tuple(PROFILES["classic"])
    assert built.model == "lstm" and built.sensor_names == ["eye", "heat"]
    assert built.sensor_settings["brain.optics"] == section(settings, OpticsSettings).model_dump(mode="json")


def test_brain_settings_ignore_the_environment(monkeypatch):
    monkeypatch.setenv("GOLEM_BRAIN__WORKING_MEMORY", "99")
    assert brain_settings("cfc", ["eye"], 12, 2, "basic", {}).brain.working_memory == 12
