"""A small WAD directory reader that validates a WAD before the engine sees it.

The engine hangs forever in ``init()`` on some malformed WADs (an empty map
marker is enough), so every WAD Golem loads is checked here first: header
magic, directory bounds, lump bounds, and that the requested map marker is
followed by its map lumps.

WAD layout (all integers little-endian int32):
    header: ``magic[4]`` (``IWAD``/``PWAD``), ``numlumps``, ``infotableofs``
    directory at ``infotableofs``: ``numlumps`` × (``filepos``, ``size``, ``name[8]``)

:func:`check_map_geometry` goes further for classic maps, because one wrong index
in a map lump segfaults the engine: every lump is a whole number of records and
every reference (linedef → vertex / sidedef, sidedef → sector, and the node tree
when one is stored) points at a record that exists.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from golem.errors import GolemError

HEADER = struct.Struct("<4sii")
ENTRY = struct.Struct("<ii8s")
MAGICS = (b"IWAD", b"PWAD")

#: Lumps a classic (Doom/Hexen format) map must have after its marker.
CLASSIC_REQUIRED = ("THINGS", "LINEDEFS", "SIDEDEFS", "VERTEXES", "SECTORS")
#: Every lump that may follow a classic map marker.
CLASSIC_LUMPS = frozenset(
    CLASSIC_REQUIRED
    + (
        "SEGS",
        "SSECTORS",
        "NODES",
        "REJECT",
        "BLOCKMAP",
        "BEHAVIOR",
        "SCRIPTS",
        "LEAFS",
        "LIGHTS",
        "MACROS",
        "GL_VERT",
        "GL_SEGS",
        "GL_SSECT",
        "GL_NODES",
        "GL_PVS",
    )
)
#: UDMF maps: marker, TEXTMAP, optional lumps, ENDMAP.
UDMF_FIRST, UDMF_END = "TEXTMAP", "ENDMAP"

#: Record sizes in bytes of the classic map lumps (Doom format; Hexen format differs for two).
RECORD_SIZES = {
    "THINGS": 10,
    "LINEDEFS": 14,
    "SIDEDEFS": 30,
    "VERTEXES": 4,
    "SECTORS": 26,
    "SEGS": 12,
    "SSECTORS": 4,
    "NODES": 28,
}
HEXEN_RECORD_SIZES = {**RECORD_SIZES, "THINGS": 20, "LINEDEFS": 16}
#: A sidedef index meaning "no side" (one-sided linedef's back).
NO_SIDE = 0xFFFF
#: Node child flag: the child is a subsector, not a node.
SUBSECTOR_FLAG = 0x8000
#: First bytes of the extended node formats ZDoom reads from NODES / SSECTORS (checked by the engine itself).
EXTENDED_NODES = (b"XNOD", b"ZNOD", b"XGLN", b"ZGLN", b"XGL2", b"ZGL2", b"XGL3", b"ZGL3")


@dataclass(frozen=True)
class Lump:
    """One directory entry: ``name`` (upper case), byte ``offset`` and ``size`` in the file."""

    name: str
    offset: int
    size: int


@dataclass(frozen=True)
class WadDirectory:
    """A WAD's kind (``IWAD``/``PWAD``) and its lumps in directory order."""

    source: str
    kind: str
    lumps: tuple[Lump, ...]

    def maps(self) -> list[str]:
        """Map marker names (``MAP01``, ``E1M1``, …): lumps followed by ``THINGS`` or ``TEXTMAP``."""
        names = [lump.name for lump in self.lumps]
        return [names[i] for i in range(len(names) - 1) if names[i + 1] in ("THINGS", "TEXTMAP")]

    def validate_map(self, map_name: str) -> str:
        """Check that ``map_name`` exists and is followed by its map lumps; return the kind.

        Returns:
            ``"classic"`` or ``"udmf"``.

        Raises:
            GolemError: the marker is missing, empty (no map lumps after it), or
                its lumps are incomplete.
        """
        wanted = map_name.upper()
        names = [lump.name for lump in self.lumps]
        if wanted not in names:
            known = ", ".join(self.maps()) or "none"
            raise GolemError(f"map {wanted} not found in {self.source} (maps: {known})")
        index = names.index(wanted)
        following = self.lumps[index + 1 :]
        if following and following[0].name == UDMF_FIRST:
            end = next((i for i, lump in enumerate(following) if lump.name == UDMF_END), None)
            if end is None:
                raise GolemError(f"map {wanted} in {self.source} is UDMF without ENDMAP")
            if following[0].size == 0:
                raise GolemError(f"map {wanted} in {self.source} has an empty TEXTMAP")
            return "udmf"
        block: dict[str, Lump] = {}
        for lump in following:
            if lump.name not in CLASSIC_LUMPS or lump.name in block:
                break
            block[lump.name] = lump
        if not block:
            raise GolemError(f"map marker {wanted} in {self.source} is empty (no map lumps follow it)")
        missing = [name for name in CLASSIC_REQUIRED if name not in block]
        if missing:
            raise GolemError(f"map {wanted} in {self.source} lacks lumps: {', '.join(missing)}")
        empty = [name for name in CLASSIC_REQUIRED if name != "THINGS" and block[name].size == 0]
        if empty:
            raise GolemError(f"map {wanted} in {self.source} has empty lumps: {', '.join(empty)}")
        return "classic"


def map_block(wad: WadDirectory, map_name: str) -> dict[str, Lump]:
    """The lumps after classic map marker ``map_name`` (name → lump), as :meth:`WadDirectory.validate_map` reads
    them."""
    names = [lump.name for lump in wad.lumps]
    block: dict[str, Lump] = {}
    for lump in wad.lumps[names.index(map_name.upper()) + 1 :]:
        if lump.name not in CLASSIC_LUMPS or lump.name in block:
            break
        block[lump.name] = lump
    return block


def _u16(data: bytes, record: int, offsets: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Unsigned 16-bit fields at byte ``offsets`` of each ``record``-byte record of ``data``."""
    return [
        tuple(int.from_bytes(data[i + o : i + o + 2], "little") for o in offsets) for i in range(0, len(data), record)
    ]


def check_map_geometry(wad: WadDirectory, map_name: str, read: Callable[[Lump], bytes]) -> None:
    """Check a classic map's lump sizes and cross references before the engine loads it.

    UDMF maps (text) are left to the engine. Run after :meth:`WadDirectory.validate_map`.

    Args:
        wad: the WAD's directory.
        map_name: the map marker (``MAP01``).
        read: ``read(lump) -> bytes`` of one lump.

    Raises:
        GolemError: one line naming the map, the lump and the bad record.
    """
    wanted = map_name.upper()
    if wad.validate_map(wanted) != "classic":
        return
    block = map_block(wad, wanted)
    sizes = HEXEN_RECORD_SIZES if "BEHAVIOR" in block else RECORD_SIZES
    where = f"map {wanted} in {wad.source}"
    data = {name: read(lump) for name, lump in block.items() if name in sizes}
    if data.get("NODES", b"")[:4] in EXTENDED_NODES or data.get("SSECTORS", b"")[:4] in EXTENDED_NODES:
        data.pop("NODES", None), data.pop("SSECTORS", None), data.pop("SEGS", None)
    for name, raw in data.items():
        if len(raw) % sizes[name]:
            raise GolemError(
                f"{where} is damaged: {name} is {len(raw)} bytes, not a multiple of its {sizes[name]}-byte records"
            )
    count = {name: len(raw) // sizes[name] for name, raw in data.items()}
    n_vertexes, n_sides, n_sectors = count["VERTEXES"], count["SIDEDEFS"], count["SECTORS"]
    front_back = (10, 12) if sizes is RECORD_SIZES else (12, 14)
    for i, (v1, v2, front, back) in enumerate(_u16(data["LINEDEFS"], sizes["LINEDEFS"], (0, 2, *front_back))):
        if v1 >= n_vertexes or v2 >= n_vertexes:
            raise GolemError(f"{where} is damaged: linedef {i} names vertex {max(v1, v2)} of {n_vertexes}")
        if front == NO_SIDE or front >= n_sides or (back != NO_SIDE and back >= n_sides):
            side = front if front == NO_SIDE or front >= n_sides else back
            raise GolemError(f"{where} is damaged: linedef {i} names sidedef {side} of {n_sides}")
    for i, (sector,) in enumerate(_u16(data["SIDEDEFS"], 30, (28,))):
        if sector >= n_sectors:
            raise GolemError(f"{where} is damaged: sidedef {i} names sector {sector} of {n_sectors}")
    n_segs, n_subsectors, n_nodes = count.get("SEGS", 0), count.get("SSECTORS", 0), count.get("NODES", 0)
    if n_segs and n_subsectors:
        n_lines = count["LINEDEFS"]
        for i, (v1, v2, line) in enumerate(_u16(data["SEGS"], 12, (0, 2, 6))):
            if v1 >= n_vertexes or v2 >= n_vertexes or line >= n_lines:
                raise GolemError(f"{where} is damaged: seg {i} names a vertex or linedef that does not exist")
        for i, (segs, first) in enumerate(_u16(data["SSECTORS"], 4, (0, 2))):
            if first + segs > n_segs:
                raise GolemError(
                    f"{where} is damaged: subsector {i} names segs {first}..{first + segs - 1} of {n_segs}"
                )
        for i, children in enumerate(_u16(data.get("NODES", b""), 28, (24, 26))):
            for child in children:
                bad = (child & ~SUBSECTOR_FLAG) >= n_subsectors if child & SUBSECTOR_FLAG else child >= n_nodes
                if bad:
                    raise GolemError(f"{where} is damaged: node {i} names a child ({child:#06x}) that does not exist")


def parse_directory(header: bytes, read_at, file_size: int, source: str) -> WadDirectory:
    """Parse a WAD's header and directory.

    Args:
        header: the first 12 bytes.
        read_at: ``read_at(offset, size) -> bytes``.
        file_size: total size in bytes, for bounds checks.
        source: name used in error messages.
    """
    if len(header) < HEADER.size:
        raise GolemError(f"{source} is not a WAD: {len(header)} bytes, shorter than a WAD header")
    magic, count, offset = HEADER.unpack(header[: HEADER.size])
    if magic not in MAGICS:
        raise GolemError(f"{source} is not a WAD: magic {magic!r}, expected IWAD or PWAD")
    if count < 0 or offset < HEADER.size or offset + count * ENTRY.size > file_size:
        raise GolemError(
            f"{source} is a truncated or corrupt WAD: directory ({count} lumps at {offset}) is out of bounds"
        )
    raw = read_at(offset, count * ENTRY.size)
    lumps = []
    for i in range(count):
        pos, size, name = ENTRY.unpack_from(raw, i * ENTRY.size)
        text = name.split(b"\0", 1)[0].decode("ascii", "replace").upper()
        if pos < 0 or size < 0 or (size > 0 and pos + size > file_size):
            raise GolemError(
                f"{source} is a truncated or corrupt WAD: lump {text} ({size} bytes at {pos}) is out of bounds"
            )
        lumps.append(Lump(text, pos, size))
    return WadDirectory(source=source, kind=magic.decode(), lumps=tuple(lumps))


def read_wad_bytes(data: bytes, source: str = "<bytes>") -> WadDirectory:
    """The directory of a WAD held in memory."""
    return parse_directory(data[: HEADER.size], lambda off, n: data[off : off + n], len(data), source)


def read_wad(path: str | Path) -> WadDirectory:
    """The directory of the WAD file at ``path``; reads only the header and directory."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            size = path.stat().st_size

            def read_at(offset: int, n: int) -> bytes:
                fh.seek(offset)
                return fh.read(n)

            return parse_directory(fh.read(HEADER.size), read_at, size, str(path))
    except FileNotFoundError:
        raise GolemError(f"WAD file not found: {path}") from None
    except IsADirectoryError:
        raise GolemError(f"WAD path is a directory: {path}") from None
    except OSError as exc:
        raise GolemError(f"cannot read WAD {path}: {exc.strerror}") from None


def read_lump(path: str | Path, lump: Lump) -> bytes:
    """The bytes of ``lump`` of the WAD file at ``path`` (its bounds were checked by :func:`read_wad`)."""
    try:
        with Path(path).open("rb") as fh:
            fh.seek(lump.offset)
            return fh.read(lump.size)
    except OSError as exc:
        raise GolemError(f"cannot read WAD {path}: {exc.strerror}") from None


def check_map_file(path: str | Path, map_name: str, wad: WadDirectory | None = None) -> WadDirectory:
    """:meth:`WadDirectory.validate_map` then :func:`check_map_geometry` for the WAD file at ``path``.

    Raises:
        GolemError: one line saying what is wrong.
    """
    wad = read_wad(path) if wad is None else wad
    check_map_geometry(wad, map_name, lambda lump: read_lump(path, lump))
    return wad


def validate_wad(path: str | Path, map_name: str | None = None) -> WadDirectory:
    """Read ``path`` and, when ``map_name`` is given, check that map; return the directory.

    Raises:
        GolemError: one line saying what is wrong.
    """
    wad = read_wad(path)
    if map_name is not None:
        wad.validate_map(map_name)
    return wad


#: A UDMF ``thing { … }`` block's body, and the ``type = N;`` inside it.
_UDMF_THING = re.compile(rb"\bthing\b[^{]*\{([^}]*)\}", re.IGNORECASE)
_UDMF_TYPE = re.compile(rb"\btype\s*=\s*(\d+)\s*;", re.IGNORECASE)


def thing_types(path: str | Path, map_name: str, wad: WadDirectory | None = None) -> list[int]:
    """The editor numbers of every thing placed on ``map_name`` (classic Doom or Hexen format, or UDMF).

    Raises:
        GolemError: the WAD cannot be read or the map is missing or incomplete.
    """
    wad = read_wad(path) if wad is None else wad
    kind = wad.validate_map(map_name)
    names = [lump.name for lump in wad.lumps]
    if kind == "udmf":
        text = read_lump(path, wad.lumps[names.index(map_name.upper()) + 1])
        found = (_UDMF_TYPE.search(body) for body in _UDMF_THING.findall(text))
        return [int(m.group(1)) for m in found if m is not None]
    block = map_block(wad, map_name)
    record, offset = (20, 10) if "BEHAVIOR" in block else (10, 6)  # Hexen format: tid, x, y, z, angle, type
    data = read_lump(path, block["THINGS"])
    return [
        int.from_bytes(data[i + offset : i + offset + 2], "little") for i in range(0, len(data) - record + 1, record)
    ]


def build_wad(lumps: list[tuple[str, bytes]], kind: str = "PWAD") -> bytes:
    """Bytes of a WAD holding ``lumps`` (name, data) in order — for tests and generators."""
    body = bytearray()
    entries = []
    for name, data in lumps:
        entries.append((HEADER.size + len(body), len(data), name.encode("ascii")[:8]))
        body += data
    directory = b"".join(ENTRY.pack(pos, size, name) for pos, size, name in entries)
    return HEADER.pack(kind.encode("ascii"), len(lumps), HEADER.size + len(body)) + bytes(body) + directory
