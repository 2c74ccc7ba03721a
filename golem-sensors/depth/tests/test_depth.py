"""The depth sensor: contract, plugin registration and real engine values."""

from __future__ import annotations

import numpy as np
import pytest

from golem.settings import GolemSettings
from golem.testing.sensors import assert_sensor_contract
from golem_sensors_depth import DepthSensor, register_sensors


def test_registers_itself():
    seen = {}
    register_sensors(lambda name, cls: seen.setdefault(name, cls))
    assert seen == {"depth": DepthSensor}
    assert DepthSensor.joins == "visual" and DepthSensor(GolemSettings()).channels == 1


def test_contract_without_engine():
    assert_sensor_contract(DepthSensor, engine=False)


@pytest.mark.engine
def test_contract_and_real_depth():
    from golem.runtime.session import Session

    sensor = assert_sensor_contract(DepthSensor, tics=2)
    with Session(GolemSettings(), [sensor]) as session:
        depth = session.observe()["depths"]
    assert depth.shape == (1, 64, 64) and depth.dtype == np.uint8
    assert depth.std() > 1.0, "depth should vary across the view"
    assert np.array_equal(sensor.mirror(depth), depth[..., ::-1])
