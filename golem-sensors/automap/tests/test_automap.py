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


def bounds(n: int) -> list[int]:
    """The 65 block boundaries of ``n`` pixels: ``⌊i·n/64⌋`` on the left half, reflected on the right."""
    left = [(i * n) // 64 for i in range(33)]
    return left + [n - left[64 - i] for i in range(33, 65)]


def reference(image: np.ndarray) -> np.ndarray:
    """The brightest pixel of each of 64 × 64 blocks, block by block (a block shorter than a pixel: its first)."""
    rows, cols = bounds(image.shape[0]), bounds(image.shape[1])
    out = np.zeros((64, 64), np.uint8)
    for i in range(64):
        for j in range(64):
            r0, c0 = min(rows[i], image.shape[0] - 1), min(cols[j], image.shape[1] - 1)
            out[i, j] = image[r0 : max(rows[i + 1], r0 + 1), c0 : max(cols[j + 1], c0 + 1)].max()
    return out


def test_block_max_equals_the_block_by_block_maximum():
    rng = np.random.default_rng(0)
    for shape in ((120, 160), (240, 320), (97, 131), (48, 160), (120, 48)):
        image = rng.integers(0, 256, shape, dtype=np.uint8)
        assert np.array_equal(block_max(image), reference(image)), shape


def test_mirror_flips_the_width_and_is_the_map_of_the_mirrored_world():
    sensor = AutomapSensor(GolemSettings())
    rng = np.random.default_rng(1)
    for shape in ((120, 160), (240, 320), (480, 640)):  # the engine's buffers have even widths
        image = rng.integers(0, 256, shape, dtype=np.uint8)
        step = sensor.extract(SimpleNamespace(automap_buffer=image))
        assert np.array_equal(sensor.mirror(step), step[..., ::-1])
        flipped = sensor.extract(SimpleNamespace(automap_buffer=image[:, ::-1]))
        assert np.array_equal(sensor.mirror(step), flipped), shape


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
        walls = (first > 0xC0).sum()  # brighter than the player's arrow (0xC0): walls (white, antialiased)
        assert walls >= 3 and (first > 0).sum() >= 5, "the walls in view are drawn bright on black"
        assert first[0, :8].max() == 0 and first[0, -8:].max() == 0, "nothing drawn far from the player yet"
        buttons = session.action_names
        press = [0] * len(buttons)
        press[buttons.index(Button.TURN_LEFT.name)] = 1  # turn around on the spot: the walls behind come into view
        for _ in range(40):
            game.make_action(press)
        later = session.observe()["automaps"]
    assert (later > 0).sum() > 1.5 * (first > 0).sum(), "turning around should reveal more of the map"
