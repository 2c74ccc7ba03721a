"""The ``explorer`` expert: plays any generated map from its navigation sidecar and the engine's privileged state.

Each tic, in order of urgency:

1. a monster in sight (``state.objects``, sight lines over the sidecar's
   cells) within :data:`ENGAGE` units: turn to the nearest and fire while the
   aim is on it;
2. health below :data:`LOW_HEALTH`, no shotgun yet, or no ammunition, and a
   health item (the shotgun, ammunition) still on the map: walk to the nearest
   one by path;
3. otherwise walk to the exit: down the sidecar's distance field (stairs
   climbed, liquids avoided, teleport pads taken when they shorten the way),
   pressing USE at a closed door on the path.

Kills are attributed to the monster last fired at (``KILLCOUNT`` rises), so
corpses are not shot again; a monster fought for :data:`GIVE_UP` tics without
a kill is left alone, and a player that has not moved for a second backs off
and turns away.
"""

from __future__ import annotations

import random
from collections import deque
from pathlib import Path
from typing import Any, ClassVar

from vizdoom import GameVariable

from golem.errors import GolemError
from golem.experts import Expert
from golem_experts.geometry import aim_tolerance, distance, relative_bearing, turn_toward
from golem_experts.privileged import enable_objects, enable_sectors, player_pose
from golem_procgen.navigation import NavMap, sidecar_path

MONSTERS = frozenset({"Zombieman", "ShotgunGuy", "DoomImp", "Demon", "Cacodemon", "HellKnight"})
HEALTH_ITEMS = frozenset({"Stimpack", "Medikit"})
AMMO_ITEMS = frozenset({"Clip", "Shell", "Shotgun"})
#: Monsters farther than this (map units) are not fought.
ENGAGE = 900.0
#: Health under which the expert fetches a health item first.
LOW_HEALTH = 60.0
#: A shotgun this close (map units) is fetched before any fight.
GRAB = 192.0
#: A monster closer than this (map units) is fought backing away.
BACK_OFF = 160.0
#: Half-width (map units) of the body the aim must fall within; smallest aim error (degrees) treated as on.
AIM_RADIUS, AIM_FLOOR = 10.0, 1.5
#: Tics a monster is fought without a kill before it is left alone.
GIVE_UP = 175
#: Run forward while the waypoint is within this bearing error, degrees.
RUN_CONE = 35.0
#: Stuck: moved less than STUCK_UNITS over STUCK_TICS tics; then back off for UNSTICK_TICS.
STUCK_TICS, STUCK_UNITS, UNSTICK_TICS = 35, 24.0, 12
#: Reach of USE, map units, and the height a door must be open to be walked through.
USE_REACH, DOOR_OPEN = 96.0, 64.0


class ExplorerExpert(Expert):
    """Reaches the exit of a generated map, fighting what it meets and healing when low."""

    name: ClassVar[str] = "explorer"
    scenarios: ClassVar[tuple[str, ...]] = ("procgen",)
    #: Plays generated maps (``--procgen-phase``) rather than a fixed scenario.
    procedural: ClassVar[bool] = True

    @classmethod
    def plays(cls, scenario: str) -> bool:
        """Whether ``scenario`` (a ``.cfg`` or ``.wad`` path) is a generated map with a navigation sidecar."""
        path = Path(scenario)
        return path.suffix.lower() in (".cfg", ".wad") and sidecar_path(path.with_suffix(".wad")).is_file()

    def configure(self, game: Any) -> None:
        enable_objects(game)
        enable_sectors(game)

    def reset(self, game: Any) -> None:
        wad = game.get_doom_scenario_path()
        if not wad:
            raise GolemError("the explorer plays generated maps; this game has no scenario WAD")
        if getattr(self, "_wad", None) != wad:
            self.nav = NavMap.load(sidecar_path(wad))
            self._wad = wad
        self._dead: set[int] = set()
        self._ignored: set[int] = set()
        self._kills = game.get_game_variable(GameVariable.KILLCOUNT)
        self._target: int | None = None
        self._fought = 0
        self._trail: deque[tuple[float, float]] = deque(maxlen=STUCK_TICS)
        self._unstick = 0
        self._unstick_turn = "TURN_LEFT"
        self._door_ceiling: dict[int, float] = {}
        self._rng = random.Random(int(game.get_seed()))

    # --- helpers -------------------------------------------------------------

    def _visible_monsters(self, state: Any, x: float, y: float) -> list[tuple[float, Any]]:
        out = []
        for o in state.objects:
            if o.name not in MONSTERS or o.id in self._dead or o.id in self._ignored:
                continue
            d = distance(x, y, o.position_x, o.position_y)
            if d < ENGAGE and self.nav.line_of_sight((x, y), (o.position_x, o.position_y)):
                out.append((d, o))
        return sorted(out, key=lambda t: (t[0], t[1].id))

    def _goal(self, game: Any, state: Any, x: float, y: float) -> tuple[int, int]:
        health = game.get_game_variable(GameVariable.HEALTH)
        ammo = game.get_game_variable(GameVariable.AMMO2) + game.get_game_variable(GameVariable.AMMO3)
        if health < LOW_HEALTH:
            wanted = HEALTH_ITEMS
        elif game.get_game_variable(GameVariable.WEAPON3) <= 0:
            wanted = frozenset({"Shotgun"})
        elif ammo <= 0:
            wanted = AMMO_ITEMS
        else:
            wanted = frozenset()
        here = self.nav.cell_of(x, y)
        best: tuple[float, tuple[int, int]] | None = None
        for o in state.objects:
            if o.name in wanted:
                cell = self.nav.cell_of(o.position_x, o.position_y)
                cost = self.nav.field(cell).get(here)
                if cost is not None and (best is None or cost < best[0]):
                    best = (cost, cell)
        return best[1] if best is not None else self.nav.cell_of(*self.nav.exit)

    def _shotgun_at_hand(self, game: Any, state: Any, x: float, y: float) -> bool:
        """Whether the player has no shotgun and one lies within :data:`GRAB` units."""
        if game.get_game_variable(GameVariable.WEAPON3) > 0:
            return False
        return any(o.name == "Shotgun" and distance(x, y, o.position_x, o.position_y) < GRAB for o in state.objects)

    def _door_closed(self, state: Any, sector: int) -> bool:
        """Whether the door sector is shut or closing (USE then opens it; on an opening door it would close it)."""
        sectors = state.sectors
        if sector >= len(sectors):
            return False
        s = sectors[sector]
        gap = s.ceiling_height - s.floor_height
        before = self._door_ceiling.get(sector)
        self._door_ceiling[sector] = s.ceiling_height
        closing = before is not None and s.ceiling_height < before
        return gap <= 0.5 or (closing and gap < DOOR_OPEN)

    # --- the policy ----------------------------------------------------------

    def act(self, game: Any, state: Any) -> list[int]:
        pose = player_pose(game)
        kills = game.get_game_variable(GameVariable.KILLCOUNT)
        if kills > self._kills and self._target is not None:
            self._dead.add(self._target)
            self._target, self._fought = None, 0
        self._kills = kills
        self._trail.append((pose.x, pose.y))

        seen = self._visible_monsters(state, pose.x, pose.y)
        if seen and self._shotgun_at_hand(game, state, pose.x, pose.y):
            seen = []  # two steps to a shotgun beat a fight with the pistol
        if seen:
            d, target = next(((d, o) for d, o in seen if o.id == self._target), seen[0])
            if target.id != self._target:
                self._target, self._fought = target.id, 0
            self._fought += 1
            if self._fought > GIVE_UP:
                self._ignored.add(target.id)
                self._target = None
            err = relative_bearing(pose.x, pose.y, pose.angle, target.position_x, target.position_y)
            turn = turn_toward(err, AIM_FLOOR)
            buttons = [turn] if turn else []
            if abs(err) <= aim_tolerance(d, AIM_RADIUS, floor=AIM_FLOOR):
                buttons.append("ATTACK")
            if d < BACK_OFF:
                buttons.append("MOVE_BACKWARD")
            return self.press(*buttons)

        if self._unstick > 0:
            self._unstick -= 1
            return self.press("MOVE_BACKWARD", self._unstick_turn)
        if len(self._trail) == STUCK_TICS:
            (ax, ay), (bx, by) = self._trail[0], self._trail[-1]
            if distance(ax, ay, bx, by) < STUCK_UNITS:
                self._unstick = UNSTICK_TICS
                self._unstick_turn = self._rng.choice(("TURN_LEFT", "TURN_RIGHT"))
                self._trail.clear()
                return self.press("MOVE_BACKWARD", self._unstick_turn)

        step = self.nav.step(pose.x, pose.y, self._goal(game, state, pose.x, pose.y))
        if step is None:
            return self.press("TURN_LEFT", "MOVE_FORWARD")
        err = relative_bearing(pose.x, pose.y, pose.angle, *step.target)
        buttons = []
        turn = turn_toward(err, 4.0)
        if turn:
            buttons.append(turn)
        if abs(err) < RUN_CONE:
            buttons.append("MOVE_FORWARD")
        if step.door is not None:
            door_xy = self.nav.centre(step.door)
            if distance(pose.x, pose.y, *door_xy) < USE_REACH and self._door_closed(state, self.nav.sector(step.door)):
                buttons.append("USE")
        return self.press(*buttons)
