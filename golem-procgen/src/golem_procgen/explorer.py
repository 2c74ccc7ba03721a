"""The ``explorer`` expert: plays any map with a navigation sidecar from it and the engine's privileged state.

The sidecar comes from the builtin generator or is built from the WAD itself
(:mod:`golem_procgen.wadnav`: Oblige's maps, any PWAD). Each tic, in order of
urgency:

1. a monster in sight (``state.objects``, sight lines over the sidecar's
   cells; on maps built from a WAD also what the engine's labels show on
   screen: over ledges, through windows) within :data:`ENGAGE` units: turn to
   the nearest and fire while the aim is on it. On maps built from a WAD a far
   monster that has not moved is taken for asleep and left alone until the
   player is hurt: then every monster near counts as awake, and with none on
   screen the player turns toward the nearest to find what shoots it;
2. health below :data:`LOW_HEALTH`, no shotgun yet, or no ammunition, and a
   health item (the shotgun, ammunition) still on the map: walk to the nearest
   one by path;
3. otherwise walk to the exit: down the sidecar's distance field (stairs
   climbed, liquids avoided, teleport pads and lines taken when they shorten
   the way), pressing USE at a closed door on the path. When the exit is out
   of reach behind a locked door or a switch-opened door, bars or floor, the
   nearest key or switch that can be reached comes first (a key is held once
   its pickup is gone from the map; a switch counts as pressed once a sector it
   opens has moved). At a switch or an exit switch it turns to the line and
   presses USE (an exit walked over is crossed, one shot at is shot); in front
   of a raised lift it presses USE, and on a lift it waits for the floor.

Kills are attributed to the monster last fired at (``KILLCOUNT`` rises), so
corpses are not shot again; a monster fought for :data:`GIVE_UP` tics without
a kill is left alone, and a player that has not moved for a second backs off
and turns away. USE is pressed every other tic: the engine acts on a press,
not on a held button.
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
from golem_experts.privileged import DOOM_MONSTERS, enable_objects, enable_sectors, player_pose
from golem_procgen.navigation import NONE, Goal, NavMap, Step, Tokens, sidecar_path
from golem_procgen.specials import COLOURS, KEY_ACTORS

#: The monsters the explorer fights (Doom 2's, by actor name).
MONSTERS = DOOM_MONSTERS
#: How much sooner a monster is fought than its distance alone says: the hitscanners hurt most at a distance.
THREAT: dict[str, float] = {"ChaingunGuy": 3.0, "ShotgunGuy": 2.5, "WolfensteinSS": 2.0, "Zombieman": 1.5}
#: Weapons by the game variable that says whether the player holds one of their slot.
WEAPON_SLOTS: dict[str, GameVariable] = {
    "Shotgun": GameVariable.WEAPON3,
    "SuperShotgun": GameVariable.WEAPON3,
    "Chaingun": GameVariable.WEAPON4,
    "RocketLauncher": GameVariable.WEAPON5,
    "PlasmaRifle": GameVariable.WEAPON6,
}
#: Monsters whose missiles a sidestep every DODGE_TICS tics avoids.
THROWERS = frozenset({"DoomImp", "Cacodemon", "HellKnight", "BaronOfHell", "Revenant", "Fatso", "Arachnotron"})
DODGE_TICS = 24
HEALTH_ITEMS = frozenset({"Stimpack", "Medikit", "Soulsphere", "Megasphere"})
AMMO_ITEMS = frozenset({"Clip", "ClipBox", "Shell", "ShellBox", "Shotgun", "Backpack"})
ARMOUR = frozenset({"GreenArmor", "BlueArmor"})
#: Weapons fetched while the player has only the pistol (the builtin generator places the shotgun).
WEAPONS = frozenset({"Shotgun", "SuperShotgun", "Chaingun"})
#: Monsters farther than this (map units) are not fought.
ENGAGE = 900.0
#: On maps built from a WAD, a monster farther than this (map units) that has not moved is left alone.
QUIET = 320.0
#: Health under which the expert fetches a health item first; rounds under which it fetches ammunition.
LOW_HEALTH, LOW_AMMO = 60.0, 0.0
#: Tics the player turns toward the nearest monster when hurt by none on screen (maps built from a WAD).
LOOK_TICS = 20
#: On maps built from a WAD (many monsters, ammunition lying about), rounds under which ammunition is fetched.
LOW_AMMO_WAD = 20.0
#: Pickups within this many map units (and path cost, cells) are taken on the way (maps built from a WAD).
PICK_UP, PICK_UP_COST = 192.0, 8.0
#: A shotgun this close (map units) is fetched before any fight.
GRAB = 192.0
#: A monster closer than this (map units) is fought backing away.
BACK_OFF = 160.0
#: Half-width (map units) of the body the aim must fall within; smallest aim error (degrees) treated as on.
AIM_RADIUS, AIM_FLOOR = 10.0, 1.5
#: Tics a monster is fought without a kill before it is left alone.
GIVE_UP = 175
#: Shots at one monster without a hit (``HITCOUNT``) after which it is left alone for MISSED_IGNORE tics.
MISSES, MISSED_IGNORE = 6, 350
#: Run forward while the waypoint is within this bearing error, degrees.
RUN_CONE = 35.0
#: Stuck: moved less than STUCK_UNITS over STUCK_TICS tics; then back off for UNSTICK_TICS.
STUCK_TICS, STUCK_UNITS, UNSTICK_TICS = 35, 24.0, 12
#: Reach of USE, map units, and the height a door must be open to be walked through.
USE_REACH, DOOR_OPEN = 96.0, 64.0
#: Map units ahead of the player the waypoint is taken (cells of the sidecar, at least two).
LOOKAHEAD_UNITS = 128.0
#: Within this distance (map units) of a switch's line the expert turns to it and presses USE; it walks up to
#: :data:`PRESS_AT` of it first.
SWITCH_REACH, PRESS_AT = 96.0, 40.0
#: Path cost (cells) to a switch's or the exit's standing cell within which the expert starts working it.
OPERATE_WITHIN = 4.0
#: Tics spent pressing at a switch (or an exit) that changes nothing before it is given up.
SWITCH_GIVE_UP = 140
#: Tics of walking toward one goal without getting nearer after which it is given up (the exit is not).
GOAL_PATIENCE = 350
#: Tics standing at a pickup's cell without taking it after which it is given up.
AT_GOAL_PATIENCE = 70
#: A rise (map units) over which the next cell of the path cannot be stepped onto now (a lift up, a floor
#: not yet lowered).
STEP_UP = 24.0


class ExplorerExpert(Expert):
    """Reaches the exit of a map with a navigation sidecar, fighting what it meets, healing when low, fetching
    keys and pressing switches on the way."""

    name: ClassVar[str] = "explorer"
    scenarios: ClassVar[tuple[str, ...]] = ("procgen",)
    #: Plays generated maps (``--procgen-phase``) rather than a fixed scenario.
    procedural: ClassVar[bool] = True

    @classmethod
    def plays(cls, scenario: str) -> bool:
        """Whether ``scenario`` (a ``.cfg`` or ``.wad`` path) has a navigation sidecar beside its WAD."""
        path = Path(scenario)
        return path.suffix.lower() in (".cfg", ".wad") and sidecar_path(path.with_suffix(".wad")).is_file()

    def configure(self, game: Any) -> None:
        enable_objects(game)
        enable_sectors(game)
        wad = game.get_doom_scenario_path()
        if wad and sidecar_path(wad).is_file():
            self._load(wad)
            if self.nav.per_move:  # what is on screen: sight over ledges and through windows
                game.set_labels_buffer_enabled(True)  # (not on the builtin maps: it costs a third of the speed)

    def _load(self, wad: str) -> None:
        """Read the navigation sidecar of ``wad`` (once per map)."""
        if getattr(self, "_wad", None) != wad:
            nav = NavMap.load(sidecar_path(wad))
            if nav.exit is None:
                raise GolemError(f"the navigation sidecar of {wad} has no exit: nothing for the explorer to reach")
            self.nav = nav
            self._wad = wad

    def reset(self, game: Any) -> None:
        wad = game.get_doom_scenario_path()
        if not wad:
            raise GolemError("the explorer plays maps with a navigation sidecar; this game has no scenario WAD")
        self._load(wad)
        self._dead: set[int] = set()
        self._ignored: dict[int, float] = {}  # monster id → tic until which it is left alone
        self._hits = game.get_game_variable(GameVariable.HITCOUNT)
        self._health = game.get_game_variable(GameVariable.HEALTH)
        self._labelled: tuple[int, frozenset[int]] = (-1, frozenset())
        self._look: tuple[int, int] | None = None  # monster id, tic until which the player turns toward it
        self._seen_at: dict[int, tuple[float, float]] = {}
        self._moved: set[int] = set()
        self._misses = 0
        self._kills = game.get_game_variable(GameVariable.KILLCOUNT)
        self._target: int | None = None
        self._fought = 0
        self._trail: deque[tuple[float, float]] = deque(maxlen=STUCK_TICS)
        self._unstick = 0
        self._unstick_turn = "TURN_LEFT"
        self._door_ceiling: dict[int, float] = {}
        self._rng = random.Random(int(game.get_seed()))
        self._tic = 0
        self._lookahead = max(2, round(LOOKAHEAD_UNITS / self.nav.cell))
        self._keys: dict[int, str] | None = None  # key pickups on the map at the start: id → colour
        self._pressed: set[str] = set()
        self._given_up: set[str] = set()
        self._pressing: tuple[str, int] | None = None
        self._skip: set[tuple[int, int]] = set()  # goal cells given up on (an item out of reach after all)
        self._spots: dict[tuple[int, int], tuple[float, float]] = {}  # where in a goal cell its pickup lies
        self._walked = 0
        self._retried = 0
        self._optimistic = False  # planning as if every lock were open (nothing that opens the way is in reach)
        self._watch: tuple[Any, float, int] | None = None  # goal, best remaining cost, walked tics then

    # --- helpers -------------------------------------------------------------

    def _in_sight(self, state: Any, x: float, y: float, monster: Any) -> bool:
        """Whether ``monster`` can be seen: on screen (the engine's labels, on maps built from a WAD) or along a
        clear line over the sidecar's cells."""
        if self.nav.per_move and monster.id in self._on_screen(state):
            return True
        return self.nav.line_of_sight((x, y), (monster.position_x, monster.position_y))

    def _on_screen(self, state: Any) -> frozenset[int]:
        """Ids of the objects the engine's labels show on screen this tic (read once a tic)."""
        if self._labelled[0] != self._tic:
            self._labelled = (self._tic, frozenset(label.object_id for label in (state.labels or ())))
        return self._labelled[1]

    def _visible_monsters(self, state: Any, x: float, y: float) -> list[tuple[float, Any]]:
        out = []
        for o in state.objects:
            if o.name not in MONSTERS or o.id in self._dead or self._ignored.get(o.id, -1.0) >= self._tic:
                continue
            d = distance(x, y, o.position_x, o.position_y)
            if self.nav.per_move and d > QUIET and not self._awake(o):
                continue  # still and far: asleep, most likely (a shot would wake it and every other in earshot)
            if d < ENGAGE and self._in_sight(state, x, y, o):
                out.append((d, o))
        return sorted(out, key=lambda t: (t[0] / THREAT.get(t[1].name, 1.0), t[1].id))

    def _awake(self, monster: Any) -> bool:
        """Whether ``monster`` is awake: it has moved since the expert first saw it (a sleeping monster stands
        still), or it was within :data:`ENGAGE` units when the player was hurt (one that shoots from where it
        stands never moves)."""
        first = self._seen_at.setdefault(monster.id, (monster.position_x, monster.position_y))
        if monster.id in self._moved:
            return True
        if distance(first[0], first[1], monster.position_x, monster.position_y) > 8.0:
            self._moved.add(monster.id)
            return True
        return False

    def _hurt_by(self, state: Any, x: float, y: float) -> None:
        """The player was hurt: every monster within :data:`ENGAGE` units counts as awake (fought once seen), one
        on screen is fought again though it was left alone (it can reach the player, so it can be reached), and
        with none on screen the player turns toward the nearest for :data:`LOOK_TICS` tics."""
        nearest: tuple[float, int] | None = None
        shown = False
        for o in state.objects:
            if o.name not in MONSTERS or o.id in self._dead:
                continue
            d = distance(x, y, o.position_x, o.position_y)
            if d >= ENGAGE:
                continue
            self._moved.add(o.id)
            if o.id in self._on_screen(state):
                self._ignored.pop(o.id, None)
                shown = True
            elif nearest is None or d < nearest[0]:
                nearest = (d, o.id)
        if nearest is not None and not shown and self._look is None:
            self._look = (nearest[1], self._tic + LOOK_TICS)

    def _tokens(self, state: Any) -> Tokens:
        """Key colours held (their pickups gone from the map) and switches pressed (a sector they open moved)."""
        present = {o.id: KEY_ACTORS[o.name] for o in state.objects if o.name in KEY_ACTORS}
        if self._keys is None:
            self._keys = present
        held = {colour for k, colour in self._keys.items() if k not in present}
        sectors = state.sectors
        for switch in self.nav.nav.get("switches", []):
            if switch["id"] in self._pressed:
                continue
            for s in switch["opens"]:
                spec = self.nav.sectors[s] if s < len(self.nav.sectors) else None
                if spec is not None and s < len(sectors):
                    moved = abs(sectors[s].floor_height - spec["floor"]) + abs(
                        sectors[s].ceiling_height - spec["ceiling"]
                    )
                    if moved > 0.5:
                        self._pressed.add(switch["id"])
                        break
        return frozenset(held | self._pressed)

    def _ammo(self, game: Any) -> float:
        """Rounds for the weapons held: bullets (pistol, chaingun), and shells once a shotgun is held."""
        shells = game.get_game_variable(GameVariable.AMMO3) if game.get_game_variable(GameVariable.WEAPON3) > 0 else 0
        return game.get_game_variable(GameVariable.AMMO2) + shells

    def _wanted(self, game: Any) -> frozenset[str]:
        health = game.get_game_variable(GameVariable.HEALTH)
        if health < LOW_HEALTH:
            return HEALTH_ITEMS
        if game.get_game_variable(GameVariable.WEAPON3) <= 0 and game.get_game_variable(GameVariable.WEAPON4) <= 0:
            return WEAPONS
        if self._ammo(game) <= (LOW_AMMO_WAD if self.nav.per_move else LOW_AMMO):
            return AMMO_ITEMS
        return frozenset()

    def _nearby(self, game: Any, state: Any, x: float, y: float) -> frozenset[tuple[int, int]]:
        """Cells of pickups within :data:`PICK_UP` units that the player would take: health under its cap,
        armour, ammunition for the weapons held under its cap, weapons not held."""
        var = game.get_game_variable
        health, armour = var(GameVariable.HEALTH), var(GameVariable.ARMOR)
        useful: set[str] = set()
        if health < 100:
            useful |= HEALTH_ITEMS
        if health < 200:
            useful |= {"HealthBonus", "Soulsphere"}
        if armour < 100:
            useful |= ARMOUR
        if armour < 200:
            useful |= {"ArmorBonus"}
        if var(GameVariable.AMMO2) < 200:
            useful |= {"Clip", "ClipBox", "Backpack"}
        if var(GameVariable.WEAPON3) > 0 and var(GameVariable.AMMO3) < 50:
            useful |= {"Shell", "ShellBox", "Backpack"}
        useful |= {name for name, slot in WEAPON_SLOTS.items() if var(slot) <= 0}
        out = set()
        for o in state.objects:
            if o.name in useful and distance(x, y, o.position_x, o.position_y) < PICK_UP:
                cell = self.nav.cell_of(o.position_x, o.position_y)
                if cell not in self._skip:
                    out.add(cell)
                    self._spots[cell] = (o.position_x, o.position_y)
        return frozenset(out)

    def _goal(self, game: Any, state: Any, x: float, y: float, tokens: Tokens) -> tuple[Goal, dict | None]:
        """The cells to walk to and, at a switch or the exit, what to do there (``None``: just get there)."""
        here = self.nav.cell_of(x, y)
        wanted = self._wanted(game)
        if wanted:
            items = frozenset(
                cell
                for o in state.objects
                if o.name in wanted and (cell := self.nav.cell_of(o.position_x, o.position_y)) not in self._skip
            )
            if items and self.nav.field(items, tokens).get(here) is not None:
                return items, None
        if self.nav.per_move:  # maps with many pickups: take the ones beside the way
            near = self._nearby(game, state, x, y)
            if near and self.nav.field(near, tokens).get(here, PICK_UP_COST + 1) <= PICK_UP_COST:
                return near, None
        exit_cell = self.nav.cell_of(*self.nav.exit)
        if self.nav.reachable((x, y), self.nav.exit, tokens):
            return exit_cell, self._exit_task()
        # The exit is locked away: the nearest key or switch that can be reached comes first.
        targets: dict[tuple[int, int], dict | None] = {}
        for o in state.objects:
            cell = self.nav.cell_of(o.position_x, o.position_y)
            if o.name in KEY_ACTORS and KEY_ACTORS[o.name] not in tokens and cell not in self._skip:
                targets.setdefault(cell, None)
        for switch in self.nav.nav.get("switches", []):
            sid = switch["id"]
            if sid in self._pressed or sid in self._given_up:
                continue
            if switch.get("lock") and not NavMap.unlocked_by(switch["lock"], tokens):
                continue
            at = switch.get("at") or switch.get("beyond")
            if at is not None:
                targets.setdefault(self.nav.cell_of(*at), switch)
        if targets:
            path = self.nav.path((x, y), frozenset(targets), tokens=tokens)
            if path:  # it ends on a target, or beside one nothing walks into
                end = path[-1]
                cell = min(targets, key=lambda c: (abs(c[0] - end[0]) + abs(c[1] - end[1]), c))
                return cell, targets[cell]
        # Nothing that opens the way can be reached: try again what was given up, and meanwhile head for the exit
        # as if every lock were open (a door or a key the sidecar misjudged).
        if (self._skip or self._given_up) and self._walked - self._retried > GOAL_PATIENCE:
            self._skip.clear()
            self._given_up.clear()
            self._retried = self._walked
        self._optimistic = True
        return exit_cell, self._exit_task()

    def _exit_task(self) -> dict | None:
        nav = self.nav.nav
        if nav.get("exit_line") is None:
            return None  # the builtin exit pad: walking onto it ends the level
        return {"id": "exit", "line": nav["exit_line"], "trigger": nav.get("exit_trigger", "use"), "at": nav["exit"]}

    def _shotgun_at_hand(self, game: Any, state: Any, x: float, y: float) -> bool:
        """Whether the player has no shotgun and one lies within :data:`GRAB` units."""
        if game.get_game_variable(GameVariable.WEAPON3) > 0 or game.get_game_variable(GameVariable.WEAPON4) > 0:
            return False
        return any(o.name in WEAPONS and distance(x, y, o.position_x, o.position_y) < GRAB for o in state.objects)

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

    def _floor_at(self, state: Any, cell: tuple[int, int]) -> float | None:
        s = self.nav.sector(cell)
        sectors = state.sectors
        return float(sectors[s].floor_height) if 0 <= s < len(sectors) else None

    def _use(self) -> list[str]:
        """USE on every other tic: the engine acts on a press, not on a button held down."""
        return ["USE"] if self._tic % 2 == 0 else []

    def _operate(self, task: dict, pose: Any) -> list[int] | None:
        """At a switch or the exit line: turn to it and press USE (shoot, or walk across); ``None``: not there."""
        (ax, ay), (bx, by) = task["line"]
        mx, my = (ax + bx) / 2, (ay + by) / 2
        d = distance(pose.x, pose.y, mx, my)
        if d > SWITCH_REACH:
            return None
        key = task["id"]
        if self._pressing is None or self._pressing[0] != key:
            self._pressing = (key, 0)
        self._pressing = (key, self._pressing[1] + 1)
        if self._pressing[1] > SWITCH_GIVE_UP:
            self._pressing = None
            if key != "exit":
                self._given_up.add(key)
                return None
            self._unstick, self._unstick_turn = UNSTICK_TICS, self._rng.choice(("TURN_LEFT", "TURN_RIGHT"))
            return self.press("MOVE_BACKWARD", self._unstick_turn)
        self._trail.clear()  # standing still on purpose
        if task["trigger"] == "cross":
            side = (bx - ax) * (pose.y - ay) - (by - ay) * (pose.x - ax)
            beyond = task.get("beyond") if side < 0 else task.get("at")  # the front lies right of a → b
            tx, ty = beyond if beyond else (mx, my)
            err = relative_bearing(pose.x, pose.y, pose.angle, tx, ty)
            turn = turn_toward(err, 4.0)
            return self.press(*([turn] if turn else []), *(["MOVE_FORWARD"] if abs(err) < RUN_CONE else []))
        err = relative_bearing(pose.x, pose.y, pose.angle, mx, my)
        turn = turn_toward(err, 2.0)
        buttons = [turn] if turn else []
        if abs(err) < 20.0:
            if task["trigger"] == "shoot":
                buttons.append("ATTACK")
            else:
                buttons += self._use()
                if d > PRESS_AT:
                    buttons.append("MOVE_FORWARD")
        return self.press(*buttons)

    # --- the policy ----------------------------------------------------------

    def act(self, game: Any, state: Any) -> list[int]:
        self._tic += 1
        pose = player_pose(game)
        kills = game.get_game_variable(GameVariable.KILLCOUNT)
        if kills > self._kills and self._target is not None:
            self._dead.add(self._target)
            self._target, self._fought = None, 0
        self._kills = kills
        self._trail.append((pose.x, pose.y))

        health = game.get_game_variable(GameVariable.HEALTH)
        if self.nav.per_move and health < self._health:
            self._hurt_by(state, pose.x, pose.y)
        self._health = health

        hits = game.get_game_variable(GameVariable.HITCOUNT)
        if hits > self._hits:
            self._misses = 0
        self._hits = hits

        seen = self._visible_monsters(state, pose.x, pose.y)
        if seen and self._shotgun_at_hand(game, state, pose.x, pose.y):
            seen = []  # two steps to a shotgun beat a fight with the pistol
        if seen and self._ammo(game) <= 0:
            seen = []  # nothing to shoot with: on to the ammunition
        if seen:
            d, target = next(((d, o) for d, o in seen if o.id == self._target), seen[0])
            if target.id != self._target:
                self._target, self._fought, self._misses = target.id, 0, 0
            self._fought += 1
            if self._fought > GIVE_UP:
                self._ignored[target.id] = float("inf")
                self._target = None
            elif self._misses >= MISSES:  # out of the line of fire after all (a ledge, bars, a window)
                self._ignored[target.id] = self._tic + MISSED_IGNORE
                self._target = None
            err = relative_bearing(pose.x, pose.y, pose.angle, target.position_x, target.position_y)
            turn = turn_toward(err, AIM_FLOOR)
            buttons = [turn] if turn else []
            ready = game.get_game_variable(GameVariable.ATTACK_READY) > 0  # released meanwhile: no inaccurate refire
            if ready and abs(err) <= aim_tolerance(d, AIM_RADIUS, floor=AIM_FLOOR):
                buttons.append("ATTACK")
                self._misses += 1
            if d < BACK_OFF:
                buttons.append("MOVE_BACKWARD")
            else:
                moves = self._advance(game, state, pose)
                if not {"MOVE_LEFT", "MOVE_RIGHT"} & set(moves) and target.name in THROWERS:
                    moves.append("MOVE_LEFT" if (self._tic // DODGE_TICS) % 2 else "MOVE_RIGHT")  # sidestep missiles
                buttons += moves
            return self.press(*buttons)

        if self._look is not None:
            looked = self._look_around(state, pose)
            if looked is not None:
                return looked
        if self._unstick > 0:
            self._unstick -= 1
            return self.press("MOVE_BACKWARD", self._unstick_turn)
        goal, task, tokens, step = self._plan(game, state, pose)
        if step is not None and self._stalled(goal, task, step.remaining):
            self._unstick, self._unstick_turn = UNSTICK_TICS, self._rng.choice(("TURN_LEFT", "TURN_RIGHT"))
            return self.press("MOVE_BACKWARD", self._unstick_turn)
        if task is not None and (step is None or step.remaining <= OPERATE_WITHIN):
            operated = self._operate(task, pose)
            if operated is not None:
                return operated
        if len(self._trail) == STUCK_TICS:
            (ax, ay), (bx, by) = self._trail[0], self._trail[-1]
            if distance(ax, ay, bx, by) < STUCK_UNITS:
                self._unstick = UNSTICK_TICS
                self._unstick_turn = self._rng.choice(("TURN_LEFT", "TURN_RIGHT"))
                self._trail.clear()
                return self.press("MOVE_BACKWARD", self._unstick_turn)
        if step is None:
            return self.press("TURN_LEFT", "MOVE_FORWARD")
        if step.remaining <= 0.0:  # at (or beside) the goal's cell: straight at the pickup, or the cell's middle
            cells = sorted(goal) if isinstance(goal, frozenset) else [goal]
            spots = [self._spots.get(c) or self.nav.centre(c) for c in cells]
            step.target = min(spots, key=lambda p: distance(pose.x, pose.y, *p))
        lift = self._lift(state, pose, goal, tokens)
        if lift is not None:
            return lift
        err = relative_bearing(pose.x, pose.y, pose.angle, *step.target)
        buttons = []
        turn = self._steer(err)
        if turn:
            buttons.append(turn)
        if abs(err) < RUN_CONE:
            buttons.append("MOVE_FORWARD")
        if step.door is not None:
            door_xy = self.nav.centre(step.door)
            if distance(pose.x, pose.y, *door_xy) < USE_REACH and self._door_closed(state, self.nav.sector(step.door)):
                buttons += self._use()
        return self.press(*buttons)

    def _look_around(self, state: Any, pose: Any) -> list[int] | None:
        """Turning toward the monster that may have hurt the player (``None``: done looking, or it is gone)."""
        mid, until = self._look  # type: ignore[misc]
        target = next((o for o in state.objects if o.id == mid), None)
        if self._tic > until or target is None or mid in self._dead:
            self._look = None
            return None
        err = relative_bearing(pose.x, pose.y, pose.angle, target.position_x, target.position_y)
        turn = turn_toward(err, RUN_CONE / 2)
        if turn is None:
            self._look = None
            return None
        return self.press(turn)

    def _steer(self, err: float) -> str | None:
        """The turn that keeps the player on its way, ``err`` degrees off its waypoint (``None``: straight on)."""
        return turn_toward(err, 4.0)

    def _plan(self, game: Any, state: Any, pose: Any) -> tuple[Goal, dict | None, Tokens, Step | None]:
        """Where to go now: the goal, what to do there, the tokens planned with, and the next step."""
        tokens = self._tokens(state) if self.nav.locks or self.nav.nav.get("switches") else NONE
        self._optimistic = False
        goal, task = self._goal(game, state, pose.x, pose.y, tokens)
        if self._optimistic:
            tokens = self.nav.all_tokens() | frozenset(COLOURS)
        return goal, task, tokens, self.nav.step(pose.x, pose.y, goal, lookahead=self._lookahead, tokens=tokens)

    def _advance(self, game: Any, state: Any, pose: Any) -> list[str]:
        """The moves (forward, back, sideways: the view stays on the fight) that keep the player going its way."""
        step = self._plan(game, state, pose)[3]
        if step is None or step.remaining <= 0.0:
            return []
        rel = relative_bearing(pose.x, pose.y, pose.angle, *step.target)
        moves = []
        if abs(rel) < 67.5:
            moves.append("MOVE_FORWARD")
        elif abs(rel) > 112.5:
            moves.append("MOVE_BACKWARD")
        if 22.5 < rel < 157.5:
            moves.append("MOVE_LEFT")
        elif -157.5 < rel < -22.5:
            moves.append("MOVE_RIGHT")
        return moves

    def _stalled(self, goal: Goal, task: dict | None, remaining: float) -> bool:
        """Whether the way to ``goal`` has not got shorter for :data:`GOAL_PATIENCE` tics of walking (or the
        player has stood at it for :data:`AT_GOAL_PATIENCE` tics: a pickup it cannot take); then an item, a key or
        a switch is given up (the exit never is) and the watch starts again."""
        self._walked += 1
        if self._watch is None or self._watch[0] != goal or remaining < self._watch[1] - 1.0:
            self._watch = (goal, remaining, self._walked)
            return False
        waited = self._walked - self._watch[2]
        at_goal = remaining <= 0.0 and task is None
        if waited < (AT_GOAL_PATIENCE if at_goal else GOAL_PATIENCE):
            return False
        self._watch = None
        is_exit = task is not None and task.get("id") == "exit" or goal == self.nav.cell_of(*self.nav.exit)
        if not is_exit:
            self._skip.update(goal if isinstance(goal, frozenset) else {goal})
            if task is not None:
                self._given_up.add(task["id"])
        return True

    def _lift(self, state: Any, pose: Any, goal: Goal, tokens: Tokens) -> list[int] | None:
        """In front of a raised lift: press USE at it; on a lift below the way on: wait. ``None``: neither."""
        if not any(s["kind"] == "lift" for s in self.nav.sectors):
            return None
        cells = self.nav.path((pose.x, pose.y), goal, limit=3, tokens=tokens)
        if len(cells) < 2:
            return None
        here, ahead = cells[0], cells[1]
        floor_here, floor_ahead = self._floor_at(state, here), self._floor_at(state, ahead)
        if floor_here is None or floor_ahead is None or floor_ahead - floor_here <= STEP_UP:
            return None
        self._trail.clear()  # waiting on purpose
        if self.nav.kind(here) == "lift":
            return self.press()
        if self.nav.kind(ahead) == "lift":
            tx, ty = self.nav.centre(ahead)
            err = relative_bearing(pose.x, pose.y, pose.angle, tx, ty)
            turn = turn_toward(err, 4.0)
            return self.press(*([turn] if turn else []), *self._use(), "MOVE_FORWARD")
        return None
