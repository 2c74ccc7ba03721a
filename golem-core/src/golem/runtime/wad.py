"""A small WAD directory reader that validates a WAD before the engine sees it.

The engine hangs forever in ``init()`` on some malformed WADs (an empty map
marker is enough), so every WAD Golem loads is checked here first: header
magic, directory bounds, lump bounds, and that the requested map marker is
followed by its map lumps.

WAD layout (all integers little-endian int32):
    header: ``magic[4]`` (``IWAD``/``PWAD``), ``numlumps``, ``infotableofs``
    directory at ``infotableofs``: ``numlumps`` × (``filepos``, ``size``, ``name[8]``)
"""

from __future__ import annotations

import struct
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
    CLASSIC_REQUIRED + ("SEGS", "SSECTORS", "NODES", "REJECT", "BLOCKMAP", "BEHAVIOR", "SCRIPTS", "LEAFS", "LIGHTS", "MACROS", "GL_VERT", "GL_SEGS", "GL_SSECT", "GL_NODES", "GL_PVS")
)
#: UDMF maps: marker, TEXTMAP, optional lumps, ENDMAP.
UDMF_FIRST, UDMF_END = "TEXTMAP", "ENDMAP"


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
        raise GolemError(f"{source} is a truncated or corrupt WAD: directory ({count} lumps at {offset}) is out of bounds")
    raw = read_at(offset, count * ENTRY.size)
    lumps = []
    for i in range(count):
        pos, size, name = ENTRY.unpack_from(raw, i * ENTRY.size)
        text = name.split(b"\0", 1)[0].decode("ascii", "replace").upper()
        if pos < 0 or size < 0 or (size > 0 and pos + size > file_size):
            raise GolemError(f"{source} is a truncated or corrupt WAD: lump {text} ({size} bytes at {pos}) is out of bounds")
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


def validate_wad(path: str | Path, map_name: str | None = None) -> WadDirectory:
    """Read ``path`` and, when ``map_name`` is given, check that map; return the directory.

    Raises:
        GolemError: one line saying what is wrong.
    """
    wad = read_wad(path)
    if map_name is not None:
        wad.validate_map(map_name)
    return wad


def build_wad(lumps: list[tuple[str, bytes]], kind: str = "PWAD") -> bytes:
    """Bytes of a WAD holding ``lumps`` (name, data) in order — for tests and generators."""
    body = bytearray()
    entries = []
    for name, data in lumps:
        entries.append((HEADER.size + len(body), len(data), name.encode("ascii")[:8]))
        body += data
    directory = b"".join(ENTRY.pack(pos, size, name) for pos, size, name in entries)
    return HEADER.pack(kind.encode("ascii"), len(lumps), HEADER.size + len(body)) + bytes(body) + directory
