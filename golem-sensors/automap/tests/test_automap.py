"""The automap sensor: contract, plugin registration, the block maximum, and the real engine's map."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from golem.settings import GolemSettings
from golem.testing.sensors import assert_sensor_contract
from golem_sensors_automap import AutomapSensor, register_sensors
from golem_sensors_automap.sensor import block_max


def test_registers_itself():
    seen = {}
    register_sensors(lambda name, cls: seen.setdefault(name, cls))
    assert seen == {"automap": AutomapSensor}
    sensor = AutomapSensor(GolemSettings())
    assert sensor.joins is None and sensor.shape == (1, 64, 64)
    assert not sensor.image and not sensor.colour  # geometry and colour augmentations leave the map alone


def test_contract_without_engine():
    assert_sensor_contract(AutomapSensor, engine=False)


def reference(image: np.ndarray) -> np.ndarray:
    """The brightest pixel of each of 64 × 64 blocks, block by block (rows ``[i·H/64, (i+1)·H/64)``)."""
    h, w = image.shape
    out = np.zeros((64, 64), np.uint8)
    for i in range(64):
        for j in range(64):
            block = image[
                (i * h) // 64 : max((i + 1) * h // 64, (i * h) // 64 + 1),
                (j * w) // 64 : max((j + 1) * w // 64, (j * w) // 64 + 1),
            ]
            out[i, j] = block.max()
    return out


def test_block_max_equals_the_block_by_block_maximum():
    rng = np.random.default_rng(0)
    for shape in ((120, 160), (240, 320), (97, 131)):
        image = rng.integers(0, 256, shape, dtype=np.uint8)
        assert np.array_equal(block_max(image), reference(image))


def test_a_one_pixel_line_keeps_its_grey():
    """A bilinear resize would blend a line one pixel wide into the black around it; the block maximum does not."""
    image = np.zeros((120, 160), np.uint8)
    image[:, 81] = 255  # a vertical wall
    image[37, :] = 144  # a step, crossing it
    small = AutomapSensor(GolemSettings()).extract(SimpleNamespace(automap_buffer=np.repeat(image[..., None], 3, 2)))
    assert small.shape == (1, 64, 64) and small.dtype == np.uint8
    assert set(np.unique(small)) == {0, 144, 255}
    assert (small[0] == 255).sum(axis=1).tolist() == [1] * 64  # one column of wall in every row
    assert (small[0] >= 144).sum(axis=0).min() == 1  # the step crosses every column


@pytest.mark.engine
def test_the_map_shows_what_the_player_has_seen_and_grows_as_it_walks():
    from vizdoom import Button

    from golem.runtime.session import Session

    sensor = assert_sensor_contract(AutomapSensor, tics=2)
    with Session(GolemSettings(), [sensor], scenario="my_way_home") as session:
        game = session.game
        first = session.observe()["automaps"]
        assert first.shape == (1, 64, 64) and first.dtype == np.uint8
        assert (first > 0).sum() >= 5 and first.max() >= 0xC0, "the walls in view are drawn bright on black"
        assert first[0, :8].max() == 0 and first[0, -8:].max() == 0, "nothing drawn far from the player yet"
        buttons = session.action_names
        press = [0] * len(buttons)
        press[buttons.index(Button.TURN_LEFT.name)] = 1  # turn around on the spot: the walls behind come into view
        for _ in range(40):
            game.make_action(press)
        later = session.observe()["automaps"]
    assert (later > 0).sum() > 1.5 * (first > 0).sum(), "turning around should reveal more of the map"
