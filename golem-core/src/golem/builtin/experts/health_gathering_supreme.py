"""Expert for ``health_gathering_supreme``: walk the shortest poison-free path to the cheapest medikit."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from golem.builtin.experts.geometry import (
    NavGrid, blocking_walls, distance, relative_bearing, turn_deadband, turn_toward,
)
from golem.builtin.experts.health_gathering import RUN_CONE, WIDE_CONE, WIDE_CONE_DISTANCE
from golem.builtin.experts.privileged import VelocityMeter, enable_objects, enable_sectors, objects_named, player_pose
from golem.builtin.experts.take_cover import FRICTION, THRUST
from golem.experts import Expert

ITEMS = ("CustomMedikit",)
POISONS = ("Poison",)
#: Grid cell size and wall clearance for path planning, map units.
CELL = 16.0
CLEARANCE = 24.0
#: Cells closer than this to a poison vial (map units) are off the plan: the player (radius 16)
#: picks an item (radius 20) up on contact, so this leaves about two cells to spare.
POISON_CLEARANCE = 72.0
#: Box half-width (map units) within which the player picks a vial up: its radius 16 plus the vial's 20.
POISON_REACH = 36.0
#: Tics of running ahead checked for a vial in the way, with the walking model of ``take_cover``.
BRAKE_HORIZON = 10
#: Map units of path that weigh as much as one degree of turning when picking a medikit.
UNITS_PER_DEGREE = 3.0
#: Path points (cells) ahead of the nearest one that the expert steers at.
LOOKAHEAD = 4
#: Tics between re-plans (the medikits and vials move only when picked up or spawned).
REPLAN = 8
#: Candidates, nearest by path, whose turning cost is worked out.
CANDIDATES = 8
#: Map units of cost the medikit already headed for is credited with at a re-plan, so the
#: expert does not dither between two about equally cheap ones.
KEEP_TARGET = 120.0


class HealthGatheringSupremeExpert(Expert):
    """Plans over an occupancy grid of the maze's walls and the poison vials, then steers along the path.

    Every :data:`REPLAN` tics (or when its medikit is gone) one breadth-first
    search from the player gives the path length to every medikit; the
    expert picks the lowest path-plus-turn cost, as
    :class:`~golem.builtin.experts.health_gathering.HealthGatheringExpert`
    does in the open room, and follows that path, running when roughly
    facing the point a few cells ahead. Where running on would carry the
    player onto a vial within a few tics (it slides), it backs off instead.
    """

    name: ClassVar[str] = "health_gathering_supreme"
    scenarios: ClassVar[tuple[str, ...]] = ("health_gathering_supreme",)

    def configure(self, game: Any) -> None:
        enable_objects(game)
        enable_sectors(game)

    def reset(self, game: Any) -> None:
        self._grid: NavGrid | None = None
        self._path: list[tuple[float, float]] = []
        self._target: int | None = None
        self._age = 0
        self._velocity = VelocityMeter()

    @staticmethod
    def _runs_into_poison(state: Any, x: float, y: float, vx: float, vy: float, heading: float) -> bool:
        """Whether running on along ``heading`` (degrees) from ``(x, y)`` at ``(vx, vy)`` (map units per
        tic) touches a vial within :data:`BRAKE_HORIZON` tics."""
        poisons = [(o.position_x, o.position_y) for o in objects_named(state, *POISONS)]
        if not poisons:
            return False
        ax, ay = THRUST * math.cos(math.radians(heading)), THRUST * math.sin(math.radians(heading))
        for _ in range(BRAKE_HORIZON):
            vx, vy = FRICTION * vx + ax, FRICTION * vy + ay
            x, y = x + vx, y + vy
            if any(abs(px - x) < POISON_REACH and abs(py - y) < POISON_REACH for px, py in poisons):
                return True
        return False

    def _plan(self, state: Any, x: float, y: float, heading: float) -> None:
        """Pick the medikit cheapest to reach from ``(x, y)`` and keep the path to it."""
        if self._grid is None:
            self._grid = NavGrid(blocking_walls(state.sectors), cell=CELL, clearance=CLEARANCE)
        grid = self._grid
        grid.set_obstacles(((o.position_x, o.position_y) for o in objects_named(state, *POISONS)), POISON_CLEARANCE)
        grid.set_goal(x, y)
        reachable = []
        for o in objects_named(state, *ITEMS):
            i, j = grid.to_cell(o.position_x, o.position_y)
            if grid.free[i, j] and grid.dist[i, j] >= 0:
                reachable.append((int(grid.dist[i, j]), o))
        reachable.sort(key=lambda r: r[0])
        best: tuple[float, int, list[tuple[float, float]]] | None = None
        for steps, o in reachable[:CANDIDATES]:
            path = grid.path(o.position_x, o.position_y)[::-1] + [(o.position_x, o.position_y)]
            wx, wy = path[min(LOOKAHEAD, len(path) - 1)]
            score = steps * CELL + UNITS_PER_DEGREE * abs(relative_bearing(x, y, heading, wx, wy))
            if o.id == self._target:
                score -= KEEP_TARGET
            if best is None or score < best[0]:
                best = (score, o.id, path)
        self._age = 0
        if best is None:
            self._target, self._path = None, []
        else:
            _, self._target, self._path = best

    def act(self, game: Any, state: Any) -> list[int]:
        pose = player_pose(game)
        vx, vy = self._velocity.read(pose, state.tic)  # per tic, whatever the frame skip
        alive = {o.id for o in objects_named(state, *ITEMS)}
        self._age += self.hold
        if self._grid is None or self._target not in alive or self._age >= REPLAN:
            self._plan(state, pose.x, pose.y, pose.angle)
        if not self._path:
            return self.press("MOVE_FORWARD", "TURN_LEFT")
        near = min(range(len(self._path)), key=lambda k: distance(pose.x, pose.y, *self._path[k]))
        wx, wy = self._path[min(near + LOOKAHEAD, len(self._path) - 1)]
        d = distance(pose.x, pose.y, *self._path[-1])
        err = relative_bearing(pose.x, pose.y, pose.angle, wx, wy)
        buttons = []
        turn = turn_toward(err, turn_deadband(self.hold, 2.0))
        if turn:
            buttons.append(turn)
        if abs(err) < RUN_CONE or (d > WIDE_CONE_DISTANCE and abs(err) < WIDE_CONE):
            if self._runs_into_poison(state, pose.x, pose.y, vx, vy, pose.angle):
                buttons.append("MOVE_BACKWARD")
            else:
                buttons.append("MOVE_FORWARD")
        return self.press(*buttons)
