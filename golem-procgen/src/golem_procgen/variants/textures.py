"""The IWAD's wall textures and flats a variant may use, and a map's texture mapping.

Wall candidates are the IWAD's ``TEXTURE1``/``TEXTURE2`` textures that tile
(width 64, 128 or 256; height 64 or 128), are opaque (their patches cover every
pixel, so a one-sided wall never shows through) and are not animated, a switch,
a door, an exit sign or a sky. Flats are those between ``F_START`` and
``F_END`` except the sky; an animated flat (a liquid: nukage, water, lava,
blood, slime) is replaced by another liquid's first frame and a still flat by
a still flat, so a damaging floor still looks like one. Animations are the
engine's own (``animated.lmp`` in ``vizdoom.pk3``).
"""

from __future__ import annotations

import random
import struct
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from golem.errors import GolemError
from golem_procgen.variants.decorate import engine_pk3
from golem_procgen.variants.udmf import Textmap

#: Sidedef and sector fields holding texture names.
WALL_FIELDS = ("texturetop", "texturemiddle", "texturebottom")
FLAT_FIELDS = ("texturefloor", "textureceiling")
#: Widths and heights of wall textures that tile cleanly.
WALL_WIDTHS = (64, 128, 256)
WALL_HEIGHTS = (64, 128)
#: Name prefixes of textures never drawn: switches (their pairs animate on use), doors, exit signs, skies,
#: the placeholders.
RESERVED_PREFIXES = ("SW1", "SW2", "SKY", "DOOR", "BIGDOOR", "SPCDOOR", "EXIT", "AASHITTY", "AASTINKY")
#: The sky flat: a sector showing it shows the sky, never a texture.
SKY_FLAT_PREFIX = "F_SKY"
#: Textures no texture replaces: "no texture".
NO_TEXTURE = "-"


@dataclass(frozen=True)
class IwadArt:
    """What a variant may draw from an IWAD.

    Attributes:
        walls: wall textures that tile, opaque and still (sorted).
        flats: still flats (sorted).
        liquids: first frames of the animated flats (sorted).
        animated_flats: every frame of every flat animation.
        sizes: every texture's ``(width, height)``.
    """

    walls: tuple[str, ...]
    flats: tuple[str, ...]
    liquids: tuple[str, ...]
    animated_flats: frozenset[str]
    sizes: dict[str, tuple[int, int]]


def _animations(pk3: Path) -> list[tuple[bool, str, str]]:
    """``(is_texture, first, last)`` of each animation in the engine's ``animated.lmp``."""
    with zipfile.ZipFile(pk3) as archive:
        data = archive.read("animated.lmp")
    out = []
    for i in range(0, len(data) - 22, 23):
        kind = data[i]
        if kind == 255:
            break
        last = data[i + 1 : i + 10].split(b"\0")[0].decode("ascii", "replace").upper()
        first = data[i + 10 : i + 19].split(b"\0")[0].decode("ascii", "replace").upper()
        out.append((bool(kind & 1), first, last))
    return out


def _span(order: list[str], first: str, last: str) -> list[str]:
    """The names from ``first`` to ``last`` in lump ``order`` (empty when either is missing)."""
    if first not in order or last not in order:
        return []
    a, b = order.index(first), order.index(last)
    return order[a : b + 1] if a <= b else []


def _columns(patch: bytes) -> list[list[tuple[int, int]]]:
    """Each column's opaque runs ``(top, length)`` of a Doom-format picture."""
    if len(patch) < 8:
        return []
    width = struct.unpack_from("<H", patch, 0)[0]
    out = []
    for x in range(width):
        if 8 + 4 * x + 4 > len(patch):
            break
        offset = struct.unpack_from("<I", patch, 8 + 4 * x)[0]
        runs: list[tuple[int, int]] = []
        top = -1
        while 0 <= offset < len(patch) - 1 and patch[offset] != 255:
            delta, length = patch[offset], patch[offset + 1]
            top = delta if delta > top else top + delta  # tall patches: a delta not above the last adds to it
            runs.append((top, length))
            offset += length + 4
        out.append(runs)
    return out


@lru_cache(maxsize=4)
def _iwad_art(path: str, size: int, mtime_ns: int, pk3: str) -> IwadArt:
    import omg
    from omg.txdef import Textures

    wad = omg.WAD(path)
    if "TEXTURE1" not in wad.txdefs:
        raise GolemError(f"{path} has no TEXTURE1: not an IWAD a variant can draw textures from")
    textures = Textures(wad.txdefs)
    animations = _animations(Path(pk3))
    texture_order = [name.upper() for name in textures.keys()]
    flat_order = [name.upper() for name in wad.flats.keys()]
    animated_walls = {n for is_tex, a, b in animations if is_tex for n in _span(texture_order, a, b)}
    flat_runs = [_span(flat_order, a, b) for is_tex, a, b in animations if not is_tex]
    animated_flats = frozenset(n for run in flat_runs for n in run)
    liquids = tuple(sorted(run[0] for run in flat_runs if run))
    columns: dict[str, list[list[tuple[int, int]]]] = {}
    sizes: dict[str, tuple[int, int]] = {}
    walls = []
    for name in texture_order:
        tex = textures[name]
        sizes[name] = (int(tex.width), int(tex.height))
        if (
            tex.width not in WALL_WIDTHS
            or tex.height not in WALL_HEIGHTS
            or name.startswith(RESERVED_PREFIXES)
            or name in animated_walls
        ):
            continue
        cover = np.zeros((tex.height, tex.width), dtype=bool)
        for patch in tex.patches:
            pname = patch.name.upper()
            if pname not in columns:
                lump = wad.patches.get(pname) or wad.graphics.get(pname) or wad.sprites.get(pname)
                columns[pname] = _columns(lump.data) if lump is not None else []
            for dx, runs in enumerate(columns[pname]):
                x = patch.x + dx
                if 0 <= x < tex.width:
                    for top, length in runs:
                        y0, y1 = max(0, patch.y + top), min(tex.height, patch.y + top + length)
                        if y0 < y1:
                            cover[y0:y1, x] = True
        if cover.all():
            walls.append(name)
    flats = tuple(
        sorted(
            n
            for n in flat_order
            if n not in animated_flats and not n.startswith(SKY_FLAT_PREFIX) and not n.startswith("DUMMY")
        )
    )
    return IwadArt(tuple(sorted(walls)), flats, liquids, animated_flats, sizes)


def iwad_art(iwad: Path) -> IwadArt:
    """The textures and flats of ``iwad`` a variant may use (read once per process and file)."""
    stat = iwad.stat()
    pk3 = engine_pk3()
    return _iwad_art(str(iwad), stat.st_size, stat.st_mtime_ns, str(pk3))


def used_textures(textmap: Textmap) -> tuple[set[str], set[str]]:
    """``(wall textures, flats)`` a map names (upper case, ``-`` left out)."""
    walls = {
        (side.text(key) or "").upper()
        for side in textmap.of_kind("sidedef")
        for key in WALL_FIELDS
        if side.text(key) not in (None, NO_TEXTURE, "")
    }
    flats = {
        (sector.text(key) or "").upper()
        for sector in textmap.of_kind("sector")
        for key in FLAT_FIELDS
        if sector.text(key) not in (None, NO_TEXTURE, "")
    }
    return walls, flats


def special_line_textures(textmap: Textmap) -> set[str]:
    """Textures on either side of a line with a special (doors, switches, exits): what scripts and
    the engine change or look for there."""
    sides = textmap.of_kind("sidedef")
    out: set[str] = set()
    for line in textmap.of_kind("linedef"):
        if int(line.number("special")) == 0:
            continue
        for key in ("sidefront", "sideback"):
            index = int(line.number(key, -1))
            if 0 <= index < len(sides):
                out |= {(sides[index].text(f) or "").upper() for f in WALL_FIELDS}
    return out - {"", NO_TEXTURE}


def draw_mapping(
    originals: Iterable[str], pool: Iterable[str], avoid: Iterable[str], rng: random.Random
) -> dict[str, str]:
    """A distinct new name from ``pool`` (minus ``avoid``) for each of ``originals`` (sorted), drawn from ``rng``;
    originals left when the pool runs out keep their name (absent from the mapping)."""
    left = sorted(set(pool) - set(avoid))
    mapping = {}
    for name in sorted(set(originals)):
        if not left:
            break
        mapping[name] = left.pop(rng.randrange(len(left)))
    return mapping


def draw_textures(
    textmap: Textmap, art: IwadArt, keep: Iterable[str], rng: random.Random
) -> tuple[dict[str, str], dict[str, str]]:
    """``(wall mapping, flat mapping)`` for a map: every wall texture and flat it names except ``keep`` and the
    sky gets a distinct new one from ``art`` (never one the map already uses)."""
    walls, flats = used_textures(textmap)
    keep = {k.upper() for k in keep}
    wall_map = draw_mapping(sorted(walls - keep), art.walls, walls | flats, rng)
    still = [f for f in sorted(flats - keep) if f not in art.animated_flats and not f.startswith(SKY_FLAT_PREFIX)]
    liquid = [f for f in sorted(flats - keep) if f in art.animated_flats]
    flat_map = draw_mapping(still, art.flats, walls | flats, rng)
    flat_map.update(draw_mapping(liquid, art.liquids, walls | flats, rng))
    return wall_map, dict(sorted(flat_map.items()))


def apply_textures(textmap: Textmap, walls: dict[str, str], flats: dict[str, str]) -> int:
    """Rename textures in place (case-insensitive); return how many fields changed."""
    changed = 0
    for kind, fields, mapping in (("sidedef", WALL_FIELDS, walls), ("sector", FLAT_FIELDS, flats)):
        for block in textmap.of_kind(kind):
            for key in fields:
                name = block.text(key)
                if name is not None and name.upper() in mapping:
                    block.set_text(key, mapping[name.upper()])
                    changed += 1
    return changed
