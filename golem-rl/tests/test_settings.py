"""The ``rl`` section: validated like every component's, one line for a bad value."""

from __future__ import annotations

import pytest

from golem.errors import SettingsError
from golem.plugins import load_plugins
from golem.settings import load_settings, section
from golem_rl.settings import RLSettings


@pytest.fixture(scope="module")
def registry():
    return load_plugins(only=["rl"]).registry


def settings(registry, **values):
    return load_settings(overrides=[("flag --set", values)], registry=registry, environ={}).settings


def test_defaults_and_overrides(registry):
    rl = section(settings(registry), RLSettings)
    assert rl.kl_coef > 0 and rl.thresholds == "source" and rl.shapers == {}
    rl = section(settings(registry, **{"rl.kl_coef": 0.5, "rl.shapers": {"kills": 1.0}}), RLSettings)
    assert rl.kl_coef == 0.5 and rl.shapers == {"kills": 1.0}
    rl = section(settings(registry, **{"rl.thresholds": "centred", "rl.sharpen": 4.0}), RLSettings)
    assert rl.thresholds == "centred" and rl.sharpen == 4.0
    assert rl.kl_limit == 4.0 * rl.max_kl  # a sharpened anchor's KL scales with the factor


def test_the_kl_weight_decays_to_its_floor(registry):
    rl = section(settings(registry, **{"rl.kl_coef": 0.2, "rl.kl_decay": 0.5}), RLSettings)
    assert [rl.kl_weight(u) for u in (1, 2, 3)] == [0.2, 0.1, 0.05] and rl.kl_weight(60) < 1e-15
    rl = section(settings(registry, **{"rl.kl_coef": 0.2, "rl.kl_decay": 0.5, "rl.kl_floor": 0.08}), RLSettings)
    assert [rl.kl_weight(u) for u in (1, 2, 3, 60)] == [0.2, 0.1, 0.08, 0.08]
    rl = section(settings(registry, **{"rl.kl_coef": 0.2, "rl.kl_floor": 0.5}), RLSettings)
    assert rl.kl_weight(1) == rl.kl_weight(500) == 0.2  # a floor above the start holds the start weight


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("rl.clip", 1.5, "rl.clip"),
        ("rl.kl_floor", -0.1, "rl.kl_floor"),
        ("rl.sharpen", 4.0, "rl.thresholds = centred"),
        ("rl.confirm_episodes", 1, "paired confirmation"),
        ("rl.thresholds", "median", "rl.thresholds"),
        ("rl.decisions", "argmax", "rl.decisions"),
        ("rl.no_such_key", 1, "unknown setting"),
    ],
)
def test_a_bad_value_is_one_line(registry, key, value, says):
    with pytest.raises(SettingsError, match=says) as info:
        settings(registry, **{key: value})
    assert "\n" not in str(info.value)


def test_every_field_is_described():
    assert all(field.description for field in RLSettings.model_fields.values())
