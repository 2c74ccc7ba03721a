"""A map's geometry and things read from a WAD: classic Doom format, Hexen format and UDMF.

:func:`read_map` returns plain records — vertices, lines (with their two
sectors already resolved through the sidedefs), sectors and things — in map
units and in the WAD's own order, so a sector's index here is its index in
the engine (``state.sectors``). The *dialect* says how line and sector
specials are numbered: ``doom`` (Doom-format maps and UDMF's ``doom``
namespace: a special and a tag per line) or ``hexen`` (Hexen-format maps and
UDMF's ``zdoom``/``hexen`` namespaces: a special, five arguments and an
activation per line). Oblige 7.70 writes Doom-format maps; the shipped
ViZDoom scenarios are UDMF in the ``zdoom`` namespace.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

from golem.errors import GolemError
from golem.wad import UDMF_FIRST, Lump, WadDirectory, map_block, read_wad, read_wad_bytes

#: Doom line flags: blocks players and monsters; two-sided.
ML_BLOCKING, ML_TWOSIDED = 0x0001, 0x0004
#: Hexen line flags: the activation (bits 10–12) and "repeatable".
HEXEN_ACTIVATION_MASK, HEXEN_ACTIVATION_SHIFT, HEXEN_REPEAT = 0x1C00, 10, 0x0200
#: Hexen activations by number.
HEXEN_ACTIVATIONS = ("cross", "use", "monster", "shoot", "push", "projectile")
#: Hexen (and ZDoom) line flag: blocks everything.
HEXEN_BLOCK_EVERYTHING = 0x8000

_VERTEX = struct.Struct("<hh")
_SIDE = struct.Struct("<hh8s8s8sH")
_SECTOR = struct.Struct("<hh8s8shHH")
_DOOM_LINE = struct.Struct("<HHHHHHH")
_DOOM_THING = struct.Struct("<hhhHH")
_HEXEN_LINE = struct.Struct("<HHHB5BHH")
_HEXEN_THING = struct.Struct("<hhhhhhhB5B")
NO_SIDE = 0xFFFF


@dataclass
class Line:
    """One linedef: endpoints (map units), the sectors on its front (right of a→b) and back (``-1``: none).

    Attributes:
        special: the line special in the map's dialect; ``tag`` the Doom tag (Hexen: ``args[0]``).
        args: Hexen/UDMF arguments (five; Doom format: ``(tag, 0, 0, 0, 0)``).
        activation: how the special fires: ``cross``, ``use``, ``shoot``, ``monster``, ``push``, ``projectile``
            (Doom format: ``""`` — the special's number says it).
        blocking: players cannot cross it (Doom's impassable flag, ZDoom's block-players/block-everything).
    """

    a: tuple[float, float]
    b: tuple[float, float]
    front: int
    back: int
    special: int = 0
    tag: int = 0
    args: tuple[int, ...] = (0, 0, 0, 0, 0)
    activation: str = ""
    repeat: bool = False
    blocking: bool = False
    index: int = 0

    @property
    def two_sided(self) -> bool:
        """Whether both sides have a sector."""
        return self.front >= 0 and self.back >= 0

    def midpoint(self) -> tuple[float, float]:
        """The middle of the line, map units."""
        return (self.a[0] + self.b[0]) / 2, (self.a[1] + self.b[1]) / 2


@dataclass
class Sector:
    """One sector: floor and ceiling heights (map units), its special and tag, its floor flat."""

    floor: float
    ceiling: float
    special: int = 0
    tag: int = 0
    floor_flat: str = ""


@dataclass
class Thing:
    """One thing: position (map units), facing (degrees), editor number, thing id (Hexen/UDMF ``tid``)."""

    x: float
    y: float
    angle: float
    type: int
    tid: int = 0


@dataclass
class MapData:
    """A map as :func:`read_map` reads it: ``format`` is ``doom``, ``hexen`` or ``udmf``; ``dialect`` ``doom`` or
    ``hexen`` (how specials are numbered)."""

    name: str
    format: str
    dialect: str
    lines: list[Line] = field(default_factory=list)
    sectors: list[Sector] = field(default_factory=list)
    things: list[Thing] = field(default_factory=list)

    def bounds(self) -> tuple[float, float, float, float]:
        """``(x0, y0, x1, y1)`` around every line, map units."""
        xs = [p[0] for line in self.lines for p in (line.a, line.b)]
        ys = [p[1] for line in self.lines for p in (line.a, line.b)]
        return min(xs), min(ys), max(xs), max(ys)


def _name(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("ascii", "replace").upper()


def _records(data: bytes, record: struct.Struct, what: str, where: str) -> list[tuple]:
    if len(data) % record.size:
        raise GolemError(f"{where} is damaged: {what} is {len(data)} bytes, not whole {record.size}-byte records")
    return [record.unpack_from(data, k) for k in range(0, len(data), record.size)]


def _classic(name: str, lumps: dict[str, bytes], where: str) -> MapData:
    hexen = "BEHAVIOR" in lumps
    vertices = [(float(x), float(y)) for x, y in _records(lumps["VERTEXES"], _VERTEX, "VERTEXES", where)]
    sides = [r[5] for r in _records(lumps["SIDEDEFS"], _SIDE, "SIDEDEFS", where)]
    sectors = [
        Sector(floor=float(f), ceiling=float(c), special=special, tag=tag, floor_flat=_name(flat))
        for f, c, flat, _, _, special, tag in _records(lumps["SECTORS"], _SECTOR, "SECTORS", where)
    ]
    out = MapData(name=name, format="hexen" if hexen else "doom", dialect="hexen" if hexen else "doom")
    out.sectors = sectors

    def sector_of(side: int) -> int:
        if side == NO_SIDE:
            return -1
        if side >= len(sides) or sides[side] >= len(sectors):
            raise GolemError(f"{where} is damaged: a line names side {side} or its sector, which do not exist")
        return sides[side]

    if hexen:
        for k, (v1, v2, flags, special, *rest) in enumerate(
            _records(lumps["LINEDEFS"], _HEXEN_LINE, "LINEDEFS", where)
        ):
            args, front, back = tuple(rest[:5]), rest[5], rest[6]
            activation = (flags & HEXEN_ACTIVATION_MASK) >> HEXEN_ACTIVATION_SHIFT
            out.lines.append(
                Line(
                    vertices[v1],
                    vertices[v2],
                    sector_of(front),
                    sector_of(back),
                    special=special,
                    tag=args[0],
                    args=args,
                    activation=HEXEN_ACTIVATIONS[activation] if activation < len(HEXEN_ACTIVATIONS) else "",
                    repeat=bool(flags & HEXEN_REPEAT),
                    blocking=bool(flags & (ML_BLOCKING | HEXEN_BLOCK_EVERYTHING)),
                    index=k,
                )
            )
        for tid, x, y, _z, angle, type_, *_ in _records(lumps["THINGS"], _HEXEN_THING, "THINGS", where):
            out.things.append(Thing(float(x), float(y), float(angle), type_, tid))
    else:
        for k, (v1, v2, flags, special, tag, front, back) in enumerate(
            _records(lumps["LINEDEFS"], _DOOM_LINE, "LINEDEFS", where)
        ):
            out.lines.append(
                Line(
                    vertices[v1],
                    vertices[v2],
                    sector_of(front),
                    sector_of(back),
                    special=special,
                    tag=tag,
                    args=(tag, 0, 0, 0, 0),
                    blocking=bool(flags & ML_BLOCKING),
                    index=k,
                )
            )
        for x, y, angle, type_, _flags in _records(lumps["THINGS"], _DOOM_THING, "THINGS", where):
            out.things.append(Thing(float(x), float(y), float(angle), type_))
    return out


def _udmf(name: str, text: str, where: str) -> MapData:
    from golem_procgen.variants.udmf import parse_textmap

    textmap = parse_textmap(text)
    namespace = textmap.namespace
    dialect = "doom" if namespace in ("doom", "heretic", "strife") else "hexen"
    out = MapData(name=name, format="udmf", dialect=dialect)
    vertices = [(b.number("x"), b.number("y")) for b in textmap.of_kind("vertex")]
    sides = [int(b.number("sector", -1)) for b in textmap.of_kind("sidedef")]
    for b in textmap.of_kind("sector"):
        out.sectors.append(
            Sector(
                floor=b.number("heightfloor"),
                ceiling=b.number("heightceiling"),
                special=int(b.number("special")),
                tag=int(b.number("id")),
                floor_flat=(b.text("texturefloor") or "").upper(),
            )
        )

    def sector_of(side: float) -> int:
        side = int(side)
        if side < 0:
            return -1
        if side >= len(sides) or not 0 <= sides[side] < len(out.sectors):
            raise GolemError(f"{where} is damaged: a line names side {side} or its sector, which do not exist")
        return sides[side]

    for k, b in enumerate(textmap.of_kind("linedef")):
        v1, v2 = int(b.number("v1", -1)), int(b.number("v2", -1))
        if not (0 <= v1 < len(vertices) and 0 <= v2 < len(vertices)):
            raise GolemError(f"{where} is damaged: linedef {k} names a vertex that does not exist")
        args = tuple(int(b.number(f"arg{i}")) for i in range(5))
        special = int(b.number("special"))
        activation = next(
            (
                act
                for key, act in (
                    ("playeruse", "use"),
                    ("playercross", "cross"),
                    ("impact", "shoot"),
                    ("playerpush", "push"),
                    ("monstercross", "monster"),
                )
                if b.flag(key)
            ),
            "",
        )
        tag = args[0] if dialect == "hexen" else int(b.number("arg0")) or max(0, int(b.number("id", 0)))
        out.lines.append(
            Line(
                vertices[v1],
                vertices[v2],
                sector_of(b.number("sidefront", -1)),
                sector_of(b.number("sideback", -1)),
                special=special,
                tag=tag,
                args=args,
                activation=activation,
                repeat=b.flag("repeatspecial"),
                blocking=b.flag("blocking") or b.flag("blockplayers") or b.flag("blockeverything"),
                index=k,
            )
        )
    for b in textmap.of_kind("thing"):
        out.things.append(
            Thing(b.number("x"), b.number("y"), b.number("angle"), int(b.number("type")), int(b.number("id")))
        )
    return out


def map_from_directory(wad: WadDirectory, map_name: str, read: callable) -> MapData:
    """Read ``map_name`` of a WAD directory; ``read(lump) -> bytes``.

    Raises:
        GolemError: the map is missing or its lumps are damaged (one line).
    """
    wanted = map_name.upper()
    kind = wad.validate_map(wanted)
    where = f"map {wanted} in {wad.source}"
    if kind == "udmf":
        names = [lump.name for lump in wad.lumps]
        textmap: Lump = wad.lumps[names.index(wanted) + 1]
        assert textmap.name == UDMF_FIRST
        return _udmf(wanted, read(textmap).decode("latin-1"), where)
    block = map_block(wad, wanted)
    lumps = {name: read(lump) for name, lump in block.items()}
    return _classic(wanted, lumps, where)


def read_map(wad: str | Path, map_name: str = "MAP01") -> MapData:
    """The map ``map_name`` of the WAD file ``wad``.

    Raises:
        GolemError: not a WAD, no such map, damaged lumps (one line).
    """
    path = Path(wad)
    directory = read_wad(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise GolemError(f"cannot read WAD {path}: {exc.strerror}") from None
    return map_from_directory(directory, map_name, lambda lump: data[lump.offset : lump.offset + lump.size])


def read_map_bytes(data: bytes, map_name: str = "MAP01", source: str = "<bytes>") -> MapData:
    """The map ``map_name`` of WAD bytes held in memory (see :func:`read_map`)."""
    directory = read_wad_bytes(data, source)
    return map_from_directory(directory, map_name, lambda lump: data[lump.offset : lump.offset + lump.size])
