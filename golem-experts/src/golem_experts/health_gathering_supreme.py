"""Expert for ``health_gathering_supreme``: walk the shortest poison-free path to the cheapest medikit it has seen."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import Field

from golem.experts import Expert
from golem.settings import ComponentSettings, section
from golem_experts.geometry import (
    VIEW_HALF_ANGLE,
    NavGrid,
    blocking_walls,
    distance,
    line_of_sight,
    ray_distance,
    relative_bearing,
    solid_walls,
    turn_deadband,
    turn_toward,
)
from golem_experts.health_gathering import RUN_CONE, WIDE_CONE, WIDE_CONE_DISTANCE
from golem_experts.privileged import VelocityMeter, enable_objects, enable_sectors, objects_named, player_pose
from golem_experts.take_cover import FRICTION, THRUST

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
#: Bearings (degrees from the heading, within the view) along which the expert, with no medikit
#: seen, looks for the most open way to run.
EXPLORE_RAYS = tuple(range(-40, 41, 8))
#: Map units of free distance a degree of turning away from the heading costs when picking that way.
EXPLORE_UNITS_PER_DEGREE = 2.0
#: With no way in view longer than this (map units), turn in place toward the more open side.
CORNER = 160.0
#: Radius (map units) around a vial that stops an exploring ray: ``POISON_REACH`` across the box's diagonal.
POISON_RAY = 56.0


class HealthGatheringSupremeSettings(ComponentSettings):
    """``experts.health_gathering_supreme``: how long a medikit it saw stays a target."""

    key = "experts.health_gathering_supreme"
    memory: int | None = Field(
        None,
        ge=0,
        le=100_000,
        description="tics a medikit stays a target after it was last in view; none: the whole episode",
    )


class HealthGatheringSupremeExpert(Expert):
    """Plans over an occupancy grid of the maze's walls and the poison vials, then steers along the path.

    It goes only for medikits it has *seen* this episode — within the view
    and not behind a wall at one of its plans (or, with
    ``experts.health_gathering_supreme.memory``, within that many tics) — so
    every target was once on the learner's screen (an earlier version planned
    to every medikit in the maze and survived 1,936 tics at frame skip 4 over
    30 seeds, where this one survives 2,085). Every
    :data:`REPLAN` tics (or when its medikit is gone) one breadth-first
    search from the player gives the path length to every such medikit; the
    expert picks the lowest path-plus-turn cost, as
    :class:`~golem_experts.health_gathering.HealthGatheringExpert`
    does in the open room, and follows that path, running when roughly
    facing the point a few cells ahead. With none seen it runs the most open
    way in view (rays stop at walls and vials), turning in place toward the
    more open side when a wall is close ahead. Where running on would carry
    the player onto a vial within a few tics (it slides), it backs off
    instead (and, exploring, turns away too).
    """

    name: ClassVar[str] = "health_gathering_supreme"
    scenarios: ClassVar[tuple[str, ...]] = ("health_gathering_supreme",)
    settings_model: ClassVar[Any] = HealthGatheringSupremeSettings

    def __init__(self, action_names: Sequence[str], settings: Any = None) -> None:
        super().__init__(action_names, settings)
        self._memory = section(self.settings, HealthGatheringSupremeSettings).memory

    def configure(self, game: Any) -> None:
        enable_objects(game)
        enable_sectors(game)

    def reset(self, game: Any) -> None:
        self._grid: NavGrid | None = None
        self._walls: list | None = None  # the solid (sight-stopping) walls
        self._seen: dict[int, int] = {}  # medikit id → the tic it was last in view
        self._corner_turn: str | None = None
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

    def _plan(self, state: Any, x: float, y: float, heading: float, tic: int) -> None:
        """Pick the medikit cheapest to reach from ``(x, y)`` and keep the path to it."""
        if self._grid is None:
            self._grid = NavGrid(blocking_walls(state.sectors), cell=CELL, clearance=CLEARANCE)
        grid = self._grid
        grid.set_obstacles(((o.position_x, o.position_y) for o in objects_named(state, *POISONS)), POISON_CLEARANCE)
        grid.set_goal(x, y)
        self._seen.update(
            (o.id, tic)
            for o in objects_named(state, *ITEMS)
            if abs(relative_bearing(x, y, heading, o.position_x, o.position_y)) <= VIEW_HALF_ANGLE
            and line_of_sight(self._walls or (), x, y, o.position_x, o.position_y)
        )
        reachable = []
        for o in objects_named(state, *ITEMS):
            last = self._seen.get(o.id)
            if last is None or (self._memory is not None and tic - last > self._memory):
                continue
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

    def _explore(self, state: Any, x: float, y: float, heading: float, vx: float, vy: float) -> list[int]:
        """Buttons that run the most open way in view from ``(x, y)``, or turn toward it from a corner."""
        poisons = [(o.position_x, o.position_y) for o in objects_named(state, *POISONS)]
        ways = [(ray_distance(self._walls or (), x, y, heading + a, poisons, POISON_RAY), a) for a in EXPLORE_RAYS]
        free, err = max(ways, key=lambda w: w[0] - EXPLORE_UNITS_PER_DEGREE * abs(w[1]))
        if free < CORNER:
            if self._corner_turn is None:  # bearings grow to the left: ways[-1] is the leftmost ray
                self._corner_turn = "TURN_LEFT" if ways[-1][0] >= ways[0][0] else "TURN_RIGHT"
            return self.press(self._corner_turn)
        self._corner_turn = None
        buttons = []
        turn = turn_toward(err, turn_deadband(self.hold, 2.0))
        if turn:
            buttons.append(turn)
        if abs(err) < RUN_CONE:
            if self._runs_into_poison(state, x, y, vx, vy, heading):
                return self.press("MOVE_BACKWARD", "TURN_LEFT")
            buttons.append("MOVE_FORWARD")
        return self.press(*buttons)

    def act(self, game: Any, state: Any) -> list[int]:
        if self._walls is None:
            self._walls = solid_walls(state.sectors)
        pose = player_pose(game)
        vx, vy = self._velocity.read(pose, state.tic)  # per tic, whatever the frame skip
        alive = {o.id for o in objects_named(state, *ITEMS)}
        self._age += self.hold
        if self._grid is None or self._target not in alive or self._age >= REPLAN:
            self._plan(state, pose.x, pose.y, pose.angle, state.tic)
        if not self._path:
            return self._explore(state, pose.x, pose.y, pose.angle, vx, vy)
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
