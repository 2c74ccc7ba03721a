"""The navigation sidecar (``<map>.nav.json``) and shortest paths over it.

The sidecar is what an expert needs to play a map without reading pixels:
the cell grid (sector per cell), each sector's kind and heights, the player
start, the exit and the teleports; the builtin generator adds its rooms and
corridors, a sidecar built from a WAD (:mod:`golem_procgen.wadnav`) the moves
its lines block, locks, keys, switches and the exit's line. :class:`NavMap`
plans on it: a Dijkstra distance field toward a goal over four-neighbour moves
a player can make (a rise of at most 24 units, no walking onto a teleport pad
by accident, liquids avoided by cost, locked sectors only with their key or
switch) plus one move per teleport pad or teleport line into its destination.
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
#: Cell side (map units) of sidecars built from a WAD (:mod:`golem_procgen.wadnav`): a player (radius 16) fills one.
WAD_CELL = 32
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
#: A planning goal: one cell, or a set of cells (the nearest one is the goal).
Goal = Cell | frozenset[Cell]
#: What a player has opened: key colours held and switches pressed (``s<k>``).
Tokens = frozenset[str]
NONE: Tokens = frozenset()
#: Direction bits of a sidecar's ``blocked`` masks and ``jumps``, in the order moves are tried.
DIRECTIONS: tuple[tuple[int, tuple[int, int]], ...] = ((1, (1, 0)), (2, (-1, 0)), (4, (0, 1)), (8, (0, -1)))


@dataclass
class Step:
    """The next move toward a goal: ``target`` to walk at (map units), whether it is a door or a teleport pad."""

    target: tuple[float, float]
    door: Cell | None
    teleport: bool
    remaining: float


class NavMap:
    """Plans over a navigation sidecar (see :func:`layout_to_nav` and :mod:`golem_procgen.wadnav`).

    Besides the builtin generator's fields a sidecar may carry (all optional): ``origin`` (map point of cell
    (0, 0)'s corner), ``blocked`` (``[i, j, mask]``: directions a player cannot leave a cell by — with it, rises
    are judged per move by the sidecar's writer, not from the cells' floors), ``jumps`` (``[i, j, direction,
    x, y]``: a move that teleports), ``penalty`` (``[i, j, cost]``: extra cost of entering a cell), ``tight``
    (``[i, j, sector]``: a cell nothing walks into — for good with ``-1``, else while ``sector`` is locked — and
    a goal there is reached from beside it), ``anchors`` (``[i, j, dx, dy]``: aim at this offset from the
    centre), a sector's ``low`` (the lowest floor a lift or lowering floor takes) and ``lock`` (alternatives of
    tokens that open it), ``keys``, ``switches`` and ``exit_line``/``exit_trigger``; ``exit`` may be ``null``.
    Planning under a set of tokens treats a locked sector as open when one alternative is all held.
    """

    def __init__(self, nav: Mapping[str, Any]) -> None:
        if nav.get("format") != FORMAT:
            raise GolemError(f"not a Golem navigation sidecar (format {nav.get('format')!r}, expected {FORMAT})")
        self.nav = nav
        self.cell = float(nav["cell"])
        self.origin = (float(nav.get("origin", (0, 0))[0]), float(nav.get("origin", (0, 0))[1]))
        self.width, self.height = int(nav["width"]), int(nav["height"])
        self.grid: list[list[int]] = nav["grid"]
        self.sectors: list[dict[str, Any]] = nav["sectors"]
        self.exit = tuple(nav["exit"]) if nav.get("exit") is not None else None
        pads = {}
        for a, b in nav.get("teleports", []):
            ca, cb = self.cell_of(*a), self.cell_of(*b)
            pads[ca], pads[cb] = cb, ca
        self.pads: dict[Cell, Cell] = pads
        self.per_move = "blocked" in nav
        self.blocked: dict[Cell, int] = {(int(i), int(j)): int(m) for i, j, m in nav.get("blocked", [])}
        self.jumps: dict[tuple[Cell, int], Cell] = {
            ((int(i), int(j)), int(d)): self.cell_of(x, y) for i, j, d, x, y in nav.get("jumps", [])
        }
        self.penalty: dict[Cell, float] = {(int(i), int(j)): float(c) for i, j, c in nav.get("penalty", [])}
        self.tight: set[Cell] = {(int(i), int(j)) for i, j, s in nav.get("tight", []) if s < 0}
        self.anchors: dict[Cell, tuple[float, float]] = {
            (int(i), int(j)): (float(dx), float(dy)) for i, j, dx, dy in nav.get("anchors", [])
        }
        self.guards: dict[int, int] = {
            int(j) * self.width + int(i): int(s) for i, j, s in nav.get("tight", []) if s >= 0
        }
        self.locks: dict[int, list[list[str]]] = {
            k: s["lock"] for k, s in enumerate(self.sectors) if s.get("lock") is not None
        }
        self._moves, self._back = self._graph()
        self._see: list[bool] | None = None
        self._closed: dict[Tokens, frozenset[int]] = {}
        self._fields: dict[tuple[Goal, Tokens], dict[Cell, float]] = {}

    @classmethod
    def load(cls, path: str | Path) -> NavMap:
        """Read a sidecar file.

        Raises:
            GolemError: missing or unreadable file.
        """
        path = Path(path)
        if not path.is_file():
            raise GolemError(
                f"no navigation sidecar {path}: the explorer plays maps built by `golem procgen build` "
                "or given one by `golem procgen nav`"
            )
        try:
            return cls(json.loads(path.read_text()))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise GolemError(f"corrupt navigation sidecar {path}: {exc}") from None

    # --- cells ---------------------------------------------------------------

    def cell_of(self, x: float, y: float) -> Cell:
        """The cell holding map point (x, y)."""
        return int((x - self.origin[0]) // self.cell), int((y - self.origin[1]) // self.cell)

    def centre(self, cell: Cell) -> tuple[float, float]:
        """Map-unit centre of ``cell``."""
        return self.origin[0] + (cell[0] + 0.5) * self.cell, self.origin[1] + (cell[1] + 0.5) * self.cell

    def point(self, cell: Cell) -> tuple[float, float]:
        """Where in ``cell`` a player stands: its centre, or the sidecar's ``anchors`` point where the centre is too
        close to a wall or a solid thing."""
        x, y = self.centre(cell)
        dx, dy = self.anchors.get(cell, (0.0, 0.0))
        return x + dx, y + dy

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

    def unlocked(self, sector: int, tokens: Tokens = NONE) -> bool:
        """Whether ``sector`` is open to a player holding ``tokens`` (sectors without a lock always are)."""
        lock = self.locks.get(sector)
        return lock is None or any(all(t in tokens for t in alt) for alt in lock)

    def open(self, cell: Cell, tokens: Tokens = NONE) -> bool:
        """Whether a player may walk through ``cell`` (doors included: they open; locked ones with their key)."""
        s = self.sector(cell)
        return s >= 0 and self.kind(cell) != "teleport" and self.unlocked(s, tokens)

    def see_through(self, cell: Cell) -> bool:
        """Whether a shot or a look passes through ``cell`` (not solid, not a closed door)."""
        return self.sector(cell) >= 0 and self.kind(cell) != "door"

    def _floor(self, cell: Cell) -> float:
        return float(self.sectors[self.sector(cell)]["floor"])

    def _flat(self, cell: Cell) -> int:
        return cell[1] * self.width + cell[0]

    def _cell(self, k: int) -> Cell:
        return k % self.width, k // self.width

    def _graph(self) -> tuple[list[list[tuple[int, float]]], list[list[tuple[int, float]]]]:
        """Moves out of (and into) every cell by flat index ``j·width + i``, every lock open."""
        w = self.width
        moves: list[list[tuple[int, float]]] = [[] for _ in range(w * self.height)]
        back: list[list[tuple[int, float]]] = [[] for _ in range(w * self.height)]
        kinds = [s["kind"] for s in self.sectors]
        floors = [float(s["floor"]) for s in self.sectors]
        for j in range(self.height):
            row = self.grid[j]
            for i in range(w):
                s = row[i]
                if s < 0:
                    continue
                u = (i, j)
                if kinds[s] == "teleport" and u not in self.pads:
                    continue
                out = moves[j * w + i]
                walls = self.blocked.get(u, 0) if self.blocked else 0
                for bit, (di, dj) in DIRECTIONS:
                    if walls & bit:
                        continue
                    if self.jumps:
                        jump = self.jumps.get((u, bit))
                        if jump is not None:
                            if self.sector(jump) >= 0:
                                out.append((self._flat(jump), 2.0))
                            continue
                    v = (i + di, j + dj)
                    if v in self.pads:
                        out.append((self._flat(self.pads[v]), 2.0))
                        continue
                    t = self.sector(v)
                    if t < 0 or kinds[t] == "teleport" or (self.tight and v in self.tight):
                        continue
                    if self.per_move or floors[t] - floors[s] <= MAX_STEP:
                        out.append((self._flat(v), COST.get(kinds[t], 1.0) + self.penalty.get(v, 0.0)))
        for k, out in enumerate(moves):
            for v, c in out:
                back[v].append((k, c))
        return moves, back

    def _beside(self, cell: Cell) -> list[Cell]:
        """The neighbours of ``cell`` a player can stand in and step toward it from (no wall between)."""
        out = []
        for bit, (di, dj) in DIRECTIONS:
            n = (cell[0] - di, cell[1] - dj)  # moving ``bit`` from n reaches cell
            if self.sector(n) >= 0 and n not in self.tight and not self.blocked.get(n, 0) & bit:
                out.append(n)
        return out

    def _shut(self, tokens: Tokens) -> frozenset[int]:
        """Sectors still locked for a player holding ``tokens``."""
        if tokens not in self._closed:
            self._closed[tokens] = frozenset(s for s in self.locks if not self.unlocked(s, tokens))
        return self._closed[tokens]

    def _search(self, sources: list[int], graph: list[list[tuple[int, float]]], tokens: Tokens) -> dict[Cell, float]:
        """Dijkstra from ``sources`` over ``graph`` (flat indices), never through a cell of a sector still shut."""
        shut = self._shut(tokens)
        grid, w = self.grid, self.width
        dist: dict[int, float] = {k: 0.0 for k in sources}
        heap = [(0.0, k) for k in sources]
        heapq.heapify(heap)
        while heap:
            d, u = heapq.heappop(heap)
            if d > dist[u]:
                continue
            for v, c in graph[u]:
                nd = d + c
                if nd < dist.get(v, float("inf")) and (
                    not shut or (grid[v // w][v % w] not in shut and self.guards.get(v, -1) not in shut)
                ):
                    dist[v] = nd
                    heapq.heappush(heap, (nd, v))
        return {(k % w, k // w): d for k, d in dist.items()}

    # --- planning ------------------------------------------------------------

    def field(self, goal: Goal, tokens: Tokens = NONE) -> dict[Cell, float]:
        """Cost to reach ``goal`` (a cell, or the nearest of a set of cells) from every cell that can reach it,
        holding ``tokens`` (cached per goal and tokens)."""
        key = (goal, tokens)
        if key not in self._fields:
            goals = sorted(goal) if isinstance(goal, frozenset) else [goal]
            seeds: list[int] = []
            for g in goals:
                if not (0 <= g[0] < self.width and 0 <= g[1] < self.height):
                    continue
                if not self.per_move or self._back[self._flat(g)]:
                    seeds.append(self._flat(g))
                else:  # nothing walks into g (a gap too tight, a wall's cell): its neighbours that face it will do
                    seeds += [self._flat(n) for n in self._beside(g)]
            self._fields[key] = self._search(sorted(set(seeds)), self._back, tokens)
        return self._fields[key]

    def costs_from(self, start: tuple[float, float], tokens: Tokens = NONE) -> dict[Cell, float]:
        """Cost from map point ``start`` to every cell it can reach holding ``tokens`` (one forward search)."""
        cell = self.cell_of(*start)
        around = [cell] + [(cell[0] + a, cell[1] + b) for a in (-1, 0, 1) for b in (-1, 0, 1)]
        first = next((c for c in around if self.open(c, tokens) and self._moves[self._flat(c)]), None)
        return {} if first is None else self._search([self._flat(first)], self._moves, tokens)

    def reachable(self, start: tuple[float, float], goal: tuple[float, float], tokens: Tokens = NONE) -> bool:
        """Whether a player at map point ``start`` can walk to ``goal`` holding ``tokens``."""
        return self._entry(self.cell_of(*start), self.field(self.cell_of(*goal), tokens)) is not None

    def all_tokens(self) -> Tokens:
        """Every token a lock of this map names."""
        return frozenset(t for lock in self.locks.values() for alt in lock for t in alt)

    def progression(self, start: tuple[float, float], tokens: Tokens = NONE) -> list[str] | None:
        """The tokens a player at ``start`` picks up, in order, on the way to the exit — every key and switch it can
        reach until the exit is reachable — or ``None`` when the exit stays out of reach."""
        if self.exit is None:
            return None
        order: list[str] = []
        held = set(tokens)
        while True:
            costs = self.costs_from(start, frozenset(held))
            if self.within(self.exit, costs):
                return order
            found = [key["key"] for key in self.nav.get("keys", []) if self.within((key["x"], key["y"]), costs)]
            for switch in self.nav.get("switches", []):
                at = switch.get("at") or switch.get("beyond")
                usable = switch.get("lock") is None or self.unlocked_by(switch["lock"], frozenset(held))
                if at and usable and self.within(at, costs):
                    found.append(switch["id"])
            new = [t for t in dict.fromkeys(found) if t not in held]
            if not new:
                return None
            order += new
            held.update(new)

    def within(self, point: tuple[float, float], costs: Mapping[Cell, float]) -> bool:
        """Whether the cell of map point ``point``, or a neighbour a player steps toward it from, is in ``costs``."""
        cell = self.cell_of(*point)
        return cell in costs or any(n in costs for n in self._beside(cell))

    @staticmethod
    def unlocked_by(lock: str, tokens: Tokens) -> bool:
        """Whether a key lock (``blue``, ``yellow``, ``red``, ``any``, ``all``) is satisfied by ``tokens``."""
        colours = {"blue", "yellow", "red"}
        if lock == "any":
            return bool(colours & tokens)
        if lock == "all":
            return colours <= tokens
        return lock in tokens

    def _entry(self, cell: Cell, dist: Mapping[Cell, float]) -> Cell | None:
        """``cell`` if it is on the field, else its best neighbour that is (standing on a pad, a corner)."""
        if cell in dist:
            return cell
        around = [(cell[0] + a, cell[1] + b) for a in (-1, 0, 1) for b in (-1, 0, 1)]
        around = [c for c in around if c in dist]
        return min(around, key=lambda c: (dist[c], c)) if around else None

    def path(self, start: tuple[float, float], goal: Goal, limit: int = 4096, tokens: Tokens = NONE) -> list[Cell]:
        """Cells from ``start`` (map units) down the distance field to ``goal`` (teleport jumps included)."""
        dist = self.field(goal, tokens)
        cell = self._entry(self.cell_of(*start), dist)
        if cell is None:
            return []
        out = [cell]
        while dist.get(cell, 0.0) > 0.0 and len(out) < limit:
            moves = [(self._cell(v), c) for v, c in self._moves[self._flat(cell)]]
            best = min(moves, key=lambda m: (dist.get(m[0], float("inf")) + m[1], m[0]), default=None)
            if best is None or best[0] not in dist:
                break
            cell = best[0]
            out.append(cell)
        return out

    def step(self, x: float, y: float, goal: Goal, lookahead: int = 2, tokens: Tokens = NONE) -> Step | None:
        """Where to walk next from (x, y) toward ``goal``, ``None`` when it cannot be reached.

        The target is the centre of the cell ``lookahead`` moves down the path (the cell a teleporting move
        steps into — a pad's centre, or the cell across a teleport line — when the path jumps before that).
        """
        cells = self.path((x, y), goal, limit=lookahead + 8, tokens=tokens)
        if not cells:
            return None
        dist = self.field(goal, tokens)
        door = next((c for c in cells[: lookahead + 2] if self.kind(c) == "door"), None)
        here = cells[0]
        target = cells[min(lookahead, len(cells) - 1)]
        if self.anchors:  # through a squeeze (off-centre points) one cell at a time
            target = next((c for c in cells[1 : lookahead + 1] if c in self.anchors), target)
        for a, b in zip(cells, cells[1:], strict=False):
            if abs(a[0] - b[0]) + abs(a[1] - b[1]) > 1:  # a jump: walk onto the pad, or across the line, beside a
                across = next(
                    ((a[0] + di, a[1] + dj) for bit, (di, dj) in DIRECTIONS if self.jumps.get((a, bit)) == b), None
                )
                if across is None:
                    across = next(
                        p for p, dest in self.pads.items() if dest == b and abs(p[0] - a[0]) + abs(p[1] - a[1]) == 1
                    )
                return Step(self.point(across), door, True, dist.get(here, 0.0))
            if b == target:
                break
        return Step(self.point(target), door, False, dist.get(here, 0.0))

    def line_of_sight(self, a: tuple[float, float], b: tuple[float, float]) -> bool:
        """Whether the segment a→b (map units) crosses only see-through cells (sampled every 16 units)."""
        if self._see is None:
            kinds = [s["kind"] != "door" for s in self.sectors]
            self._see = [row[i] >= 0 and kinds[row[i]] for row in self.grid for i in range(self.width)]
        see, w, h, c = self._see, self.width, self.height, self.cell
        (ox, oy), (dx, dy) = self.origin, (b[0] - a[0], b[1] - a[1])
        n = max(1, int(max(abs(dx), abs(dy)) // 16))
        for k in range(n + 1):
            i, j = int((a[0] + dx * k / n - ox) // c), int((a[1] + dy * k / n - oy) // c)
            if not (0 <= i < w and 0 <= j < h and see[j * w + i]):
                return False
        return True

    def cells_of_kind(self, kind: str) -> Iterable[Cell]:
        """Every cell whose sector is of ``kind``."""
        for j in range(self.height):
            for i in range(self.width):
                if self.kind((i, j)) == kind:
                    yield (i, j)
