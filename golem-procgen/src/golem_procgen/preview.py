"""An automap picture of any Doom-format map: walls, doors, exits, teleporters, the start, monsters and items.

Read with ``omgifol`` (classic format, as both backends write it) and drawn
with Pillow; the navigation sidecar, when there is one, adds the exit pad.
Colours: walls white, steps grey, doors yellow, exit lines and the exit green,
teleport lines magenta, the player start a green arrow, monsters red, health
blue, ammunition and weapons orange.
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

from golem.atomic import atomic_write
from golem.errors import GolemError
from golem.wad import validate_wad
from golem_procgen.navigation import sidecar_path

DOOR_SPECIALS = frozenset({1, 26, 27, 28, 31, 32, 33, 34, 117, 118})
EXIT_SPECIALS = frozenset({11, 51, 52, 124, 197, 198})
TELEPORT_SPECIALS = frozenset({39, 97, 125, 126, 174, 195})
MONSTER_TYPES = frozenset({3004, 9, 65, 3001, 3002, 58, 3005, 69, 3003, 66, 67, 68, 71, 84, 16, 7, 64})
HEALTH_TYPES = frozenset({2011, 2012, 2013, 2014})
AMMO_TYPES = frozenset({2007, 2008, 2010, 2046, 2047, 2048, 2049, 2001, 2002, 2003, 2004})
COLOURS = {
    "background": (12, 12, 20),
    "wall": (235, 235, 235),
    "step": (110, 110, 120),
    "door": (240, 200, 40),
    "exit": (60, 220, 90),
    "teleport": (220, 60, 220),
    "start": (60, 220, 90),
    "monster": (230, 50, 50),
    "health": (70, 140, 255),
    "ammo": (255, 150, 40),
}


def render_preview(wad: str | Path, map_name: str = "MAP01", size: int = 768) -> bytes:
    """A PNG automap of ``map_name`` in ``wad``, fitted into ``size`` × ``size`` pixels.

    Raises:
        GolemError: a missing or corrupt WAD, or a map without lines or a player start.
    """
    import omg
    from omg.mapedit import MapEditor
    from PIL import Image, ImageDraw

    wad = Path(wad)
    validate_wad(wad, map_name)
    try:
        editor = MapEditor(omg.WAD(str(wad)).maps[map_name.upper()])
    except Exception as exc:  # omgifol raises a variety of errors on malformed lumps
        raise GolemError(f"cannot read map {map_name} of {wad}: {exc}") from None
    if not editor.linedefs:
        raise GolemError(f"map {map_name} of {wad} has no lines")
    if not any(t.type == 1 for t in editor.things):
        raise GolemError(f"map {map_name} of {wad} has no player start")
    xs = [v.x for v in editor.vertexes]
    ys = [v.y for v in editor.vertexes]
    margin = 16
    span = max(max(xs) - min(xs), max(ys) - min(ys), 1)
    scale = (size - 2 * margin) / span

    def px(x: float, y: float) -> tuple[float, float]:  # map y grows north, image rows grow down
        return margin + (x - min(xs)) * scale, size - margin - (y - min(ys)) * scale

    image = Image.new("RGB", (size, size), COLOURS["background"])
    draw = ImageDraw.Draw(image)
    for line in editor.linedefs:
        a, b = editor.vertexes[line.vx_a], editor.vertexes[line.vx_b]
        if line.action in DOOR_SPECIALS:
            colour, width = COLOURS["door"], 3
        elif line.action in EXIT_SPECIALS:
            colour, width = COLOURS["exit"], 3
        elif line.action in TELEPORT_SPECIALS:
            colour, width = COLOURS["teleport"], 2
        elif line.two_sided:
            front, back = (
                editor.sectors[editor.sidedefs[line.front].sector],
                editor.sectors[editor.sidedefs[line.back].sector],
            )
            if front.z_floor == back.z_floor and front.z_ceil == back.z_ceil:
                continue
            colour, width = COLOURS["step"], 1
        else:
            colour, width = COLOURS["wall"], 2
        draw.line([px(a.x, a.y), px(b.x, b.y)], fill=colour, width=width)
    nav = sidecar_path(wad)
    if nav.is_file():
        try:
            ex, ey = json.loads(nav.read_text())["exit"]
            cx, cy = px(ex, ey)
            draw.rectangle([cx - 6, cy - 6, cx + 6, cy + 6], outline=COLOURS["exit"], width=2)
        except (ValueError, KeyError, TypeError):
            pass
    radius = max(3, int(20 * scale))
    for t in editor.things:
        cx, cy = px(t.x, t.y)
        if t.type == 1:
            angle = math.radians(t.angle)
            tip = (cx + 12 * math.cos(angle), cy - 12 * math.sin(angle))
            left = (cx + 7 * math.cos(angle + 2.5), cy - 7 * math.sin(angle + 2.5))
            right = (cx + 7 * math.cos(angle - 2.5), cy - 7 * math.sin(angle - 2.5))
            draw.polygon([tip, left, right], fill=COLOURS["start"])
        elif t.type in MONSTER_TYPES:
            draw.ellipse([cx - radius, cy - radius, cx + radius, cy + radius], fill=COLOURS["monster"])
        elif t.type in HEALTH_TYPES:
            draw.rectangle([cx - 3, cy - 3, cx + 3, cy + 3], fill=COLOURS["health"])
        elif t.type in AMMO_TYPES:
            draw.rectangle([cx - 2, cy - 2, cx + 2, cy + 2], fill=COLOURS["ammo"])
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def write_preview(wad: str | Path, out: str | Path, map_name: str = "MAP01", size: int = 768) -> Path:
    """Render :func:`render_preview` into ``out`` (atomically); returns ``out``."""
    data = render_preview(wad, map_name, size)
    out = Path(out)
    with atomic_write(out) as fh:
        fh.write(data)
    return out
