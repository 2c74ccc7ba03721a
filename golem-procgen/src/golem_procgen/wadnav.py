"""A navigation sidecar built from any WAD's map: the explorer plays Oblige's maps and PWADs, not only its own.

:func:`nav_from_wad` reads a map (:mod:`golem_procgen.mapdata`: Doom, Hexen or
UDMF format), says what its line specials do (:mod:`golem_procgen.specials`)
and writes the ``golem-nav/1`` sidecar :class:`~golem_procgen.navigation.NavMap`
plans on:

* **cells** of :data:`CELL` map units, each holding the sector under its centre
  (:mod:`golem_procgen.raster`); a sector thinner than a cell that a move
  passes through (a door 16 units deep) is put on the nearer cell, so every
  door, lift and bar the way crosses is on the grid;
* **moves** between neighbouring centres checked against the real lines
  (``blocked``: walls, impassable lines, rises over 24 units, openings under
  56 units, with doors open and lifts at either end), and ``jumps`` where a
  move crosses a teleport line from its front to the destination thing;
* **sector kinds**: ``door`` (raised by a door special on a line of its own or by
  a switch or line elsewhere by tag), ``lift`` (``low`` its lowest floor),
  ``lowering`` (a floor a switch lowers), ``liquid`` (a damaging floor: avoided
  by cost), ``room``; a sector that stays shut until a key is held or a
  switch is pressed has a ``lock`` — alternatives of tokens (``[["blue"]]``,
  ``[["s3"], ["s5"]]``);
* **switches** (each ``s<k>``: the line, how it fires — ``use``, ``cross`` or
  ``shoot`` —, where to stand, the sectors it opens, the key it needs), the
  **keys** on the map, the **exits** (the nearest one is ``exit``, with its line
  and trigger) and the player start;
* **clearance**: ``tight`` cells where the player's box (a 32-unit square)
  fits neither at the centre nor 8 units off it — a gap narrower than the
  player, for good or until a switch lowers the bar beside it —, ``anchors``
  (the off-centre point to aim at where only that fits) and ``penalty`` on
  cells near a wall (walk down the middle) or beside a solid decoration.

``solvable`` says whether a player collecting every key and pressing every
switch it can reach from the start gets to the exit (:meth:`NavMap.progression`).

Limits: the map is flat per sector (no slopes, 3D floors or polyobjects), ACS
scripts and crushers are not read, monsters-only teleports (125, 126) are not
the player's way, a lift is taken to be called by USE from below or by
stepping on it from above, and only the centre of a cell and four points 8
units off it are tried for the player's box — a passage that fits the player
but none of those points is taken for a wall.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import structlog

from golem.errors import GolemError
from golem_procgen.mapdata import Line, MapData, read_map, read_map_bytes
from golem_procgen.navigation import FORMAT, WAD_CELL, NavMap
from golem_procgen.raster import MAX_STEP, PLAYER_HEIGHT, Heights, Raster, rasterise
from golem_procgen.specials import COLOURS, KEY_THINGS, Action, damaging, line_action

log = structlog.get_logger(__name__)

#: Cell side, map units: a player (radius 16) fills one.
CELL = WAD_CELL
#: Player radius, map units.
PLAYER_RADIUS = 16.0
#: Half-side of the player's collision box (map units) less a unit of slack, and the clearance kept from walls.
BODY, CLEARANCE = PLAYER_RADIUS - 1.0, 24.0
#: How far off a cell's centre (map units, along an axis) a player may stand to fit through the cell.
NUDGE = 8.0
#: Extra path cost of a cell within :data:`CLEARANCE` of a wall, and of one beside a solid decoration.
WALL_PENALTY, THING_PENALTY = 1.0, 3.0
#: Solid decorations (Doom 2 editor numbers) → radius, map units.
SOLID_THINGS: dict[int, float] = {
    **{t: 16.0 for t in (25, 26, 27, 28, 29, 30, 31, 32, 33, 35, 36, 37, 41, 42, 43, 44, 45, 46, 47, 48, 55, 56, 57)},
    **{t: 16.0 for t in (49, 50, 51, 52, 53, 70, 72, 73, 74, 75, 76, 77, 78, 85, 86, 2028)},
    54: 32.0,
    2035: 10.0,
}
#: Editor numbers: player 1 start; teleport destination (Doom 14, ZDoom's map spots 9001 and 9044 also serve).
PLAYER_START, TELEPORT_DEST = 1, 14
TELEPORT_DESTS = frozenset({14, 9001, 9044})
#: How far in front of a switch a player stands to press it, map units (USE reaches 64).
STAND_OFF = 28.0
#: Farthest a standing point may be from the middle of the line it works, map units.
STAND_REACH = 80.0


def nav_from_wad(wad: str | Path, map_name: str = "MAP01", cell: float = CELL) -> dict[str, Any]:
    """The navigation sidecar (JSON-ready) of ``map_name`` in the WAD file ``wad``; cells of ``cell`` map units.

    Raises:
        GolemError: not a WAD, no such map, damaged lumps, no lines or no player start (one line).
    """
    path = Path(wad)
    return nav_from_map(read_map(path, map_name), cell, source=path.name)


def nav_from_bytes(data: bytes, map_name: str = "MAP01", cell: float = CELL, source: str = "<bytes>") -> dict[str, Any]:
    """:func:`nav_from_wad` for WAD bytes held in memory (a generator's fresh output)."""
    return nav_from_map(read_map_bytes(data, map_name, source), cell, source=source)


def nav_from_map(m: MapData, cell: float = CELL, source: str = "") -> dict[str, Any]:
    """The navigation sidecar of a map already read (see the module docstring).

    Raises:
        GolemError: a map without lines, sectors or a player start.
    """
    where = f"map {m.name} in {source or 'the WAD'}"
    if not m.lines or not m.sectors:
        raise GolemError(f"{where} has no lines or no sectors")
    start = next((t for t in m.things if t.type == PLAYER_START), None)
    if start is None:
        raise GolemError(f"{where} has no player start")
    plan = _Plan(m)
    raster = rasterise(
        np.array([[*line.a, *line.b] for line in m.lines], dtype=np.float64),
        np.array([line.front for line in m.lines]),
        np.array([line.back for line in m.lines]),
        np.array([line.blocking for line in m.lines]),
        plan.heights,
        cell,
        teleport=np.array([k in plan.teleports for k in range(len(m.lines))]),
        watch={k for k, a in plan.watched.items()},
    )
    grid = raster.sectors.copy()
    for (i, j), s in raster.thin:
        here = int(grid[j, i])
        if here >= 0 and plan.kinds[s] in ("door", "lift", "lowering") and plan.kinds[here] in ("room", "liquid"):
            grid[j, i] = s
    raster.sectors = grid
    penalty, tight, anchors = _penalties(m, raster, plan)
    nav: dict[str, Any] = {
        "format": FORMAT,
        "generator": "wad",
        "source": source,
        "map": m.name,
        "map_format": m.format,
        "cell": cell,
        "origin": list(raster.origin),
        "width": raster.width,
        "height": raster.height,
        "grid": grid.tolist(),
        "sectors": plan.sector_records(),
        "start": [start.x, start.y, start.angle],
        "exit": None,
        "teleports": [],
        "blocked": [
            [int(i), int(j), int(raster.blocked[j, i])] for j, i in zip(*np.nonzero(raster.blocked), strict=True)
        ],
        "jumps": _jumps(raster, plan),
        "penalty": penalty,
        "tight": tight,
        "anchors": anchors,
        "switches": [],
        "keys": [{"x": t.x, "y": t.y, "key": KEY_THINGS[t.type]} for t in m.things if t.type in KEY_THINGS],
        "exits": [],
        "things": [{"x": t.x, "y": t.y, "type": t.type} for t in m.things],
    }
    shut = {(i, j) for i, j, _ in tight}
    walls = _Walls([(line, -1) for line in m.lines if _opaque(m, line)])
    for k, (line, action, opens) in enumerate(plan.switches):
        record = _trigger_record(raster, line, action, shut, walls)
        nav["switches"].append({"id": f"s{k}", **record, "opens": opens})
    for line, action in plan.exits:
        nav["exits"].append(_trigger_record(raster, line, action, shut, walls))
    _choose_exit(nav, start)
    log.info(
        "wadnav.built",
        source=source,
        map=m.name,
        cells=raster.width * raster.height,
        sectors=len(m.sectors),
        switches=len(nav["switches"]),
        exits=len(nav["exits"]),
        solvable=nav["solvable"],
    )
    return nav


class _Plan:
    """What the lines do to the sectors: kinds, heights, locks, switches, teleports and exits of one map."""

    def __init__(self, m: MapData) -> None:
        self.m = m
        n = len(m.sectors)
        self.neighbours: list[set[int]] = [set() for _ in range(n)]
        for line in m.lines:
            if line.two_sided and line.front != line.back:
                self.neighbours[line.front].add(line.back)
                self.neighbours[line.back].add(line.front)
        by_tag: dict[int, list[int]] = {}
        for k, sector in enumerate(m.sectors):
            if sector.tag:
                by_tag.setdefault(sector.tag, []).append(k)
        self.local_doors: dict[int, list[str | None]] = {}
        self.remote: dict[int, list[int]] = {}  # sector → switches opening it
        self.lifts: set[int] = set()
        self.floor_target: dict[int, str] = {}
        self.switches: list[tuple[Line, Action, list[int]]] = []
        self.teleports: dict[int, tuple[float, float]] = {}
        self.exits: list[tuple[Line, Action]] = []
        self.watched: dict[int, Action] = {}
        door_sectors: set[int] = set()
        for line in m.lines:
            action = line_action(line, m.dialect)
            if action is None:
                continue
            targets = ([line.back] if line.back >= 0 else []) if action.local else by_tag.get(action.tag, [])
            if action.kind == "door" and action.local and action.trigger == "use":
                for s in targets:
                    self.local_doors.setdefault(s, []).append(action.lock)
                    door_sectors.add(s)
            elif action.kind in ("door", "floor") and targets:
                k = len(self.switches)
                self.switches.append((line, action, targets))
                for s in targets:
                    self.remote.setdefault(s, []).append(k)
                    if action.kind == "door":
                        door_sectors.add(s)
                    else:
                        self.floor_target.setdefault(s, action.target)
                if action.trigger == "cross":
                    self.watched[line.index] = action
            elif action.kind == "lift":
                self.lifts.update(targets)
            elif action.kind == "teleport" and action.trigger == "cross":
                dest = self._destination(action, by_tag)
                if dest is not None:
                    self.teleports[line.index] = dest
            elif action.kind == "exit":
                self.exits.append((line, action))
                if action.trigger == "cross":
                    self.watched[line.index] = action
        floor = [s.floor for s in m.sectors]
        ceiling = [s.ceiling for s in m.sectors]

        def around(s: int, values: list[float], pick) -> float | None:
            return pick(values[t] for t in self.neighbours[s]) if self.neighbours[s] else None

        low, ceil_open = list(floor), list(ceiling)
        self.kinds: list[str] = []
        self.locks: list[list[list[str]] | None] = []
        for s in range(n):
            kind, lock = "room", None
            if damaging(m.sectors[s].special, m.dialect):
                kind = "liquid"
            if s in self.lifts:
                kind = "lift"
                lowest = around(s, floor, min)
                low[s] = min(floor[s], lowest) if lowest is not None else floor[s]
            if s in self.floor_target:
                kind = "lowering"
                target = around(s, floor, min if self.floor_target[s] == "lowest" else max)
                low[s] = min(floor[s], target) if target is not None else floor[s]
                if floor[s] - low[s] > MAX_STEP:  # shut until lowered
                    lock = [[f"s{k}"] for k in self.remote.get(s, [])]
            if s in door_sectors:
                kind = "door"
                lowest_ceiling = around(s, ceiling, min)
                if lowest_ceiling is not None:
                    ceil_open[s] = max(ceiling[s], lowest_ceiling - 4)
                locals_ = self.local_doors.get(s, [])
                if ceiling[s] - floor[s] < PLAYER_HEIGHT and not any(lk is None for lk in locals_):
                    lock = [_key_tokens(lk) for lk in sorted({lk for lk in locals_ if lk})]
                    lock = [alt for alts in lock for alt in alts] + [[f"s{k}"] for k in self.remote.get(s, [])]
            self.kinds.append(kind)
            self.locks.append(lock)
        self.heights = Heights(low=low, high=floor, ceiling=ceil_open)
        self.low = low

    def _destination(self, action: Action, by_tag: dict[int, list[int]]) -> tuple[float, float] | None:
        """Where a teleport line sends a player: its destination thing (by thing id, else in the tagged sector)."""
        things = [t for t in self.m.things if t.type in TELEPORT_DESTS]
        if action.tid:
            hit = [t for t in things if t.tid == action.tid]
            if hit:
                return hit[0].x, hit[0].y
        sectors = set(by_tag.get(action.tag, []))
        for t in things:
            if t.type == TELEPORT_DEST and _sector_of(self.m, t.x, t.y) in sectors:
                return t.x, t.y
        return None

    def sector_records(self) -> list[dict[str, Any]]:
        out = []
        for k, sector in enumerate(self.m.sectors):
            record: dict[str, Any] = {
                "kind": self.kinds[k],
                "floor": sector.floor,
                "ceiling": sector.ceiling,
                "room": -1,
            }
            if self.low[k] != sector.floor:
                record["low"] = self.low[k]
            if self.locks[k] is not None:
                record["lock"] = self.locks[k]
            out.append(record)
        return out


def _key_tokens(lock: str) -> list[list[str]]:
    """A key lock as alternatives of tokens: ``blue`` → ``[["blue"]]``, ``any`` → one per colour, ``all`` → all."""
    if lock == "any":
        return [[c] for c in COLOURS]
    if lock == "all":
        return [list(COLOURS)]
    return [[lock]]


def _sector_of(m: MapData, x: float, y: float) -> int:
    """The sector holding map point (x, y): the far side of the nearest line cut left of it (``-1``: none)."""
    best, sector = -math.inf, -1
    for line in m.lines:
        (x1, y1), (x2, y2) = line.a, line.b
        if (y1 <= y < y2) or (y2 <= y < y1):
            cut = x1 + (y - y1) * (x2 - x1) / (y2 - y1)
            if best < cut <= x:
                best, sector = cut, (line.front if y2 > y1 else line.back)
    return sector


def _jumps(raster: Raster, plan: _Plan) -> list[list[float]]:
    """``[i, j, direction, x, y]``: the move out of cell (i, j) in ``direction`` teleports to (x, y)."""
    return [[i, j, d, *plan.teleports[line]] for (i, j, d), line in sorted(raster.jumps.items())]


def _walls(m: MapData, plan: _Plan) -> list[tuple[Line, int, int]]:
    """Lines a player's body keeps clear of, each with the locked sector whose opening removes it (``-1``: none)
    and the side it stops a body on (``0``: both, ``1``: the front, ``-1``: the back): one-sided and impassable
    lines, and two-sided lines a player cannot cross from a side as the map starts (the foot of a ledge, a low
    ceiling, a bar a switch lowers) — a door's lines excepted. The top of a ledge is no wall: a player stands
    over its edge."""
    start = Heights(
        low=[plan.low[k] if plan.kinds[k] == "lift" else s.floor for k, s in enumerate(m.sectors)],
        high=[s.floor for s in m.sectors],
        ceiling=[s.ceiling for s in m.sectors],
    )
    out = []
    for line in m.lines:
        if line.blocking or not line.two_sided:
            out.append((line, -1, 0))
        elif "door" not in (plan.kinds[line.front], plan.kinds[line.back]):
            forward, backward = start.enter(line.front, line.back), start.enter(line.back, line.front)
            if forward and backward:
                continue
            guard = next((s for s in (line.front, line.back) if plan.locks[s] and plan.kinds[s] == "lowering"), -1)
            out.append((line, guard, 0 if not (forward or backward) else (1 if not forward else -1)))
    return out


def _penalties(m: MapData, raster: Raster, plan: _Plan) -> tuple[list[list[float]], list[list[int]], list[list[float]]]:
    """Extra path costs ``[i, j, cost]`` — :data:`WALL_PENALTY` within :data:`CLEARANCE` of a wall (walk down the
    middle), :data:`THING_PENALTY` beside a solid decoration — and the ``tight`` cells ``[i, j, sector]`` where a
    player's box fits nowhere near the centre (at it, or :data:`NUDGE` units off it along an axis): a gap narrower
    than the player, for good (``sector`` ``-1``) or until the locked ``sector`` beside it is lowered."""
    extra = np.zeros((raster.height, raster.width), dtype=np.float64)
    hit_any = np.zeros((5, raster.height, raster.width), dtype=bool)
    hit_fixed = np.zeros((5, raster.height, raster.width), dtype=bool)
    guard = np.full((raster.height, raster.width), -1, dtype=np.int64)
    ox, oy = raster.origin
    c = raster.cell
    offsets = ((0.0, 0.0), (NUDGE, 0.0), (-NUDGE, 0.0), (0.0, NUDGE), (0.0, -NUDGE))
    for line, guarded_by, side in _walls(m, plan):
        (x1, y1), (x2, y2) = line.a, line.b
        i0, i1 = int((min(x1, x2) - CLEARANCE - ox) // c), int((max(x1, x2) + CLEARANCE - ox) // c)
        j0, j1 = int((min(y1, y2) - CLEARANCE - oy) // c), int((max(y1, y2) + CLEARANCE - oy) // c)
        i0, j0, i1, j1 = max(i0, 0), max(j0, 0), min(i1, raster.width - 1), min(j1, raster.height - 1)
        if i0 > i1 or j0 > j1:
            continue
        px, py = np.meshgrid(ox + (np.arange(i0, i1 + 1) + 0.5) * c, oy + (np.arange(j0, j1 + 1) + 0.5) * c)
        window = np.s_[j0 : j1 + 1, i0 : i1 + 1]
        near = _box_meets_segment(px, py, CLEARANCE, x1, y1, x2, y2) & _on_side(px, py, side, x1, y1, x2, y2)
        extra[window][near] = np.maximum(extra[window][near], WALL_PENALTY)
        for k, (dx, dy) in enumerate(offsets):
            hit = _box_meets_segment(px + dx, py + dy, BODY, x1, y1, x2, y2)
            hit &= _on_side(px + dx, py + dy, side, x1, y1, x2, y2)
            hit_any[k][window] |= hit
            if guarded_by < 0:
                hit_fixed[k][window] |= hit
            else:
                guard[window][hit] = guarded_by
    for thing in m.things:
        radius = SOLID_THINGS.get(thing.type)
        if radius is None:
            continue
        reach = radius + PLAYER_RADIUS + NUDGE
        for j in range(int((thing.y - reach - oy) // c), int((thing.y + reach - oy) // c) + 1):
            for i in range(int((thing.x - reach - ox) // c), int((thing.x + reach - ox) // c) + 1):
                if not (0 <= i < raster.width and 0 <= j < raster.height):
                    continue
                x, y = raster.centre((i, j))
                if max(abs(x - thing.x), abs(y - thing.y)) < radius + PLAYER_RADIUS:
                    extra[j, i] += THING_PENALTY
                for k, (dx, dy) in enumerate(offsets):  # the boxes of player and thing overlap
                    if max(abs(x + dx - thing.x), abs(y + dy - thing.y)) < radius + BODY:
                        hit_any[k, j, i] = hit_fixed[k, j, i] = True
    inside = raster.sectors >= 0
    fixed = hit_fixed.all(axis=0) & inside
    until = hit_any.all(axis=0) & inside & ~fixed & (guard >= 0)
    costs = [[int(i), int(j), float(extra[j, i])] for j, i in zip(*np.nonzero(extra), strict=True)]
    tight = [[int(i), int(j), -1] for j, i in zip(*np.nonzero(fixed), strict=True)]
    tight += [[int(i), int(j), int(guard[j, i])] for j, i in zip(*np.nonzero(until), strict=True)]
    # Cells a player fits in only off their centre: where to aim instead.
    anchors = []
    for j, i in zip(*np.nonzero(hit_any[0] & inside & ~hit_any.all(axis=0)), strict=True):
        k = next(k for k in range(1, len(offsets)) if not hit_any[k, j, i])
        anchors.append([int(i), int(j), *offsets[k]])
    return costs, sorted(tight), anchors


def _on_side(px: np.ndarray, py: np.ndarray, side: int, x1: float, y1: float, x2: float, y2: float) -> np.ndarray:
    """Whether the points (px, py) lie on ``side`` of the line (x1, y1) → (x2, y2): ``1`` its front (right),
    ``-1`` its back, ``0`` either."""
    if side == 0:
        return np.ones(px.shape, dtype=bool)
    cross = (x2 - x1) * (py - y1) - (y2 - y1) * (px - x1)  # < 0: right of the line, its front
    return cross < 0 if side > 0 else cross > 0


def _box_meets_segment(
    px: np.ndarray, py: np.ndarray, half: float, x1: float, y1: float, x2: float, y2: float
) -> np.ndarray:
    """Whether the squares of half-side ``half`` centred on (px, py) overlap the segment (x1, y1)–(x2, y2)
    (separating axes: x, y and the segment's normal)."""
    if half <= 0:
        return np.zeros(px.shape, dtype=bool)
    over_x = (np.minimum(x1, x2) < px + half) & (np.maximum(x1, x2) > px - half)
    over_y = (np.minimum(y1, y2) < py + half) & (np.maximum(y1, y2) > py - half)
    nx, ny = y2 - y1, x1 - x2
    reach = half * (abs(nx) + abs(ny))
    over_n = np.abs(nx * (px - x1) + ny * (py - y1)) < reach
    return over_x & over_y & over_n


def _opaque(m: MapData, line: Line) -> bool:
    """Whether USE cannot reach through ``line``: one-sided, or no opening between its sectors as the map starts."""
    if not line.two_sided:
        return True
    a, b = m.sectors[line.front], m.sectors[line.back]
    return min(a.ceiling, b.ceiling) - max(a.floor, b.floor) <= 0


class _Walls:
    """Wall segments (``[W, 4]``, map units) and whether a straight walk between two points crosses one."""

    def __init__(self, walls: list[tuple[Line, int]]) -> None:
        self.index = np.array([line.index for line, _ in walls], dtype=np.int64)
        self.seg = np.array([[*line.a, *line.b] for line, _ in walls], dtype=np.float64).reshape(-1, 4)

    def crossed(self, p: tuple[float, float], q: tuple[float, float], but: int = -1) -> bool:
        """Whether the segment p → q properly crosses a wall other than line ``but``."""
        if not len(self.seg):
            return False
        ax, ay, bx, by = self.seg.T
        d1 = (bx - ax) * (p[1] - ay) - (by - ay) * (p[0] - ax)
        d2 = (bx - ax) * (q[1] - ay) - (by - ay) * (q[0] - ax)
        d3 = (q[0] - p[0]) * (ay - p[1]) - (q[1] - p[1]) * (ax - p[0])
        d4 = (q[0] - p[0]) * (by - p[1]) - (q[1] - p[1]) * (bx - p[0])
        hit = (d1 * d2 < 0) & (d3 * d4 < 0) & (self.index != but)
        return bool(hit.any())


def _standing(raster: Raster, line: Line, side: float, shut: set[tuple[int, int]], walls: _Walls) -> list[float] | None:
    """Centre of the walkable cell nearest to the point :data:`STAND_OFF` units off ``line``'s middle on ``side``
    (``+1``: its front, ``-1``: its back), on that side, within :data:`STAND_REACH` of the middle and with no wall
    between it and the line; ``None``: no such cell."""
    (x1, y1), (x2, y2) = line.a, line.b
    length = math.hypot(x2 - x1, y2 - y1) or 1.0
    nx, ny = (y2 - y1) / length * side, -(x2 - x1) / length * side
    mx, my = line.midpoint()
    px, py = mx + nx * STAND_OFF, my + ny * STAND_OFF
    ci, cj = raster.cell_of(px, py)
    candidates = []
    for j in range(cj - 3, cj + 4):
        for i in range(ci - 3, ci + 4):
            if raster.sector_at((i, j)) < 0 or (i, j) in shut:
                continue
            x, y = raster.centre((i, j))
            if (x - mx) * nx + (y - my) * ny <= 0 or math.hypot(x - mx, y - my) > STAND_REACH:
                continue
            candidates.append((math.hypot(x - px, y - py), (i, j)))
    for _, cell in sorted(candidates):
        if not walls.crossed(raster.centre(cell), (mx + nx, my + ny), but=line.index):
            return list(raster.centre(cell))
    return None


def _trigger_record(
    raster: Raster, line: Line, action: Action, shut: set[tuple[int, int]], walls: _Walls
) -> dict[str, Any]:
    """A switch's or an exit's record: its line, how it fires, where to stand (``at``; a line walked over: the
    cells on either side, ``at`` and ``beyond``), the key it needs."""
    record: dict[str, Any] = {
        "line": [list(line.a), list(line.b)],
        "trigger": action.trigger,
        "at": _standing(raster, line, +1.0, shut, walls),
        "lock": action.lock,
    }
    if action.trigger == "cross":
        record["beyond"] = _standing(raster, line, -1.0, shut, walls)
    return record


def _choose_exit(nav: dict[str, Any], start: Any) -> None:
    """Set ``exit`` (with ``exit_line`` and ``exit_trigger``) to the exit nearest the start, and ``solvable``."""
    nav["solvable"] = False
    candidates = [e for e in nav["exits"] if e["at"] is not None]
    if not candidates:
        return
    best: tuple[float, dict[str, Any]] | None = None
    nav["exit"] = candidates[0]["at"]
    navmap = NavMap(nav)
    unlocked = navmap.all_tokens()
    costs = navmap.costs_from((start.x, start.y), unlocked)
    for e in candidates:
        points = [e["at"]] + ([e["beyond"]] if e.get("beyond") else [])
        for point in points:
            cost = costs.get(navmap.cell_of(*point))
            if cost is not None and (best is None or cost < best[0]):
                best = (cost, {**e, "at": point})
    chosen = best[1] if best is not None else candidates[0]
    nav["exit"] = chosen["at"]
    nav["exit_line"] = chosen["line"]
    nav["exit_trigger"] = chosen["trigger"]
    navmap = NavMap(nav)
    nav["solvable"] = navmap.progression((start.x, start.y)) is not None


def solvable_or_raise(nav: Mapping[str, Any], where: str) -> None:
    """Refuse a sidecar without an exit or whose exit cannot be reached from the start.

    Raises:
        GolemError: one line naming the map.
    """
    if not nav.get("exits"):
        raise GolemError(f"{where} has no exit (no line that ends the level): nothing for the explorer to reach")
    if not nav.get("solvable"):
        raise GolemError(
            f"{where}: no way from the player start to an exit was found (keys, switches and doors included)"
        )


__all__ = ["CELL", "nav_from_bytes", "nav_from_map", "nav_from_wad", "solvable_or_raise"]
