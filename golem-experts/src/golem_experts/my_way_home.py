"""Expert for ``my_way_home``: follow the shortest path through the maze to the armour vest."""

from __future__ import annotations

from typing import Any, ClassVar

from golem.experts import Expert
from golem_experts.geometry import NavGrid, blocking_walls, relative_bearing, turn_deadband, turn_toward
from golem_experts.privileged import enable_objects, enable_sectors, objects_named, player_pose

GOALS = ("GreenArmor",)
#: Grid cell size and wall clearance for path planning, map units.
CELL = 8.0
CLEARANCE = 20.0
#: Cells down the path the expert steers at.
LOOKAHEAD = 8
#: Run forward while the waypoint is within this bearing error, degrees.
RUN_CONE = 40.0
#: Bearing error (degrees) under which a one-tic decision does not turn.
TURN_FLOOR = 3.0


class MyWayHomeExpert(Expert):
    """Plans over an occupancy grid built from ``state.sectors`` walls, then steers along it.

    The grid and the BFS distance field to the vest are built once per episode;
    each tic the expert turns toward a point a few cells down the path and runs
    when roughly facing it.
    """

    name: ClassVar[str] = "my_way_home"
    scenarios: ClassVar[tuple[str, ...]] = ("my_way_home",)

    def configure(self, game: Any) -> None:
        enable_objects(game)
        enable_sectors(game)

    def reset(self, game: Any) -> None:
        self._grid: NavGrid | None = None

    def _plan(self, state: Any) -> NavGrid | None:
        goals = objects_named(state, *GOALS)
        if not goals:
            return None
        grid = NavGrid(blocking_walls(state.sectors), cell=CELL, clearance=CLEARANCE)
        grid.set_goal(goals[0].position_x, goals[0].position_y)
        return grid

    def act(self, game: Any, state: Any) -> list[int]:
        if self._grid is None:
            self._grid = self._plan(state)
            if self._grid is None:
                return self.press("TURN_LEFT")
        pose = player_pose(game)
        wx, wy = self._grid.waypoint(pose.x, pose.y, LOOKAHEAD)
        err = relative_bearing(pose.x, pose.y, pose.angle, wx, wy)
        buttons = []
        turn = turn_toward(err, turn_deadband(self.hold, TURN_FLOOR))
        if turn:
            buttons.append(turn)
        if abs(err) < RUN_CONE:
            buttons.append("MOVE_FORWARD")
        return self.press(*buttons)
