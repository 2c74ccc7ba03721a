"""Expert for deathmatch (``deathmatch``'s monsters, its own default; ``cig`` and ``multi_duel`` in a match): arm,
then fight what is on screen.

It fights only foes on screen: the engine's labels say which players and
monsters are there, and where, sparing it the vision. Where the engine lists
the map's items (``state.objects``; empty under ``+viz_nocheat 1``) it also
walks the shortest path to a better weapon than the pistol, to health when
hurt and to ammunition when short, past foes if it is still unarmed. Its
demonstrations (``golem run record --expert deathmatch``, ``golem run match
--agents expert:deathmatch --record``) are ``source = expert``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from vizdoom import GameVariable

from golem.experts import Expert, base_actor_name
from golem_experts.geometry import NavGrid, blocking_walls, distance, relative_bearing, turn_deadband, turn_toward
from golem_experts.privileged import DOOM_MONSTERS, enable_sectors, player_pose

#: Label names of players (people, agents and the engine's bots alike).
PLAYER_LABELS = ("DoomPlayer", "Player")
#: Label names of Doom's monsters (cooperative play, the single-player ``deathmatch`` scenario).
MONSTER_LABELS = (*sorted(DOOM_MONSTERS), "MarineChainsawVzd")
FOES = PLAYER_LABELS + MONSTER_LABELS
#: Fraction of the screen width around the centre counted as on target.
AIM_BAND = 0.04
#: Tics without moving more than :data:`STUCK_UNITS` map units that mean a wall is in the way.
STUCK_TICS = 8
STUCK_UNITS = 4.0
#: Tics spent turning away from a wall.
TURN_TICS = 12
#: Weapons worth fetching while it holds only the fist or the pistol (``SELECTED_WEAPON`` 1–2). Not the
#: rocket launcher (its blast kills the player at the close range monsters fight at) nor the chainsaw (melee).
WEAPONS = ("SuperShotgun", "Shotgun", "Chaingun", "PlasmaRifle")
#: Pickups the path planner steers around: picking them up switches to a worse weapon.
AVOID = ("RocketLauncher", "Chainsaw")
#: ``SELECTED_WEAPON`` from which the expert counts as armed (3: shotguns; a held rocket launcher counts).
ARMED = 3
#: Ammunition pickups per weapon slot.
AMMO = {
    2: ("ClipBox", "Clip"),
    3: ("ShellBox", "Shell"),
    4: ("ClipBox", "Clip"),
    5: ("RocketBox", "RocketAmmo"),
    6: ("CellPack", "Cell"),
    7: ("CellPack", "Cell"),
}
HEALTH_ITEMS = ("Medikit", "Stimpack")
#: What to collect when armed, healthy and supplied (with the weapon's ammunition and health).
EXTRAS = ("BlueArmor", "GreenArmor", "HealthBonus", "ArmorBonus")
#: Health and rounds below which the expert goes for health and ammunition first.
LOW_HEALTH = 50.0
LOW_AMMO = 20.0
#: Path planning: grid cell, wall clearance and the avoided pickups' radius (map units); cells ahead steered at.
CELL = 16.0
CLEARANCE = 20.0
AVOID_RADIUS = 40.0
LOOKAHEAD = 4
#: Run forward while the waypoint is within this bearing error; smallest error turned for (degrees).
RUN_CONE = 40.0
TURN_FLOOR = 3.0


class DeathmatchExpert(Expert):
    """Shoots the largest (nearest) foe on screen (another player, or a monster) once armed; otherwise walks
    to the item it needs most (:meth:`_wanted`), firing at foes that cross its aim; with nothing to fetch,
    roams forward and turns away from walls it is stuck on."""

    name: ClassVar[str] = "deathmatch"
    # the single-player map first: it is what `golem run record --expert deathmatch` plays without --scenario
    # (cig and multi_duel start only inside a network game)
    scenarios: ClassVar[tuple[str, ...]] = ("deathmatch", "cig", "multi_duel")

    def configure(self, game: Any) -> None:
        game.set_labels_buffer_enabled(True)
        game.set_objects_info_enabled(True)  # its own body's label; the items it fetches
        enable_sectors(game)  # the walls its paths go around

    def reset(self, game: Any) -> None:
        self._trail: list[tuple[float, float]] = []
        self._turning = 0
        self._turn = "TURN_RIGHT"
        self._t = 0
        self._grid: NavGrid | None = None
        self._goal: int | None = None

    def _wanted(self, game: Any, state: Any, x: float, y: float) -> Any | None:
        """The nearest item (a ``state.objects`` entry) of the first kind it lacks: health when low, a
        better weapon than the pistol, its weapon's ammunition when short, then armour, health and
        ammunition; ``None`` when the engine lists no such item."""
        weapon = int(game.get_game_variable(GameVariable.SELECTED_WEAPON))
        ammo = AMMO.get(weapon, ())
        tiers: list[tuple[str, ...]] = []
        if game.get_game_variable(GameVariable.HEALTH) < LOW_HEALTH:
            tiers.append(HEALTH_ITEMS)
        if weapon < ARMED:
            tiers.append(WEAPONS)
        if game.get_game_variable(GameVariable.SELECTED_WEAPON_AMMO) < LOW_AMMO:
            tiers.append(ammo)
        tiers.append(EXTRAS + ammo + HEALTH_ITEMS)
        objects = state.objects or ()
        for names in tiers:
            items = [o for o in objects if base_actor_name(o.name) in names]
            if items:
                return min(items, key=lambda o: distance(x, y, o.position_x, o.position_y))
        return None

    def _walk_to(self, game: Any, state: Any, item: Any, aimed: bool) -> list[int]:
        """Buttons that follow the shortest path to ``item``, and fire when a foe is in the aim (``aimed``)."""
        if self._grid is None:
            self._grid = NavGrid(blocking_walls(state.sectors), cell=CELL, clearance=CLEARANCE)
            self._grid.set_obstacles(
                [(o.position_x, o.position_y) for o in state.objects if base_actor_name(o.name) in AVOID], AVOID_RADIUS
            )
        if self._goal != item.id:
            self._goal = item.id
            self._grid.set_goal(item.position_x, item.position_y)
        pose = player_pose(game)
        wx, wy = self._grid.waypoint(pose.x, pose.y, LOOKAHEAD)
        err = relative_bearing(pose.x, pose.y, pose.angle, wx, wy)
        turn = turn_toward(err, turn_deadband(self.hold, TURN_FLOOR))
        buttons = [turn] if turn else []
        if abs(err) < RUN_CONE:
            buttons.append("MOVE_FORWARD")
        if aimed:
            buttons.append("ATTACK")
        return self.press(*buttons)

    def _target(self, state: Any, x: float, y: float) -> tuple[float, float] | None:
        """``(x offset from the screen centre as a fraction of the width, label area)`` of the nearest foe on
        screen, the player standing at ``(x, y)`` excluded (the engine labels its own body too)."""
        buffer = getattr(state, "labels_buffer", None)
        if buffer is None or not state.labels:
            return None
        own = {
            o.id
            for o in (state.objects or ())
            if base_actor_name(o.name) in PLAYER_LABELS and abs(o.position_x - x) < 1.0 and abs(o.position_y - y) < 1.0
        }
        width = float(buffer.shape[-1])
        best: tuple[float, float] | None = None
        for label in state.labels:
            if base_actor_name(label.object_name) not in FOES or label.object_id in own:
                continue
            area = float(label.width * label.height)
            centre = (label.x + label.width / 2.0) / width - 0.5
            if best is None or area > best[1]:
                best = (centre, area)
        return best

    def act(self, game: Any, state: Any) -> list[int]:
        self._t += 1
        x = game.get_game_variable(GameVariable.POSITION_X)
        y = game.get_game_variable(GameVariable.POSITION_Y)
        target = self._target(state, x, y)
        item = self._wanted(game, state, x, y) if state.sectors else None
        armed = int(game.get_game_variable(GameVariable.SELECTED_WEAPON)) >= ARMED
        if target is not None and (armed or item is None):
            offset, _ = target
            if abs(offset) <= AIM_BAND:
                return self.press("ATTACK")
            turn = "TURN_RIGHT" if offset > 0 else "TURN_LEFT"
            return self.press(turn, "ATTACK") if abs(offset) < 2 * AIM_BAND else self.press(turn)
        if item is not None:
            return self._walk_to(game, state, item, target is not None and abs(target[0]) <= AIM_BAND)
        if self._turning:
            self._turning -= 1
            return self.press(self._turn)
        self._trail = [*self._trail[-(STUCK_TICS - 1) :], (x, y)]
        if len(self._trail) == STUCK_TICS:
            (x0, y0) = self._trail[0]
            if abs(x - x0) + abs(y - y0) < STUCK_UNITS:
                self._turning = TURN_TICS
                self._turn = "TURN_LEFT" if (self._t // 97) % 2 else "TURN_RIGHT"
                self._trail = []
                return self.press(self._turn)
        return self.press("MOVE_FORWARD")
