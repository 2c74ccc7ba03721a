"""Sectors onto a cell grid, and what a player meets walking from one cell centre to the next.

Scanlines through the cell centres: along each row (``y`` of the centres)
every line that spans it is cut once, and between two cuts the map lies in the
sector on the line's ``+x`` side — so a cell's sector is the one on the far
side of the last cut left of its centre (the even–odd rule a point-in-polygon
test applies, done for a whole row at once). The columns do the same along
``y``. The cuts between two neighbouring centres are the lines a player
crosses walking from one to the other, in order: each one is checked (a wall,
an impassable line, a rise of more than :data:`MAX_STEP`, less than
:data:`PLAYER_HEIGHT` of opening, a teleport line crossed from its front) and
sectors crossed on the way whose middle no centre falls into (a thin door) are
reported so the caller can put them on a cell.

Units: map units for coordinates and heights; cells are ``(i, j)`` with cell
``(i, j)`` spanning ``x ∈ [ox + i·cell, ox + (i+1)·cell)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

#: Largest rise a player walks up, map units.
MAX_STEP = 24.0
#: Smallest floor-to-ceiling opening a player fits through, map units.
PLAYER_HEIGHT = 56.0
#: Direction bits of a cell's blocked mask, and their (di, dj).
EAST, WEST, NORTH, SOUTH = 1, 2, 4, 8
STEPS: dict[int, tuple[int, int]] = {EAST: (1, 0), WEST: (-1, 0), NORTH: (0, 1), SOUTH: (0, -1)}

Cell = tuple[int, int]


@dataclass
class Heights:
    """Per sector (index = sector number): the lowest and highest floor it takes and the ceiling when open.

    A lift's floor runs from ``low`` to ``high``; a door's ``ceiling`` is its open height.
    """

    low: Sequence[float]
    high: Sequence[float]
    ceiling: Sequence[float]

    def enter(self, a: int, b: int) -> bool:
        """Whether a player in sector ``a`` can step into sector ``b`` across their common line."""
        if self.low[b] - self.high[a] > MAX_STEP:
            return False
        return min(self.ceiling[a], self.ceiling[b]) - max(self.low[a], self.low[b]) >= PLAYER_HEIGHT


@dataclass
class Raster:
    """The grid a map rasterises to.

    Attributes:
        origin: map point of the grid's lower-left corner.
        cell: cell side, map units.
        sectors: ``[height, width]`` sector per cell centre (``-1``: outside every sector).
        blocked: ``[height, width]`` bit mask of the directions (:data:`EAST` …) a player cannot leave a cell by.
        jumps: ``(i, j, direction) → line`` for moves that cross a teleport line from its front.
        crossed: ``line → [(i, j, direction)]`` the moves that cross each line listed in ``watch``.
        thin: ``(cell, sector)`` for sectors crossed between two centres without holding either: the cell whose
            centre is nearer to where the move passes through the sector.
    """

    origin: tuple[float, float]
    cell: float
    sectors: np.ndarray
    blocked: np.ndarray
    jumps: dict[tuple[int, int, int], int] = field(default_factory=dict)
    crossed: dict[int, list[tuple[int, int, int]]] = field(default_factory=dict)
    thin: list[tuple[Cell, int]] = field(default_factory=list)

    @property
    def width(self) -> int:
        return int(self.sectors.shape[1])

    @property
    def height(self) -> int:
        return int(self.sectors.shape[0])

    def centre(self, cell: Cell) -> tuple[float, float]:
        """Map-unit centre of ``cell``."""
        return self.origin[0] + (cell[0] + 0.5) * self.cell, self.origin[1] + (cell[1] + 0.5) * self.cell

    def cell_of(self, x: float, y: float) -> Cell:
        """The cell holding map point (x, y)."""
        return int((x - self.origin[0]) // self.cell), int((y - self.origin[1]) // self.cell)

    def sector_at(self, cell: Cell) -> int:
        """Sector of ``cell``'s centre (``-1`` outside the grid or the map)."""
        i, j = cell
        if 0 <= i < self.width and 0 <= j < self.height:
            return int(self.sectors[j, i])
        return -1


def _cuts(seg: np.ndarray, front: np.ndarray, back: np.ndarray, at: float, columns: bool):
    """Cuts of the lines ``seg`` ([L, 4]: x1, y1, x2, y2) with the scanline ``y = at`` (columns: ``x = at``).

    Returns, sorted along the scanline: positions, the line of each cut, the sectors on its lower (``-``) and
    upper (``+``) side, and whether the line's front is its ``+`` side.
    """
    if columns:  # swap the axes: a reflection, so the side a line's front lies on flips
        x1, y1, x2, y2 = seg[:, 1], seg[:, 0], seg[:, 3], seg[:, 2]
    else:
        x1, y1, x2, y2 = seg[:, 0], seg[:, 1], seg[:, 2], seg[:, 3]
    hit = ((y1 <= at) & (at < y2)) | ((y2 <= at) & (at < y1))
    idx = np.nonzero(hit)[0]
    xa, ya, xb, yb = x1[idx], y1[idx], x2[idx], y2[idx]
    pos = xa + (at - ya) * (xb - xa) / (yb - ya)
    front_plus = (yb > ya) != columns
    plus = np.where(front_plus, front[idx], back[idx])
    minus = np.where(front_plus, back[idx], front[idx])
    # Cuts at one point (lines meeting at a vertex on the scanline) in their order just past it.
    order = np.lexsort(((xb - xa) / (yb - ya), pos))
    return _Cuts(pos[order], idx[order], minus[order], plus[order], front_plus[order])


@dataclass
class _Cuts:
    pos: np.ndarray
    line: np.ndarray
    minus: np.ndarray
    plus: np.ndarray
    front_plus: np.ndarray


@dataclass
class _Lines:
    blocks: np.ndarray
    teleport: np.ndarray
    watch: set[int]
    heights: Heights


def rasterise(
    seg: np.ndarray,
    front: np.ndarray,
    back: np.ndarray,
    solid: np.ndarray,
    heights: Heights,
    cell: float,
    teleport: np.ndarray | None = None,
    watch: set[int] | None = None,
) -> Raster:
    """Rasterise a map's lines onto ``cell``-unit cells and check every move between neighbouring centres.

    Args:
        seg: ``[L, 4]`` line endpoints (x1, y1, x2, y2), map units; the front side is right of 1 → 2.
        front, back: ``[L]`` sector on each side (``-1``: none).
        solid: ``[L]`` lines no player crosses (one-sided lines are solid whatever this says).
        heights: the sectors' floors and open ceilings.
        cell: cell side, map units.
        teleport: ``[L]`` lines that teleport a player crossing them from their front.
        watch: lines whose crossings to report in :attr:`Raster.crossed` (exits and switches walked over).
    """
    seg = np.asarray(seg, dtype=np.float64)
    front, back = np.asarray(front, dtype=np.int64), np.asarray(back, dtype=np.int64)
    x0, y0 = float(seg[:, [0, 2]].min()), float(seg[:, [1, 3]].min())
    x1, y1 = float(seg[:, [0, 2]].max()), float(seg[:, [1, 3]].max())
    ox, oy = math.floor(x0 / cell) * cell, math.floor(y0 / cell) * cell
    width, height = int(math.ceil((x1 - ox) / cell)) + 1, int(math.ceil((y1 - oy) / cell)) + 1
    out = Raster(
        (float(ox), float(oy)),
        float(cell),
        np.full((height, width), -1, dtype=np.int32),
        np.zeros((height, width), dtype=np.uint8),
    )
    lines = _Lines(
        blocks=np.asarray(solid, dtype=bool) | (front < 0) | (back < 0),
        teleport=np.zeros(len(seg), dtype=bool) if teleport is None else np.asarray(teleport, dtype=bool),
        watch=watch or set(),
        heights=heights,
    )
    xs = ox + (np.arange(width) + 0.5) * cell
    ys = oy + (np.arange(height) + 0.5) * cell
    rows = [_cuts(seg, front, back, float(y), columns=False) for y in ys]
    for j, cuts in enumerate(rows):
        if cuts.pos.size:
            k = np.searchsorted(cuts.pos, xs, side="right") - 1
            out.sectors[j] = np.where(k >= 0, cuts.plus[np.clip(k, 0, None)], -1)
    for j, cuts in enumerate(rows):
        _scanline(out, cuts, lines, fixed=j, columns=False)
    for i, x in enumerate(xs):
        _scanline(out, _cuts(seg, front, back, float(x), columns=True), lines, fixed=i, columns=True)
    return out


def _scanline(out: Raster, cuts: _Cuts, lines: _Lines, fixed: int, columns: bool) -> None:
    """Check the moves between neighbouring centres along one row (or column) of centres."""
    if cuts.pos.size == 0:
        return
    origin = out.origin[1] if columns else out.origin[0]
    size = out.height if columns else out.width
    # Cut k lies between centres n and n + 1 where centre(n) < pos <= centre(n + 1).
    gap = np.ceil((cuts.pos - origin) / out.cell - 0.5).astype(np.int64) - 1
    start = 0
    while start < gap.size:
        n = int(gap[start])
        stop = start
        while stop < gap.size and gap[stop] == n:
            stop += 1
        if 0 <= n < size - 1:
            a, b = ((fixed, n), (fixed, n + 1)) if columns else ((n, fixed), (n + 1, fixed))
            _edge(out, a, b, NORTH if columns else EAST, SOUTH if columns else WEST, range(start, stop), cuts, lines)
        start = stop


def _edge(out: Raster, a: Cell, b: Cell, forward: int, backward: int, ks: range, cuts: _Cuts, lines: _Lines) -> None:
    """The move a → b (``forward``, across cuts ``ks`` in order) and b → a (``backward``)."""
    for direction, here, order in ((forward, a, list(ks)), (backward, b, list(reversed(ks)))):
        going_up = direction == forward  # from the - side of each cut to its + side
        ok = True
        for k in order:
            line = int(cuts.line[k])
            s_from, s_to = (
                (int(cuts.minus[k]), int(cuts.plus[k])) if going_up else (int(cuts.plus[k]), int(cuts.minus[k]))
            )
            if lines.blocks[line] or s_from < 0 or s_to < 0 or not lines.heights.enter(s_from, s_to):
                ok = False
                break
            if line in lines.watch:
                out.crossed.setdefault(line, []).append((here[0], here[1], direction))
            from_front = bool(cuts.front_plus[k]) != going_up
            if lines.teleport[line] and from_front:
                out.jumps[(here[0], here[1], direction)] = line
                break
        if not ok:
            out.blocked[here[1], here[0]] |= direction
    _thin(out, a, b, ks, cuts)


def _thin(out: Raster, a: Cell, b: Cell, ks: range, cuts: _Cuts) -> None:
    """Record sectors entered and left between the centres of a and b that neither centre lies in."""
    if len(ks) < 2:
        return
    sa, sb = out.sector_at(a), out.sector_at(b)
    axis = 0 if a[1] == b[1] else 1
    lo, hi = out.centre(a)[axis], out.centre(b)[axis]
    for first, second in zip(ks, list(ks)[1:], strict=False):
        s = int(cuts.plus[first])
        if s < 0 or s in (sa, sb) or int(cuts.minus[second]) != s:
            continue
        mid = (float(cuts.pos[first]) + float(cuts.pos[second])) / 2
        out.thin.append((a if mid - lo < hi - mid else b, s))
