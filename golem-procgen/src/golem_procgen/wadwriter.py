"""A :class:`golem_procgen.layout.Layout` → a classic Doom-format PWAD (through ``omgifol``).

Lines come from the cell grid: every edge between a walkable cell and a
solid one is a one-sided wall, every edge between two cells of different
sectors a two-sided line, and runs of equal edges along one grid line are
merged into one linedef (a run never has a T-junction inside it: a line
meeting it would mean the cells beside it change sector there). The front
side of a door, exit or teleport line faces out of the special sector,
because Doom triggers those lines from their front side only. No BSP nodes
are written: ViZDoom builds them when it loads the map.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from golem_procgen.layout import CELL, Layout, SectorSpec
from golem_procgen.themes import DOOR, DOOR_TRACK, EXIT_WALL

#: Doom linedef specials used: DR door (use, also monsters), W1 exit, WR teleport.
DOOR_OPEN, EXIT_LEVEL, TELEPORT = 1, 52, 97
#: The map lump the generator writes.
MAP_NAME = "MAP01"


@dataclass(frozen=True)
class Edge:
    """One cell edge as a future line: ``start``/``end`` in map units (front side on the right)."""

    start: tuple[int, int]
    end: tuple[int, int]
    front: int
    back: int  # -1 for a one-sided wall


def _special(front: SectorSpec, back: SectorSpec | None) -> tuple[int, int]:
    """The (special, tag) of a line whose front faces ``front`` and back ``back`` (the special sector)."""
    if back is None:
        return 0, 0
    if back.kind == "door":
        return DOOR_OPEN, 0
    if back.kind == "exit":
        return EXIT_LEVEL, 0
    if back.kind == "teleport":
        return TELEPORT, back.dest_tag
    return 0, 0


def _oriented(a: int, b: int, sectors: list[SectorSpec]) -> tuple[int, int]:
    """(front, back) for a two-sided edge between sectors a and b: specials on the back."""
    special = ("door", "exit", "teleport")
    if sectors[a].kind in special and sectors[b].kind not in special:
        return b, a
    return a, b


def cell_edges(layout: Layout) -> list[Edge]:
    """Every line-worthy cell edge, front side on the right of ``start → end``."""
    edges: list[Edge] = []
    grid, sectors = layout.grid, layout.sectors
    for j in range(layout.height + 1):  # horizontal edges at y = j·CELL between rows j−1 (below) and j (above)
        for i in range(layout.width):
            below = grid[j - 1][i] if j > 0 else -1
            above = grid[j][i] if j < layout.height else -1
            if below == above:
                continue
            x0, x1, y = i * CELL, (i + 1) * CELL, j * CELL
            if below < 0 or above < 0:
                inside = above if above >= 0 else below
                front, back = inside, -1
            else:
                front, back = _oriented(above, below, sectors)
            # front above: walk −x; front below: walk +x (the front is on the right).
            edges.append(Edge((x1, y), (x0, y), front, back) if front == above else Edge((x0, y), (x1, y), front, back))
    for i in range(layout.width + 1):  # vertical edges at x = i·CELL between columns i−1 (left) and i (right)
        for j in range(layout.height):
            left = grid[j][i - 1] if i > 0 else -1
            right = grid[j][i] if i < layout.width else -1
            if left == right:
                continue
            x, y0, y1 = i * CELL, j * CELL, (j + 1) * CELL
            if left < 0 or right < 0:
                front, back = (right if right >= 0 else left), -1
            else:
                front, back = _oriented(right, left, sectors)
            # front right: walk +y; front left: walk −y.
            edges.append(Edge((x, y0), (x, y1), front, back) if front == right else Edge((x, y1), (x, y0), front, back))
    return edges


def merge_edges(edges: list[Edge]) -> list[Edge]:
    """Join consecutive collinear edges with the same sides into one (order: deterministic)."""
    runs: dict[tuple, list[Edge]] = {}
    for e in edges:
        horizontal = e.start[1] == e.end[1]
        direction = (e.end[0] > e.start[0]) if horizontal else (e.end[1] > e.start[1])
        key = (horizontal, e.start[1] if horizontal else e.start[0], direction, e.front, e.back)
        runs.setdefault(key, []).append(e)
    out: list[Edge] = []
    for key in sorted(runs):
        horizontal = key[0]
        axis = 0 if horizontal else 1
        group = sorted(runs[key], key=lambda e: min(e.start[axis], e.end[axis]))
        lo = hi = None
        template = group[0]
        for e in group:
            a, b = sorted((e.start[axis], e.end[axis]))
            if lo is None:
                lo, hi = a, b
            elif a == hi:
                hi = b
            else:
                out.append(_span(template, lo, hi, horizontal))
                lo, hi = a, b
        out.append(_span(template, lo, hi, horizontal))
    return out


def _span(template: Edge, lo: int, hi: int, horizontal: bool) -> Edge:
    forward = (template.end[0] > template.start[0]) if horizontal else (template.end[1] > template.start[1])
    fixed = template.start[1] if horizontal else template.start[0]
    a, b = (lo, hi) if forward else (hi, lo)
    if horizontal:
        return Edge((a, fixed), (b, fixed), template.front, template.back)
    return Edge((fixed, a), (fixed, b), template.front, template.back)


def write_wad(layout: Layout) -> bytes:
    """The layout as PWAD bytes with one map, :data:`MAP_NAME` (deterministic)."""
    import omg
    from omg.mapedit import Linedef, MapEditor, Sector, Sidedef, Thing, Vertex

    editor = MapEditor()
    for spec in layout.sectors:
        editor.sectors.append(
            Sector(
                z_floor=spec.floor,
                z_ceil=spec.ceiling,
                tx_floor=spec.floor_flat,
                tx_ceil=spec.ceiling_flat,
                light=spec.light,
                type=spec.special,
                tag=spec.tag,
            )
        )
    vertex_index: dict[tuple[int, int], int] = {}

    def vertex(point: tuple[int, int]) -> int:
        if point not in vertex_index:
            vertex_index[point] = len(editor.vertexes)
            editor.vertexes.append(Vertex(x=point[0], y=point[1]))
        return vertex_index[point]

    def side(sector: int, mid: str, upper: str = "-", lower: str = "-") -> int:
        editor.sidedefs.append(Sidedef(tx_up=upper, tx_low=lower, tx_mid=mid, sector=sector))
        return len(editor.sidedefs) - 1

    for e in merge_edges(cell_edges(layout)):
        front = layout.sectors[e.front]
        back = layout.sectors[e.back] if e.back >= 0 else None
        special, tag = _special(front, back)
        if back is None:
            wall = DOOR_TRACK if front.kind == "door" else front.wall
            line = Linedef(vx_a=vertex(e.start), vx_b=vertex(e.end), front=side(e.front, wall), back=0xFFFF)
            line.impassable = True
            line.lower_unpeg = front.kind == "door"
        else:
            upper = DOOR if back.kind == "door" else front.wall
            lower = EXIT_WALL if back.kind == "exit" else front.wall
            line = Linedef(
                vx_a=vertex(e.start),
                vx_b=vertex(e.end),
                front=side(e.front, "-", upper, lower),
                back=side(e.back, "-", back.wall, back.wall),
            )
            line.two_sided = True
        line.action, line.tag = special, tag
        editor.linedefs.append(line)
    x, y, angle = layout.start
    editor.things.append(Thing(x=int(x), y=int(y), angle=int(angle), type=1, easy=True, medium=True, hard=True))
    for t in layout.things:
        editor.things.append(
            Thing(
                x=int(t.x),
                y=int(t.y),
                angle=int(t.angle),
                type=int(t.type),
                easy=bool(t.flags & 1),
                medium=bool(t.flags & 2),
                hard=bool(t.flags & 4),
            )
        )
    wad = omg.WAD()
    wad.maps[MAP_NAME] = editor.to_lumps()
    buffer = io.BytesIO()
    _save(wad, buffer)
    return buffer.getvalue()


def _save(wad, stream: io.BytesIO) -> None:
    """``omg.WAD.to_file`` into a stream (it only takes paths), through a temporary file."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory(prefix="golem-wad-") as tmp:
        path = Path(tmp) / "map.wad"
        wad.to_file(str(path))
        stream.write(path.read_bytes())
