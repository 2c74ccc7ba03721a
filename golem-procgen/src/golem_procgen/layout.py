"""The built-in generator's geometry: rooms and corridors on a grid of 64-unit cells.

Pure Python, deterministic in ``(params, seed)``. The map is a grid of
:data:`CELL`-unit cells; every walkable cell belongs to one sector (a room, a
corridor step, a door, a liquid pool, a teleport pad or the exit pad) and the
rest is solid. Rooms sit one per *slot* of a coarse lattice (:data:`SLOT`
cells a side) and always cover their slot's middle cells, so two neighbouring
rooms are joined by a straight two-cell-wide corridor through the gap between
them that no other corridor crosses. The parameters map to geometry as:

* ``size`` → number of rooms, lattice shape and room extents (:data:`SIZES`);
* ``theme`` → wall textures and flats (:mod:`golem_procgen.themes`; ``mixed`` varies per room);
* ``steepness`` → floor height differences between rooms, climbed by corridor
  stairs of at most :data:`MAX_STEP` units (the player climbs 24);
* ``outdoors`` → rooms with sky ceilings; ``liquids`` → damaging pools in room corners;
* ``teleporters`` → linked pairs of teleport pads; ``mons``/``strength`` →
  monster count and types; health, ammo, a player start and an exit pad always.

:mod:`golem_procgen.wadwriter` turns a :class:`Layout` into map lumps and
:mod:`golem_procgen.navigation` into the navigation sidecar.
"""

from __future__ import annotations

import json
import random
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field

from golem_procgen.themes import EXIT_FLAT, SKY, TELEPORT_FLAT, THEMES, theme_names

#: Cell side, map units.
CELL = 64
#: Slot side, cells: a room lies inside its slot and always covers local cells 4…6 on both axes.
SLOT = 12
#: Local rows/columns of the corridors that join neighbouring rooms (inside every room's extent).
CORRIDOR_LANES = (5, 6)
#: Largest floor rise between two neighbouring cells, map units (the player climbs 24).
MAX_STEP = 24

#: size → (lattice columns, rows, rooms, lowest room start, highest room end) in slot-local cells.
SIZES: dict[str, tuple[int, int, int, int, int]] = {
    "micro": (2, 2, 3, 3, 8),
    "small": (3, 2, 5, 2, 9),
    "regular": (3, 3, 8, 1, 10),
    "large": (4, 4, 12, 1, 11),
}
#: mons → (fewest, most) monsters per room other than the start room (sparse: a coin toss for one).
DENSITY: dict[str, tuple[int, int]] = {
    "none": (0, 0),
    "sparse": (0, 1),
    "normal": (1, 2),
    "lots": (2, 3),
    "swarms": (4, 5),
}
#: strength → Doom editor numbers of the monsters drawn from, repeats weighting the draw
#: (zombieman 3004, imp 3001, shotgunner 9, demon 3002, cacodemon 3005, hell knight 69).
MONSTERS: dict[str, tuple[int, ...]] = {
    "easier": (3004, 3004, 3001),
    "normal": (3004, 3004, 3001, 3001, 9, 3002),
    "harder": (3004, 9, 3001, 3002, 3005, 69),
}
#: strength → engine skill level the map is played at.
SKILL: dict[str, int] = {"easier": 2, "normal": 3, "harder": 4}
#: outdoors / liquids → share of rooms that get a sky ceiling / a pool.
SHARE: dict[str, float] = {"none": 0.0, "mixed": 0.4, "plenty": 0.75}
#: teleporters → linked pad pairs.
TELEPORT_PAIRS: dict[str, int] = {"none": 0, "mixed": 1, "plenty": 2}
#: steepness → floor differences (map units) between joined rooms to choose from.
RISES: dict[str, tuple[int, ...]] = {"none": (0,), "mixed": (0, 0, 16, 24, 32, 48), "plenty": (32, 48, 64, 96)}
#: Share of corridors that get a door.
DOOR_SHARE = 0.35
#: Editor numbers of the things placed.
PLAYER_START, TELEPORT_DEST = 1, 14
STIMPACK, MEDIKIT, CLIP, SHELLS, SHELL_BOX, SHOTGUN = 2011, 2012, 2007, 2008, 2049, 2001
#: Thing flag: the monster waits until it sees the player (gunfire alone does not wake it).
AMBUSH = 8
#: Thing flags: appears on every skill.
ALL_SKILLS = 7


@dataclass
class SectorSpec:
    """One sector: ``kind`` is ``room``, ``corridor``, ``door``, ``liquid``, ``exit`` or ``teleport``.

    Heights in map units; ``tag`` names the sector for teleport lines (``dest_tag``: where a pad sends you).
    """

    kind: str
    floor: int
    ceiling: int
    floor_flat: str
    ceiling_flat: str
    wall: str
    light: int = 176
    special: int = 0
    tag: int = 0
    dest_tag: int = 0
    room: int = -1


@dataclass
class Room:
    """A room: ``rect`` = (x0, y0, x1, y1) in cells, end exclusive; ``slot`` its lattice place."""

    id: int
    slot: tuple[int, int]
    rect: tuple[int, int, int, int]
    floor: int
    sector: int
    outdoors: bool
    theme: str

    def centre(self) -> tuple[float, float]:
        """The middle of the room's slot lanes, map units (always inside the room)."""
        sx, sy = self.slot
        return ((1 + sx * SLOT + 6) * CELL, (1 + sy * SLOT + 6) * CELL)

    def cells(self) -> list[tuple[int, int]]:
        x0, y0, x1, y1 = self.rect
        return [(i, j) for j in range(y0, y1) for i in range(x0, x1)]


@dataclass
class Connection:
    """A corridor between rooms ``a`` and ``b``; ``door``: its first cells are a door; ``cells`` it covers."""

    a: int
    b: int
    door: bool
    cells: list[tuple[int, int]]


@dataclass
class Thing:
    """A map thing: position (map units), facing (degrees), Doom editor number, skill flags."""

    x: float
    y: float
    angle: int
    type: int
    flags: int = ALL_SKILLS


@dataclass
class Layout:
    """A generated map before it is written.

    ``grid[j][i]`` is the sector index of cell (i, j) or ``-1`` for solid;
    cell (i, j) spans x ∈ [i·CELL, (i+1)·CELL), y ∈ [j·CELL, (j+1)·CELL).
    """

    width: int
    height: int
    grid: list[list[int]]
    sectors: list[SectorSpec]
    rooms: list[Room]
    connections: list[Connection]
    things: list[Thing]
    start: tuple[float, float, int]
    exit_cell: tuple[int, int]
    teleports: list[tuple[tuple[int, int], tuple[int, int]]] = field(default_factory=list)
    skill: int = 3
    params: dict[str, str] = field(default_factory=dict)
    seed: int = 0

    def cell_of(self, x: float, y: float) -> tuple[int, int]:
        """The cell holding map point (x, y)."""
        return int(x // CELL), int(y // CELL)

    def sector_at(self, i: int, j: int) -> int:
        """Sector index of cell (i, j), ``-1`` when solid or outside the grid."""
        if 0 <= i < self.width and 0 <= j < self.height:
            return self.grid[j][i]
        return -1


def _round8(v: float) -> int:
    return int(round(v / 8.0)) * 8


class _Builder:
    def __init__(self, params: Mapping[str, str], seed: int) -> None:
        self.params = dict(params)
        self.seed = int(seed)
        self.rng = random.Random(f"golem-builtin:{seed}:{json.dumps(self.params, sort_keys=True)}")
        cols, rows, self.count, self.lo, self.hi = SIZES[self.params["size"]]
        self.cols, self.rows = cols, rows
        self.width, self.height = cols * SLOT + 2, rows * SLOT + 2
        self.grid = [[-1] * self.width for _ in range(self.height)]
        self.sectors: list[SectorSpec] = []
        self.rooms: list[Room] = []
        self.connections: list[Connection] = []
        self.things: list[Thing] = []
        self.used: set[tuple[int, int]] = set()  # cells taken by pools, pads, the exit or a thing
        self.next_tag = 1

    # --- lattice -----------------------------------------------------------

    def slots(self) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """Chosen slots (growth order) and the tree edges between their indices."""
        start = (self.rng.randrange(self.cols), self.rng.randrange(self.rows))
        chosen, edges = [start], []
        while len(chosen) < self.count:
            options = []
            for k, (sx, sy) in enumerate(chosen):
                for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                    n = (sx + dx, sy + dy)
                    if 0 <= n[0] < self.cols and 0 <= n[1] < self.rows and n not in chosen:
                        options.append((k, n))
            k, n = self.rng.choice(options)
            chosen.append(n)
            edges.append((k, len(chosen) - 1))
        return chosen, edges

    def room_rect(self, slot: tuple[int, int]) -> tuple[int, int, int, int]:
        sx, sy = slot
        bx, by = 1 + sx * SLOT, 1 + sy * SLOT
        x0, x1 = self.rng.randint(self.lo, 4), self.rng.randint(7, self.hi)
        y0, y1 = self.rng.randint(self.lo, 4), self.rng.randint(7, self.hi)
        return bx + x0, by + y0, bx + x1, by + y1

    def add_sector(self, spec: SectorSpec) -> int:
        self.sectors.append(spec)
        return len(self.sectors) - 1

    # --- corridors ---------------------------------------------------------

    def gap(self, a: Room, b: Room) -> tuple[str, list[int], int, int]:
        """Axis, lane coordinates and the corridor's cell range [lo, hi) between rooms a and b."""
        (ax, ay), (bx, by) = a.slot, b.slot
        if ay == by:
            first, second = (a, b) if ax < bx else (b, a)
            lanes = [1 + ay * SLOT + k for k in CORRIDOR_LANES]
            return "x", lanes, first.rect[2], second.rect[0]
        first, second = (a, b) if ay < by else (b, a)
        lanes = [1 + ax * SLOT + k for k in CORRIDOR_LANES]
        return "y", lanes, first.rect[3], second.rect[1]

    def max_rise(self, a: Room, b: Room) -> int:
        _, _, lo, hi = self.gap(a, b)
        return (MAX_STEP - 8) * (hi - lo + 1)

    def carve_corridor(self, a: Room, b: Room) -> None:
        axis, lanes, lo, hi = self.gap(a, b)
        first, second = (
            (a, b) if (axis == "x" and a.slot[0] < b.slot[0]) or (axis == "y" and a.slot[1] < b.slot[1]) else (b, a)
        )
        length = hi - lo
        door = self.rng.random() < DOOR_SHARE
        theme = THEMES[first.theme]
        cells: list[tuple[int, int]] = []
        by_floor: dict[tuple[str, int], int] = {}
        for k in range(1, length + 1):
            floor = _round8(first.floor + (second.floor - first.floor) * k / (length + 1))
            kind = "door" if door and k == 1 else "corridor"
            key = (kind, floor)
            if key not in by_floor:
                ceiling = floor if kind == "door" else max(first.floor, second.floor, floor) + 128
                by_floor[key] = self.add_sector(
                    SectorSpec(
                        kind=kind,
                        floor=floor,
                        ceiling=ceiling,
                        floor_flat=theme.floors[0],
                        ceiling_flat=theme.ceilings[0],
                        wall=theme.walls[0],
                        light=144,
                    )
                )
            for lane in lanes:
                cell = (lo + k - 1, lane) if axis == "x" else (lane, lo + k - 1)
                self.grid[cell[1]][cell[0]] = by_floor[key]
                cells.append(cell)
        self.connections.append(Connection(a=first.id, b=second.id, door=door, cells=cells))

    # --- room furniture ----------------------------------------------------

    def corners(self, room: Room) -> list[list[tuple[int, int]]]:
        """The room's corner regions outside its middle lanes (non-empty ones)."""
        x0, y0, x1, y1 = room.rect
        bx, by = 1 + room.slot[0] * SLOT, 1 + room.slot[1] * SLOT
        xs = [range(x0, bx + 4), range(bx + 7, x1)]
        ys = [range(y0, by + 4), range(by + 7, y1)]
        out = []
        for rx in xs:
            for ry in ys:
                cells = [(i, j) for j in ry for i in rx]
                if cells:
                    out.append(cells)
        return out

    def free_cells(self, room: Room) -> list[tuple[int, int]]:
        return [c for c in room.cells() if c not in self.used and self.grid[c[1]][c[0]] == room.sector]

    def pad(self, room: Room, kind: str, cell: tuple[int, int], flat: str, special: int = 0) -> int:
        spec = self.sectors[room.sector]
        tag = 0
        if kind == "teleport":
            tag, self.next_tag = self.next_tag, self.next_tag + 1
        index = self.add_sector(
            SectorSpec(
                kind=kind,
                floor=spec.floor,
                ceiling=spec.ceiling,
                floor_flat=flat,
                ceiling_flat=spec.ceiling_flat,
                wall=spec.wall,
                light=255 if kind == "exit" else 208,
                special=special,
                tag=tag,
                room=room.id,
            )
        )
        self.grid[cell[1]][cell[0]] = index
        self.used.add(cell)
        return index

    def place(self, room: Room, type_: int, count: int = 1, flags: int = ALL_SKILLS) -> None:
        cells = self.free_cells(room)
        self.rng.shuffle(cells)
        for i, j in cells[:count]:
            self.used.add((i, j))
            self.things.append(Thing((i + 0.5) * CELL, (j + 0.5) * CELL, 45 * self.rng.randrange(8), type_, flags))

    # --- the whole map -----------------------------------------------------

    def build(self) -> Layout:
        p = self.params
        slots, tree = self.slots()
        sky_share, pool_share = SHARE[p["outdoors"]], SHARE[p["liquids"]]
        for k, slot in enumerate(slots):
            theme_name = theme_names(p["theme"], self.rng.randrange(4) if p["theme"] == "mixed" else 0)
            theme = THEMES[theme_name]
            outdoors = k > 0 and self.rng.random() < sky_share
            height = 256 if outdoors else self.rng.choice((128, 160, 192))
            sector = self.add_sector(
                SectorSpec(
                    kind="room",
                    floor=0,
                    ceiling=height,
                    floor_flat=self.rng.choice(theme.floors),
                    ceiling_flat=SKY if outdoors else self.rng.choice(theme.ceilings),
                    wall=self.rng.choice(theme.walls),
                    light=self.rng.choice((160, 176, 192, 208)),
                    room=k,
                )
            )
            rect = self.room_rect(slot)
            self.rooms.append(Room(k, slot, rect, 0, sector, outdoors, theme_name))
            for i, j in self.rooms[-1].cells():
                self.grid[j][i] = sector
        # Floors down the tree from the start room, each rise small enough for the corridor's stairs.
        children: dict[int, list[int]] = {}
        for a, b in tree:
            children.setdefault(a, []).append(b)
        queue = deque([0])
        while queue:
            a = queue.popleft()
            for b in children.get(a, []):
                rise = self.rng.choice(RISES[p["steepness"]]) * self.rng.choice((1, -1))
                limit = self.max_rise(self.rooms[a], self.rooms[b])
                rise = max(-limit, min(limit, rise)) // 8 * 8
                self.rooms[b].floor = self.rooms[a].floor + rise
                queue.append(b)
        for room in self.rooms:
            spec = self.sectors[room.sector]
            spec.ceiling += room.floor
            spec.floor = room.floor
        # Corridors: the tree, plus a few loops on bigger maps where the floors allow.
        joined = {tuple(sorted(e)) for e in tree}
        edges = list(tree)
        if p["size"] in ("regular", "large"):
            for a in range(len(slots)):
                for b in range(a + 1, len(slots)):
                    (ax, ay), (bx, by) = slots[a], slots[b]
                    if abs(ax - bx) + abs(ay - by) != 1 or (a, b) in joined:
                        continue
                    ra, rb = self.rooms[a], self.rooms[b]
                    if abs(ra.floor - rb.floor) <= self.max_rise(ra, rb) and self.rng.random() < 0.3:
                        edges.append((a, b))
        for a, b in edges:
            self.carve_corridor(self.rooms[a], self.rooms[b])
        # Start and exit: the exit room is the one farthest from the start along the corridors.
        adjacency: dict[int, list[int]] = {}
        for c in self.connections:
            adjacency.setdefault(c.a, []).append(c.b)
            adjacency.setdefault(c.b, []).append(c.a)
        depth = {0: 0}
        queue = deque([0])
        while queue:
            a = queue.popleft()
            for b in sorted(adjacency.get(a, [])):
                if b not in depth:
                    depth[b] = depth[a] + 1
                    queue.append(b)
        exit_room = self.rooms[max(depth, key=lambda r: (depth[r], r))]
        sx, sy = exit_room.slot
        exit_cell = (1 + sx * SLOT + 5, 1 + sy * SLOT + 5)
        self.pad(exit_room, "exit", exit_cell, EXIT_FLAT, special=0)
        start_room = self.rooms[0]
        cx, cy = start_room.centre()
        self.used.update({(int(cx // CELL) - a, int(cy // CELL) - b) for a in (0, 1) for b in (0, 1)})
        start = (cx, cy, 45 * self.rng.randrange(8))
        # Pools in room corners (never on the lanes the corridors use, never in the start room).
        for room in self.rooms[1:]:
            corners = self.corners(room)
            if corners and self.rng.random() < pool_share:
                theme = THEMES[room.theme]
                spec = self.sectors[room.sector]
                pool = self.add_sector(
                    SectorSpec(
                        kind="liquid",
                        floor=spec.floor - 8,
                        ceiling=spec.ceiling,
                        floor_flat=theme.liquid,
                        ceiling_flat=spec.ceiling_flat,
                        wall=spec.wall,
                        light=spec.light,
                        special=theme.liquid_special,
                        room=room.id,
                    )
                )
                for i, j in self.rng.choice(corners):
                    self.grid[j][i] = pool
                    self.used.add((i, j))
        # Teleport pairs between rooms, each pad on a free corner cell.
        teleports: list[tuple[tuple[int, int], tuple[int, int]]] = []
        pads: dict[tuple[int, int], int] = {}

        def free_corner_cells(room: Room) -> list[tuple[int, int]]:
            return sorted(c for corner in self.corners(room) for c in corner if c not in self.used)

        candidates = [r for r in self.rooms if r is not exit_room and free_corner_cells(r)]
        for _ in range(TELEPORT_PAIRS[p["teleporters"]]):
            if len(candidates) < 2:
                break
            pair = self.rng.sample(candidates, 2)
            ends = [(room, self.rng.choice(free_corner_cells(room))) for room in pair]
            (ra, ca), (rb, cb) = ends
            sa, sb = self.pad(ra, "teleport", ca, TELEPORT_FLAT, 97), self.pad(rb, "teleport", cb, TELEPORT_FLAT, 97)
            self.sectors[sa].dest_tag, self.sectors[sb].dest_tag = self.sectors[sb].tag, self.sectors[sa].tag
            for cell in (ca, cb):
                self.things.append(Thing((cell[0] + 0.5) * CELL, (cell[1] + 0.5) * CELL, 0, TELEPORT_DEST))
            pads[ca], pads[cb] = sa, sb
            teleports.append((ca, cb))
            candidates = [r for r in candidates if r not in (ra, rb)]
        # Monsters, health and ammo.
        low, high = DENSITY[p["mons"]]
        kinds = MONSTERS[p["strength"]]
        armed = p["mons"] in ("normal", "lots", "swarms")
        for room in self.rooms[1:]:
            count = min(self.rng.randint(low, high), len(room.cells()) // 4)
            for _ in range(count):
                self.place(room, self.rng.choice(kinds), flags=ALL_SKILLS | (AMBUSH if self.rng.random() < 0.5 else 0))
        for k, room in enumerate(self.rooms):
            if self.rng.random() < 0.7:
                self.place(room, STIMPACK)
            if k and self.rng.random() < 0.35:
                self.place(room, MEDIKIT)
            if self.rng.random() < 0.5:
                self.place(room, CLIP)
            if armed and k and self.rng.random() < 0.4:
                self.place(room, SHELLS)
        if armed:  # a shotgun and shells where the player starts: a pistol alone loses regular maps
            self.things.append(Thing(cx + CELL / 2, cy, 0, SHOTGUN))
            self.things.append(Thing(cx - CELL / 2, cy, 0, SHELL_BOX))
        return Layout(
            width=self.width,
            height=self.height,
            grid=self.grid,
            sectors=self.sectors,
            rooms=self.rooms,
            connections=self.connections,
            things=self.things,
            start=start,
            exit_cell=exit_cell,
            teleports=teleports,
            skill=SKILL[p["strength"]],
            params=dict(p),
            seed=self.seed,
        )


def generate_layout(params: Mapping[str, str], seed: int) -> Layout:
    """The map for ``params`` (one value per :data:`golem_procgen.space.PARAMETERS`) and ``seed``.

    Deterministic: the same arguments give the same layout.
    """
    return _Builder(params, seed).build()
