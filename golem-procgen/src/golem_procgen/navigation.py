"""The navigation sidecar (``<map>.nav.json``) and shortest paths over it.

The sidecar is what an expert needs to play a generated map without
reading pixels: the cell grid (sector per cell), each sector's kind and
heights, the rooms, the corridors and their doors, the player start, the exit
and the teleport pairs. :class:`NavMap` plans on it: a Dijkstra distance
field toward a goal over four-neighbour moves a player can make (a rise of at
most 24 units, no walking onto a teleport pad by accident, liquids avoided
by cost) plus one move per teleport pad into its destination.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from golem.errors import GolemError
from golem_procgen.layout import CELL, MAX_STEP, Layout

FORMAT = "golem-nav/1"
SUFFIX = ".nav.json"
#: Path cost of a cell by sector kind (one cell = 1): a liquid costs as much as a long detour.
COST: dict[str, float] = {"liquid": 12.0, "door": 1.5}


def sidecar_path(wad: str | Path) -> Path:
    """Where the navigation sidecar of ``wad`` lives: ``map.wad`` → ``map.nav.json``."""
    wad = Path(wad)
    return wad.with_name(wad.stem + SUFFIX)


def layout_to_nav(layout: Layout, generator: str, map_name: str) -> dict[str, Any]:
    """The sidecar of a built-in layout (JSON-ready; map units, cell indices as ``[i, j]``)."""

    def centre(cell: tuple[int, int]) -> list[float]:
        return [(cell[0] + 0.5) * CELL, (cell[1] + 0.5) * CELL]

    return {
        "format": FORMAT,
        "generator": generator,
        "map": map_name,
        "seed": layout.seed,
        "params": dict(layout.params),
        "skill": layout.skill,
        "cell": CELL,
        "width": layout.width,
        "height": layout.height,
        "grid": layout.grid,
        "sectors": [{"kind": s.kind, "floor": s.floor, "ceiling": s.ceiling, "room": s.room} for s in layout.sectors],
        "rooms": [
            {
                "id": r.id,
                "rect": [v * CELL for v in r.rect],
                "centre": list(r.centre()),
                "floor": r.floor,
                "outdoors": r.outdoors,
                "theme": r.theme,
            }
            for r in layout.rooms
        ],
        "connections": [
            {"a": c.a, "b": c.b, "door": c.door, "cells": [list(x) for x in c.cells]} for c in layout.connections
        ],
        "start": list(layout.start),
        "exit": centre(layout.exit_cell),
        "teleports": [[centre(a), centre(b)] for a, b in layout.teleports],
        "things": [{"x": t.x, "y": t.y, "type": t.type} for t in layout.things],
    }


Cell = tuple[int, int]


@dataclass
class Step:
    """The next move toward a goal: ``target`` to walk at (map units), whether it is a door or a teleport pad."""

    target: tuple[float, float]
    door: Cell | None
    teleport: bool
    remaining: float


class NavMap:
    """Plans over a navigation sidecar (see :func:`layout_to_nav`)."""

    def __init__(self, nav: Mapping[str, Any]) -> None:
        if nav.get("format") != FORMAT:
            raise GolemError(f"not a Golem navigation sidecar (format {nav.get('format')!r}, expected {FORMAT})")
        self.nav = nav
        self.cell = float(nav["cell"])
        self.width, self.height = int(nav["width"]), int(nav["height"])
        self.grid: list[list[int]] = nav["grid"]
        self.sectors: list[dict[str, Any]] = nav["sectors"]
        self.exit = tuple(nav["exit"])
        pads = {}
        for a, b in nav.get("teleports", []):
            ca, cb = self.cell_of(*a), self.cell_of(*b)
            pads[ca], pads[cb] = cb, ca
        self.pads: dict[Cell, Cell] = pads
        self._forward = self._edges()
        self._fields: dict[Cell, dict[Cell, float]] = {}

    @classmethod
    def load(cls, path: str | Path) -> NavMap:
        """Read a sidecar file.

        Raises:
            GolemError: missing or unreadable file.
        """
        path = Path(path)
        if not path.is_file():
            raise GolemError(f"no navigation sidecar {path}: the explorer plays maps built by `golem procgen build`")
        try:
            return cls(json.loads(path.read_text()))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise GolemError(f"corrupt navigation sidecar {path}: {exc}") from None

    # --- cells ---------------------------------------------------------------

    def cell_of(self, x: float, y: float) -> Cell:
        """The cell holding map point (x, y)."""
        return int(x // self.cell), int(y // self.cell)

    def centre(self, cell: Cell) -> tuple[float, float]:
        """Map-unit centre of ``cell``."""
        return (cell[0] + 0.5) * self.cell, (cell[1] + 0.5) * self.cell

    def sector(self, cell: Cell) -> int:
        """Sector index of ``cell`` (``-1``: solid or outside)."""
        i, j = cell
        if 0 <= i < self.width and 0 <= j < self.height:
            return int(self.grid[j][i])
        return -1

    def kind(self, cell: Cell) -> str:
        """Sector kind of ``cell`` (``solid`` outside the map)."""
        s = self.sector(cell)
        return self.sectors[s]["kind"] if s >= 0 else "solid"

    def open(self, cell: Cell) -> bool:
        """Whether a player may walk through ``cell`` (doors included: they open)."""
        return self.sector(cell) >= 0 and self.kind(cell) != "teleport"

    def see_through(self, cell: Cell) -> bool:
        """Whether a shot or a look passes through ``cell`` (not solid, not a closed door)."""
        return self.sector(cell) >= 0 and self.kind(cell) != "door"

    def _floor(self, cell: Cell) -> float:
        return float(self.sectors[self.sector(cell)]["floor"])

    def _edges(self) -> dict[Cell, list[tuple[Cell, float]]]:
        out: dict[Cell, list[tuple[Cell, float]]] = {}
        for j in range(self.height):
            for i in range(self.width):
                u = (i, j)
                if not self.open(u) and u not in self.pads:  # a destination pad is left by walking off it
                    continue
                moves = []
                for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                    v = (i + di, j + dj)
                    if v in self.pads:
                        moves.append((self.pads[v], 2.0))
                    elif self.open(v) and self._floor(v) - self._floor(u) <= MAX_STEP:
                        moves.append((v, COST.get(self.kind(v), 1.0)))
                out[u] = moves
        return out

    # --- planning ------------------------------------------------------------

    def field(self, goal: Cell) -> dict[Cell, float]:
        """Cost to reach ``goal`` from every cell that can reach it (cached per goal)."""
        if goal in self._fields:
            return self._fields[goal]
        reverse: dict[Cell, list[tuple[Cell, float]]] = {}
        for u, moves in self._forward.items():
            for v, c in moves:
                reverse.setdefault(v, []).append((u, c))
        dist = {goal: 0.0}
        heap = [(0.0, goal)]
        while heap:
            d, v = heapq.heappop(heap)
            if d > dist.get(v, float("inf")):
                continue
            for u, c in reverse.get(v, []):
                nd = d + c
                if nd < dist.get(u, float("inf")):
                    dist[u] = nd
                    heapq.heappush(heap, (nd, u))
        self._fields[goal] = dist
        return dist

    def reachable(self, start: tuple[float, float], goal: tuple[float, float]) -> bool:
        """Whether a player at map point ``start`` can walk to ``goal``."""
        return self._entry(self.cell_of(*start), self.field(self.cell_of(*goal))) is not None

    def _entry(self, cell: Cell, dist: Mapping[Cell, float]) -> Cell | None:
        """``cell`` if it is on the field, else its best neighbour that is (standing on a pad, a corner)."""
        if cell in dist:
            return cell
        around = [(cell[0] + a, cell[1] + b) for a in (-1, 0, 1) for b in (-1, 0, 1)]
        around = [c for c in around if c in dist]
        return min(around, key=lambda c: (dist[c], c)) if around else None

    def path(self, start: tuple[float, float], goal: Cell, limit: int = 4096) -> list[Cell]:
        """Cells from ``start`` (map units) down the distance field to ``goal`` (teleport jumps included)."""
        dist = self.field(goal)
        cell = self._entry(self.cell_of(*start), dist)
        if cell is None:
            return []
        out = [cell]
        while cell != goal and len(out) < limit:
            moves = self._forward.get(cell, [])
            best = min(moves, key=lambda m: (dist.get(m[0], float("inf")) + m[1], m[0]), default=None)
            if best is None or best[0] not in dist:
                break
            cell = best[0]
            out.append(cell)
        return out

    def step(self, x: float, y: float, goal: Cell, lookahead: int = 2) -> Step | None:
        """Where to walk next from (x, y) toward ``goal``, ``None`` when it cannot be reached.

        The target is the centre of the cell ``lookahead`` moves down the path (a
        teleport pad's centre when the path jumps through one before that).
        """
        cells = self.path((x, y), goal, limit=lookahead + 8)
        if not cells:
            return None
        dist = self.field(goal)
        door = next((c for c in cells[: lookahead + 2] if self.kind(c) == "door"), None)
        here = cells[0]
        target = cells[min(lookahead, len(cells) - 1)]
        for a, b in zip(cells, cells[1:], strict=False):
            if abs(a[0] - b[0]) + abs(a[1] - b[1]) > 1:  # a jump: walk onto the pad beside a
                pad = next(p for p, dest in self.pads.items() if dest == b and abs(p[0] - a[0]) + abs(p[1] - a[1]) == 1)
                return Step(self.centre(pad), door, True, dist.get(here, 0.0))
            if b == target:
                break
        return Step(self.centre(target), door, False, dist.get(here, 0.0))

    def line_of_sight(self, a: tuple[float, float], b: tuple[float, float]) -> bool:
        """Whether the segment a→b (map units) crosses only see-through cells (sampled every 16 units)."""
        dx, dy = b[0] - a[0], b[1] - a[1]
        n = max(1, int(max(abs(dx), abs(dy)) // 16))
        return all(self.see_through(self.cell_of(a[0] + dx * k / n, a[1] + dy * k / n)) for k in range(n + 1))

    def cells_of_kind(self, kind: str) -> Iterable[Cell]:
        """Every cell whose sector is of ``kind``."""
        for j in range(self.height):
            for i in range(self.width):
                if self.kind((i, j)) == kind:
                    yield (i, j)
