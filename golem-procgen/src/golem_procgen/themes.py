"""Texture sets per theme, all from the shipped ``freedoom2.wad`` (a test checks every name is in it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Theme:
    """Wall textures and floor/ceiling flats of one theme (names as in the IWAD, ≤ 8 characters)."""

    walls: tuple[str, ...]
    floors: tuple[str, ...]
    ceilings: tuple[str, ...]
    liquid: str
    #: Damage per hit of the liquid's floor (Doom sector specials 7 = 5 %, 5 = 10 %, 16 = 20 %).
    liquid_special: int


THEMES: dict[str, Theme] = {
    "original": Theme(
        ("STARTAN3", "STARTAN2", "BROWN1", "GRAY1"),
        ("FLOOR4_8", "FLOOR0_1", "FLAT5_4"),
        ("CEIL3_5", "FLAT1"),
        "NUKAGE1",
        5,
    ),
    "tech": Theme(
        ("COMPBLUE", "TEKGREN2", "SILVER1", "TEKWALL4"),
        ("FLOOR0_1", "FLOOR1_6", "MFLR8_1"),
        ("CEIL5_1", "TLITE6_4"),
        "NUKAGE1",
        7,
    ),
    "urban": Theme(
        ("BRICK7", "BRICK1", "CEMENT1", "STUCCO1"),
        ("FLAT5_4", "GRASS1", "FLOOR7_1"),
        ("CEIL3_5", "FLAT1"),
        "NUKAGE1",
        5,
    ),
    "hell": Theme(
        ("MARBLE1", "SP_HOT1", "SKIN2", "ROCKRED1"),
        ("FLOOR6_1", "RROCK09", "FLAT5_4"),
        ("CEIL1_2", "FLOOR6_1"),
        "LAVA1",
        16,
    ),
}
#: Flats and textures every theme shares.
SKY = "F_SKY1"
DOOR = "BIGDOOR2"
DOOR_TRACK = "DOORTRAK"
EXIT_FLAT = "GATE4"
EXIT_WALL = "EXITSIGN"
TELEPORT_FLAT = "GATE3"


def theme_names(theme: str, index: int) -> str:
    """The concrete theme of room ``index`` (``mixed`` cycles through the others)."""
    if theme != "mixed":
        return theme
    names = list(THEMES)
    return names[index % len(names)]


def all_textures() -> set[str]:
    """Every wall texture named here."""
    out = {DOOR, DOOR_TRACK, EXIT_WALL}
    for t in THEMES.values():
        out.update(t.walls)
    return out


def all_flats() -> set[str]:
    """Every flat named here."""
    out = {SKY, EXIT_FLAT, TELEPORT_FLAT}
    for t in THEMES.values():
        out.update(t.floors + t.ceilings + (t.liquid,))
    return out
