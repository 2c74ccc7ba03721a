"""The thermal sensor: contract, plugin registration and real engine values."""

from __future__ import annotations

import numpy as np
import pytest

from golem.settings import GolemSettings
from golem.testing.sensors import assert_sensor_contract
from golem_sensors_thermal import ThermalSensor, register_sensors


def test_registers_itself():
    seen = {}
    register_sensors(lambda name, cls: seen.setdefault(name, cls))
    assert seen == {"thermal": ThermalSensor}


def test_contract_without_engine():
    assert_sensor_contract(ThermalSensor, engine=False)


@pytest.mark.engine
def test_contract_and_monster_is_hot():
    from golem.runtime.session import Session

    sensor = assert_sensor_contract(ThermalSensor, tics=2)
    # basic: one monster on the far wall, in view from the start.
    with Session(GolemSettings(), [sensor], scenario="basic") as session:
        mask = session.observe()["thermals"]
        labels = session.game.get_state().labels
    assert mask.shape == (1, 64, 64) and mask.dtype == np.uint8
    assert set(np.unique(mask)) <= {0, 1}
    assert any(label.object_category == "Monster" for label in labels)
    hot = int(mask.sum())
    assert 0 < hot < 0.2 * mask.size, f"the monster should be a small hot blob, got {hot} hot pixels"
    # walls, floor and the player's own weapon are cold: the bottom rows are the weapon's place
    assert mask[0, -8:, 24:40].sum() == 0
