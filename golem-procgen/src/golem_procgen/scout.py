"""The ``scout`` expert: the explorer without the map — it goes only by what it has seen.

The explorer walks the sidecar's shortest way to an exit it has never seen, so at
every junction its choice rests on the map's plan, which no frame shows; a model
cloned from it learns an average of turns it cannot tell apart, and wanders on
a new map. The scout decides from the places it has seen, a memory a recurrent
model can keep too:

* each tic it looks: rays across its field of view (:data:`FOV` degrees around
  its heading, every :data:`RAY_STEP`) mark the cells they cross as seen, up to
  the first that blocks the view (a wall, a closed door: seen, not looked
  through) or :data:`SIGHT` map units;
* once the exit's cell has been seen it plays as the explorer (the way there,
  doors, switches, fights);
* until then it walks to a *frontier*: a seen cell that can be walked on next to
  one not yet seen (a doorway counts as one). It keeps its frontier until that
  cell is no longer one or the way stalls, then takes the nearest by path, ties
  broken by the smallest turn, so it sweeps a room rather than zigzagging;
* health, weapons and ammunition it wants are fetched only where their cell was
  seen; with nothing left to see (the exit behind a lock, say) it falls back on
  the explorer's plan.

Fights are the explorer's: a monster in line of sight within reach is turned to
and shot (the turn is what a model sees, the monster then on screen).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from golem_experts.geometry import relative_bearing, turn_toward
from golem_experts.privileged import player_pose
from golem_procgen.explorer import GOAL_PATIENCE, ExplorerExpert
from golem_procgen.navigation import Cell, Goal, Tokens

#: Horizontal field of view the scout marks as seen, degrees (the engine's default view is 90°).
FOV = 90.0
#: Angle between two rays of a look, degrees.
RAY_STEP = 3.0
#: How far a look reaches, map units.
SIGHT = 1536.0
#: Steering: a turn starts when the waypoint is this many degrees off the heading, and lasts until it is within
#: STEER_HOLD — fewer, longer turns than the explorer's (which corrects at 4°), each one a change of direction a
#: frame shows rather than a correction it does not.
STEER_START, STEER_HOLD = 15.0, 4.0
#: The four neighbours of a cell.
NEIGHBOURS = ((1, 0), (-1, 0), (0, 1), (0, -1))


class ScoutExpert(ExplorerExpert):
    """Reaches the exit of a generated map as the explorer does, but heads for the exit only once it has seen it:
    until then it walks to the nearest edge of what it has seen."""

    name: ClassVar[str] = "scout"

    def reset(self, game: Any) -> None:
        super().reset(game)
        self._seen: set[Cell] = set()
        self._frontier_goal: Cell | None = None
        self._goal_since = 0
        self._turning = False
        self._heading = 0.0  # degrees, this tic's (read once per tic in act)

    # --- what it has seen ---------------------------------------------------------

    def look(self, x: float, y: float, angle: float) -> None:
        """Mark the cells the player at (x, y), facing ``angle`` degrees, can see (see the module's notes)."""
        nav, seen = self.nav, self._seen
        step = nav.cell / 2.0
        rays = int(FOV // RAY_STEP) + 1
        for k in range(rays):
            theta = math.radians(angle - FOV / 2.0 + k * RAY_STEP)
            dx, dy = math.cos(theta) * step, math.sin(theta) * step
            px, py = x, y
            for _ in range(int(SIGHT // step)):
                cell = nav.cell_of(px, py)
                seen.add(cell)
                if not nav.see_through(cell):
                    break
                px += dx
                py += dy
        seen.add(nav.cell_of(x, y))

    def _frontier(self, tokens: Tokens) -> set[Cell]:
        """Seen cells a player can walk on that border a cell not yet seen."""
        nav, seen = self.nav, self._seen
        return {
            cell
            for cell in seen
            if nav.open(cell, tokens) and any((cell[0] + a, cell[1] + b) not in seen for a, b in NEIGHBOURS)
        }

    # --- the policy ---------------------------------------------------------------

    def act(self, game: Any, state: Any) -> list[int]:
        pose = player_pose(game)
        self._heading = pose.angle
        self.look(pose.x, pose.y, pose.angle)
        return super().act(game, state)

    def _steer(self, err: float) -> str | None:
        turn = turn_toward(err, STEER_HOLD if self._turning else STEER_START)
        self._turning = turn is not None
        return turn

    def _goal(self, game: Any, state: Any, x: float, y: float, tokens: Tokens) -> tuple[Goal, dict | None]:
        nav = self.nav
        if nav.exit is None or nav.cell_of(*nav.exit) in self._seen:
            return super()._goal(game, state, x, y, tokens)
        wanted = self._wanted(game)
        if wanted:
            items = frozenset(
                cell
                for o in state.objects
                if o.name in wanted
                and (cell := nav.cell_of(o.position_x, o.position_y)) in self._seen
                and cell not in self._skip
            )
            if items and nav.field(items, tokens).get(nav.cell_of(x, y)) is not None:
                return items, None
        frontier = self._frontier(tokens)
        keep = self._frontier_goal
        if keep is not None and keep in frontier and keep not in self._skip:
            if self._walked - self._goal_since <= GOAL_PATIENCE:
                return keep, None
        costs = nav.costs_from((x, y), tokens)
        reachable = [c for c in frontier if c in costs and c not in self._skip and c != nav.cell_of(x, y)]
        if not reachable:
            self._frontier_goal = None
            return super()._goal(game, state, x, y, tokens)  # nothing left to see from here: the explorer's plan

        def rank(cell: Cell) -> tuple[float, float, Cell]:
            turn = abs(relative_bearing(x, y, self._heading, *nav.centre(cell)))
            return (round(costs[cell]), turn, cell)

        self._frontier_goal = min(reachable, key=rank)
        self._goal_since = self._walked
        return self._frontier_goal, None


__all__ = ["FOV", "SIGHT", "ScoutExpert"]
