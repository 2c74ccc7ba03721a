"""Where a solid decoration can stand without cutting anything off: a walkable grid of a UDMF map and a flood fill.

The grid (cells of :data:`CELL` map units) marks where the *centre* of the
player's collision box (half-width :data:`PLAYER_RADIUS`) may be: inside the
map (odd crossings of its one-sided lines) and farther than the half-width from
every line that blocks walking — one-sided lines, lines flagged blocking, and
two-sided lines whose step is too high (over :data:`MAX_STEP`) or whose opening
is too low (under :data:`PLAYER_HEIGHT`). An obstacle of radius *r* at
``(x, y)`` takes away the cells within ``PLAYER_RADIUS + r`` of it (Doom's
boxes: the larger of the x and y distances). A placement is accepted only when
every cell reachable from the player start before is still reachable after,
except those the obstacles cover: nothing a scenario uses — its goal item, its
exit, the ring where its monsters spawn, the spots its scripts teleport the
player to — can be cut off.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from golem.errors import GolemError
from golem_procgen.variants.udmf import Block, Textmap

#: Grid cell, map units.
CELL = 4.0
#: Half-width of the player's collision box, map units.
PLAYER_RADIUS = 16.0
#: Height of the player, map units: a lower opening blocks.
PLAYER_HEIGHT = 56.0
#: Highest step the player climbs, map units.
MAX_STEP = 24.0
#: Room kept free around the player starts beyond the two boxes, map units.
START_MARGIN = 64.0
#: Room kept free around every other thing (spawn spots, items, monsters) beyond the boxes, map units.
THING_MARGIN = 24.0
#: Room kept between two obstacles beyond their boxes, so the player can walk between them, map units.
GAP = 2 * PLAYER_RADIUS + 8.0
#: Editor numbers of player starts (1–4, deathmatch 11).
PLAYER_STARTS = (1, 2, 3, 4, 11)
#: Radius assumed for a thing whose class is unknown, map units.
THING_RADIUS = 20.0


@dataclass(frozen=True)
class Obstacle:
    """A solid decoration: editor number ``type``, its class name, its ``radius`` and where it stands."""

    type: int
    name: str
    radius: float
    x: float
    y: float

    def as_dict(self) -> dict[str, object]:
        """JSON-ready."""
        return {"type": self.type, "class": self.name, "radius": self.radius, "x": self.x, "y": self.y}


@dataclass
class WalkGrid:
    """Cells where the player's centre may be (``free[row, col]``; row 0 at ``y0``, column 0 at ``x0``)."""

    x0: float
    y0: float
    free: np.ndarray

    def cell(self, x: float, y: float) -> tuple[int, int]:
        """``(row, col)`` of the cell holding ``(x, y)`` (may lie outside the grid)."""
        return int(math.floor((y - self.y0) / CELL)), int(math.floor((x - self.x0) / CELL))

    def centres(self) -> tuple[np.ndarray, np.ndarray]:
        """Cell centres ``(xs [rows, cols], ys [rows, cols])``, map units."""
        rows, cols = self.free.shape
        xs = self.x0 + (np.arange(cols) + 0.5) * CELL
        ys = self.y0 + (np.arange(rows) + 0.5) * CELL
        return np.meshgrid(xs, ys)

    def box(self, x: float, y: float, half: float) -> np.ndarray:
        """Cells whose centre is within ``half`` map units of ``(x, y)`` along both axes."""
        xs, ys = self.centres()
        return (np.abs(xs - x) < half) & (np.abs(ys - y) < half)

    def reachable(self, start: tuple[float, float], blocked: np.ndarray | None = None) -> np.ndarray:
        """Cells the player's centre reaches from ``start`` (4-connected), with ``blocked`` cells taken away.

        Raises:
            GolemError: ``start`` is not on a free cell (nor next to one).
        """
        free = self.free if blocked is None else self.free & ~blocked
        labels, _ = ndimage.label(free)
        r, c = self.cell(*start)
        rows, cols = free.shape
        for dr, dc in [(0, 0)] + [(a, b) for a in (-2, -1, 0, 1, 2) for b in (-2, -1, 0, 1, 2)]:
            rr, cc = r + dr, c + dc
            if 0 <= rr < rows and 0 <= cc < cols and labels[rr, cc]:
                return labels == labels[rr, cc]
        raise GolemError(f"the player start ({start[0]:g}, {start[1]:g}) is not on walkable ground")


def _blocking(
    textmap: Textmap,
) -> tuple[list[tuple[float, float, float, float]], list[tuple[float, float, float, float]]]:
    """``(one-sided lines, blocking lines)`` as ``(x1, y1, x2, y2)``; the blocking ones include the one-sided."""
    vertices = [(v.number("x"), v.number("y")) for v in textmap.of_kind("vertex")]
    sides = textmap.of_kind("sidedef")
    sectors = textmap.of_kind("sector")

    def sector_of(index: int) -> Block | None:
        if not 0 <= index < len(sides):
            return None
        s = int(sides[index].number("sector", -1))
        return sectors[s] if 0 <= s < len(sectors) else None

    one_sided, blocking = [], []
    for line in textmap.of_kind("linedef"):
        a, b = int(line.number("v1", -1)), int(line.number("v2", -1))
        if not (0 <= a < len(vertices) and 0 <= b < len(vertices)):
            raise GolemError(f"TEXTMAP: a linedef names vertex {max(a, b)} of {len(vertices)}")
        seg = (*vertices[a], *vertices[b])
        front = sector_of(int(line.number("sidefront", -1)))
        back = sector_of(int(line.number("sideback", -1)))
        if front is None or back is None:
            one_sided.append(seg)
            blocking.append(seg)
            continue
        floors = (front.number("heightfloor"), back.number("heightfloor"))
        ceilings = (front.number("heightceiling"), back.number("heightceiling"))
        if (
            line.flag("blocking")
            or line.flag("blockplayers")
            or line.flag("blockeverything")
            or abs(floors[0] - floors[1]) > MAX_STEP
            or min(ceilings) - max(floors) < PLAYER_HEIGHT
        ):
            blocking.append(seg)
    return one_sided, blocking


def walk_grid(textmap: Textmap) -> WalkGrid:
    """The walkable grid of a UDMF map (see the module's description).

    Raises:
        GolemError: the map has no one-sided lines (no outline to be inside of).
    """
    one_sided, blocking = _blocking(textmap)
    if not one_sided:
        raise GolemError("TEXTMAP has no one-sided lines: the map has no outline")
    pts = np.array(one_sided, dtype=float)
    x0 = float(min(pts[:, 0].min(), pts[:, 2].min())) - 2 * CELL
    y0 = float(min(pts[:, 1].min(), pts[:, 3].min())) - 2 * CELL
    x1 = float(max(pts[:, 0].max(), pts[:, 2].max())) + 2 * CELL
    y1 = float(max(pts[:, 1].max(), pts[:, 3].max())) + 2 * CELL
    cols, rows = int(math.ceil((x1 - x0) / CELL)), int(math.ceil((y1 - y0) / CELL))
    xs = x0 + (np.arange(cols) + 0.5) * CELL
    ys = y0 + (np.arange(rows) + 0.5) * CELL
    # Inside: an odd number of one-sided lines to the right of the centre, counted row by row with a
    # difference array (a crossing at x toggles every centre left of x).
    toggles = np.zeros((rows, cols + 1), dtype=np.int32)
    for ax, ay, bx, by in one_sided:
        if ay == by:
            continue
        lo, hi = (ay, by) if ay < by else (by, ay)
        rr = np.nonzero((ys >= lo) & (ys < hi))[0]
        if rr.size == 0:
            continue
        xc = ax + (ys[rr] - ay) * (bx - ax) / (by - ay)
        k = np.searchsorted(xs, xc, side="left")  # centres strictly left of the crossing
        np.add.at(toggles, (rr, np.zeros_like(rr)), 1)
        np.add.at(toggles, (rr, k), -1)
    inside = (np.cumsum(toggles[:, :cols], axis=1) % 2).astype(bool)
    walls = np.zeros((rows, cols), dtype=bool)
    for ax, ay, bx, by in blocking:
        n = max(2, int(math.hypot(bx - ax, by - ay) / (CELL / 2)) + 2)
        t = np.linspace(0.0, 1.0, n)
        c = np.floor((ax + t * (bx - ax) - x0) / CELL).astype(int)
        r = np.floor((ay + t * (by - ay) - y0) / CELL).astype(int)
        ok = (r >= 0) & (r < rows) & (c >= 0) & (c < cols)
        walls[r[ok], c[ok]] = True
    reach = int(math.ceil(PLAYER_RADIUS / CELL))
    near_wall = ndimage.binary_dilation(walls | ~inside, structure=np.ones((2 * reach + 1, 2 * reach + 1), bool))
    return WalkGrid(x0=x0, y0=y0, free=inside & ~near_wall)


def player_start(textmap: Textmap) -> tuple[float, float]:
    """Where player 1 starts.

    Raises:
        GolemError: the map has no player 1 start.
    """
    for thing in textmap.of_kind("thing"):
        if int(thing.number("type")) == 1:
            return thing.number("x"), thing.number("y")
    raise GolemError("the map has no player 1 start")


def place_obstacles(
    textmap: Textmap,
    kinds: Sequence[tuple[int, str, float]],
    count: int,
    rng: random.Random,
    radius_of: dict[int, float] | None = None,
    minimum: int | None = None,
    tries: int = 600,
) -> list[Obstacle]:
    """Choose where up to ``count`` obstacles stand, each of a kind drawn from ``kinds`` (``(editor number, class,
    radius)``), so that nothing reachable from the player start becomes unreachable.

    Args:
        textmap: the map.
        kinds: obstacle kinds to draw from.
        count: how many are wanted.
        rng: the knob's random draws (candidate spots and kinds).
        radius_of: radius of the map's things by editor number (others: :data:`THING_RADIUS`).
        minimum: how many must fit (default: ``count``); between it and ``count``, as many as fit in ``tries``.
        tries: candidate spots tried.

    Raises:
        GolemError: fewer than ``minimum`` fit without cutting part of the map off, or no player start.
    """
    grid = walk_grid(textmap)
    start = player_start(textmap)
    before = grid.reachable(start)
    radius_of = radius_of or {}
    things = [
        (t.number("x"), t.number("y"), int(t.number("type")), radius_of.get(int(t.number("type")), THING_RADIUS))
        for t in textmap.of_kind("thing")
    ]
    xs, ys = grid.centres()
    candidates = np.flatnonzero(before)
    placed: list[Obstacle] = []
    blocked = np.zeros_like(grid.free)
    for _ in range(tries):
        if len(placed) == count or candidates.size == 0:
            break
        type_, name, radius = kinds[rng.randrange(len(kinds))]
        flat = int(candidates[rng.randrange(candidates.size)])
        x, y = float(xs.flat[flat]), float(ys.flat[flat])
        if not _clear(x, y, radius, things, placed):
            continue
        if not _off_walls(grid, x, y, radius):
            continue
        footprint = grid.box(x, y, PLAYER_RADIUS + radius)
        after = grid.reachable(start, blocked | footprint)
        if (before & ~(blocked | footprint) & ~after).any():
            continue  # it would cut part of the map off
        placed.append(Obstacle(type_, name, radius, round(x), round(y)))
        blocked |= footprint
    need = count if minimum is None else min(minimum, count)
    if len(placed) < need:
        raise GolemError(
            f"cannot place {need} obstacles without cutting part of the map off from the player start "
            f"({len(placed)} fit in {tries} tries)"
        )
    return placed


def _clear(
    x: float, y: float, radius: float, things: Iterable[tuple[float, float, int, float]], placed: Iterable[Obstacle]
) -> bool:
    """Whether an obstacle at ``(x, y)`` keeps its distance from the map's things and the obstacles placed."""
    for tx, ty, type_, r in things:
        margin = START_MARGIN if type_ in PLAYER_STARTS else THING_MARGIN
        if max(abs(tx - x), abs(ty - y)) < radius + max(r, PLAYER_RADIUS) + margin:
            return False
    return not any(max(abs(o.x - x), abs(o.y - y)) < radius + o.radius + GAP for o in placed)


def _off_walls(grid: WalkGrid, x: float, y: float, radius: float) -> bool:
    """Whether an obstacle's own box at ``(x, y)`` lies on ground the player could stand on (so not in a wall)."""
    r, c = grid.cell(x, y)
    reach = max(0, int(math.ceil((radius - PLAYER_RADIUS) / CELL)))
    rows, cols = grid.free.shape
    if reach == 0:
        return bool(0 <= r < rows and 0 <= c < cols and grid.free[r, c])
    r0, r1, c0, c1 = r - reach, r + reach + 1, c - reach, c + reach + 1
    if r0 < 0 or c0 < 0 or r1 > rows or c1 > cols:
        return False
    return bool(grid.free[r0:r1, c0:c1].all())


def obstacle_things(obstacles: Iterable[Obstacle]) -> list[Block]:
    """TEXTMAP ``thing`` blocks of the obstacles (every skill and mode, facing east)."""
    out = []
    for o in obstacles:
        block = Block("thing")
        block.fields["x"] = f"{o.x:.3f}"
        block.fields["y"] = f"{o.y:.3f}"
        block.fields["angle"] = "0"
        block.fields["type"] = str(o.type)
        for flag in ("skill1", "skill2", "skill3", "skill4", "skill5", "single", "dm", "coop"):
            block.fields[flag] = "true"
        out.append(block)
    return out
