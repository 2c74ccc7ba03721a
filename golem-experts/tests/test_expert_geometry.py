"""The experts' geometry helpers, without the engine."""

from __future__ import annotations

import math
from collections import deque

import numpy as np
import pytest

from golem_experts.geometry import (
    NavGrid,
    Segment,
    aim_tolerance,
    bearing,
    lateral_offset,
    line_of_sight,
    press_turn,
    ray_distance,
    relative_bearing,
    turn_deadband,
    turn_toward,
    wrap_angle,
)


def test_angles_follow_doom_convention() -> None:
    assert wrap_angle(190.0) == pytest.approx(-170.0)
    assert wrap_angle(-180.0) == pytest.approx(-180.0)
    assert bearing(0, 0, 0, 10) == pytest.approx(90.0)
    assert bearing(0, 0, -10, 0) == pytest.approx(180.0)
    # Facing +x, a target up the +y axis is 90° to the left.
    assert relative_bearing(0, 0, 0.0, 0, 10) == pytest.approx(90.0)
    assert relative_bearing(0, 0, 350.0, 10, 0) == pytest.approx(10.0)
    assert turn_toward(5.0, 1.0) == "TURN_LEFT"
    assert turn_toward(-5.0, 1.0) == "TURN_RIGHT"
    assert turn_toward(0.5, 1.0) is None


def test_lateral_offset_and_aim_tolerance() -> None:
    assert lateral_offset(0, 0, 0.0, 100, 20) == pytest.approx(20.0)
    assert lateral_offset(0, 0, 90.0, 20, 100) == pytest.approx(-20.0)
    assert aim_tolerance(100.0, 10.0) == pytest.approx(math.degrees(math.atan(0.1)))
    assert aim_tolerance(10_000.0, 10.0, floor=1.0) == 1.0


def test_a_held_turn_press_turns_more_and_its_deadband_widens() -> None:
    # The first six tics of a press turn at half rate (1.76°), then 3.52° a tic.
    assert press_turn(1) == pytest.approx(1.76)
    assert press_turn(4) == pytest.approx(7.04)
    assert press_turn(8) == pytest.approx(6 * 1.76 + 2 * 3.52)
    # One tic: the expert's own floor; held 4 tics: half the 7° the press turns, so it does not overshoot.
    assert turn_deadband(1, 0.9) == 0.9
    assert turn_deadband(4, 0.9) == pytest.approx(3.52)
    assert turn_deadband(4, 5.0) == 5.0


def test_experts_read_the_frame_skip_as_their_hold() -> None:
    from golem.profiles import BASIC
    from golem.settings import GolemSettings
    from golem_experts import EXPERTS

    assert EXPERTS["take_cover"](BASIC).hold == 1
    skip4 = GolemSettings.model_validate({"game": {"frame_skip": 4}})
    assert EXPERTS["take_cover"](BASIC, skip4).hold == 4


def _box(x0: float, y0: float, x1: float, y1: float) -> list[Segment]:
    return [Segment(x0, y0, x1, y0), Segment(x1, y0, x1, y1), Segment(x1, y1, x0, y1), Segment(x0, y1, x0, y0)]


def test_navgrid_routes_around_a_wall() -> None:
    # A 400×200 room split by a wall from the bottom up to y=150: the way round is over its top.
    walls = _box(0, 0, 400, 200) + [Segment(200, 0, 200, 150)]
    grid = NavGrid(walls, cell=8.0, clearance=20.0)
    grid.set_goal(350, 50)
    x, y = 50.0, 50.0
    for _ in range(200):
        nx, ny = grid.waypoint(x, y, lookahead=2)
        if (nx, ny) == (x, y):
            break
        x, y = nx, ny
    assert math.hypot(x - 350, y - 50) < 16
    assert grid.dist[grid.to_cell(50, 50)] > grid.dist[grid.to_cell(350, 180)]


def _queue_bfs(free: np.ndarray, start: tuple[int, int]) -> np.ndarray:
    """The plain breadth-first search NavGrid.set_goal must agree with (diagonals only past free corners)."""
    dist = np.full(free.shape, -1, dtype=np.int32)
    dist[start] = 0
    queue = deque([start])
    while queue:
        i, j = queue.popleft()
        for di in (-1, 0, 1):
            for dj in (-1, 0, 1):
                a, b = i + di, j + dj
                if not (0 <= a < free.shape[0] and 0 <= b < free.shape[1]) or not free[a, b] or dist[a, b] >= 0:
                    continue
                if di and dj and not (free[i + di, j] and free[i, j + dj]):
                    continue
                dist[a, b] = dist[i, j] + 1
                queue.append((a, b))
    return dist


def test_navgrid_distances_equal_a_plain_breadth_first_search() -> None:
    rng = np.random.default_rng(0)
    grid = NavGrid(_box(0, 0, 400, 200), cell=8.0, clearance=0.0)
    for _ in range(10):
        grid.free = rng.random((grid.nx, grid.ny)) > rng.uniform(0.1, 0.45)
        i, j = (int(v) for v in np.argwhere(grid.free)[rng.integers(grid.free.sum())])
        grid.set_goal(*grid.centre(i, j))
        expected = _queue_bfs(grid.free, (i, j))
        assert (grid.dist == expected).all()
        assert (expected < 0).any() and expected.max() > 5  # cut-off cells and long routes both occur


def test_navgrid_obstacles_block_exactly_the_cells_within_their_radius() -> None:
    grid = NavGrid(_box(0, 0, 400, 200), cell=8.0, clearance=20.0)
    rng = np.random.default_rng(1)
    points = [(float(x), float(y)) for x, y in rng.uniform(-100, 500, size=(12, 2))] + [(0.0, 0.0), (400.0, 200.0)]
    grid.set_obstacles(points, 36.0)
    expected = grid.wall_free.copy()
    for x, y in points:  # every cell tested against every point
        expected &= np.hypot(grid._cx - x, grid._cy - y) >= 36.0
    assert (grid.free == expected).all() and (grid.free != grid.wall_free).any()
    grid.set_obstacles([], 36.0)
    assert (grid.free == grid.wall_free).all()  # each call starts from the walls alone


def test_ray_distance_stops_at_the_first_wall_or_obstacle_disc() -> None:
    walls = [Segment(100, -50, 100, 50), Segment(300, -50, 300, 50)]
    assert not line_of_sight(walls, 0, 0, 200, 0)  # through the first wall
    assert line_of_sight(walls, 0, 0, 90, 0)  # stops short of it
    assert line_of_sight(walls, 0, 100, 200, 100)  # passes beyond its end
    assert line_of_sight(walls, 0, 0, 0, 200)  # parallel
    assert ray_distance(walls, 0, 0, 0.0) == pytest.approx(100.0)
    assert ray_distance(walls, 0, 0, 180.0, limit=500.0) == 500.0  # nothing behind
    assert ray_distance(walls, 0, 0, 90.0) == 1024.0  # walls parallel to the ray
    # A disc of radius 10 centred 50 ahead and 6 to the side: entered 8 units before its centre.
    assert ray_distance(walls, 0, 0, 0.0, [(50, 6)], radius=10.0) == pytest.approx(42.0)
    assert ray_distance(walls, 0, 0, 0.0, [(50, 20)], radius=10.0) == pytest.approx(100.0)  # passes beside it
    assert ray_distance(walls, 0, 0, 0.0, [(-50, 0)], radius=10.0) == pytest.approx(100.0)  # behind the player
