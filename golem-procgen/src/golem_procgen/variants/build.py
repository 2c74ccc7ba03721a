"""Build a variant of a scenario: same layout and rules, another look (the ``vary`` map generator).

:func:`build_variant` reads a scenario's WAD (a UDMF map: ``TEXTMAP``,
``BEHAVIOR``, maybe its own ``DECORATE``), applies the requested
:data:`MODIFICATIONS` in their fixed order, each with a random generator of its
own (seeded from the scenario, the knob's name and the seed, so adding one knob
never changes what another draws), writes the WAD and then the scenario config
beside it: the shipped ``.cfg`` with ``doom_scenario_path`` pointing at the new
WAD and everything else kept (with a ``<stem>.variant.json`` sidecar saying what
was varied). The same scenario, modifications and seed give the same bytes.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

from golem.atomic import atomic_write
from golem.errors import GolemError
from golem.scenarios import VARIANT_SIDECAR, check_config, iwad_path, read_config, resolve_scenario
from golem.wad import UDMF_END, build_wad, check_map_file, read_lump, read_wad, read_wad_bytes
from golem_procgen.variants import looks, obstacles, textures
from golem_procgen.variants.decorate import Catalogue, catalogue, spawn_sprite, strip_comments
from golem_procgen.variants.udmf import Textmap, parse_textmap, write_textmap

log = structlog.get_logger(__name__)

#: The modifications, in the order they are applied and named, with what each does.
MODIFICATIONS: dict[str, str] = {
    "textures": "wall textures and floor/ceiling flats replaced by others of the IWAD (one new name per old one; "
    "switches, doors, the sky and textures on scripted lines kept; liquids stay liquids)",
    "monsters": "each monster class shown with another monster's sprites (its behaviour inherited), maybe tinted, "
    "drawn 0.8-1.25x its size",
    "items": "each health, armour and ammunition pickup shown with another pickup's sprite (what it gives kept)",
    "light": "every sector's light level scaled and shifted (kept within 128-255)",
    "view_height": "the player's eyes 32-48 map units above the floor instead of 41",
    "obstacles": "2-4 solid decorations (columns, pillars, lamps) where they cut nothing off the player start "
    "(as many of the 2-4 drawn as fit, at least 2)",
}
#: Doom's player eye height, map units.
DEFAULT_VIEW_HEIGHT = 41
#: Eye heights a variant draws from (at least 3 units from the default).
VIEW_HEIGHTS = tuple(h for h in range(32, 49) if abs(h - DEFAULT_VIEW_HEIGHT) >= 3)
#: Light levels a variant keeps within (the screen stays readable), and the draws of its scale and shift.
LIGHT_RANGE = (128, 255)
LIGHT_SCALE = (0.6, 1.2)
LIGHT_SHIFT = (-24, 24)
#: Smallest mean change of the light levels a variant accepts (visible).
LIGHT_MIN_CHANGE = 24
#: How many obstacles a variant places.
OBSTACLE_COUNT = (2, 4)
#: Solid decorations obstacles are drawn from (editor numbers of Doom 2): columns, pillars, lamps, torches.
OBSTACLE_TYPES = (30, 31, 32, 33, 36, 37, 41, 43, 44, 45, 46, 47, 48, 85, 86, 2028)
#: The pickup classes the ``items`` knob changes (and what inherits them); keys and weapons are left alone.
ITEM_BASES = ("Health", "Armor", "Ammo")
#: The player class a variant's own player class inherits.
PLAYER_CLASS = "DoomPlayer"
#: Suffix of the sidecar written beside a variant's config (``<stem>.variant.json``: the scenario varied, the
#: modifications, the seed and the details), which ``golem.scenarios.variant_of`` reads to give a variant its
#: scenario's spec.
SIDECAR_SUFFIX = VARIANT_SIDECAR


@dataclass(frozen=True)
class VariantInfo:
    """A built variant.

    Attributes:
        map: the map lump (``MAP01``).
        path: the WAD written.
        config: the scenario config written beside it (play it with ``golem run play --scenario``).
        scenario: the scenario varied (a shipped name, or the ``.cfg``'s stem).
        modifications: the modifications applied, in :data:`MODIFICATIONS` order.
        seed: the seed.
        details: what each modification changed (JSON-ready).
    """

    map: str
    path: Path
    config: Path
    scenario: str
    modifications: tuple[str, ...]
    seed: int
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "map": self.map,
            "path": str(self.path),
            "config": str(self.config),
            "scenario": self.scenario,
            "modifications": list(self.modifications),
            "seed": self.seed,
            "details": self.details,
        }


def normalise_modifications(modifications: Iterable[str] | str) -> tuple[str, ...]:
    """The modifications named (a list, or one string split on ``,`` / ``+``), deduplicated, in
    :data:`MODIFICATIONS` order; ``view-height`` means ``view_height``.

    Raises:
        GolemError: none named, or a name that is not a modification (the known ones listed).
    """
    if isinstance(modifications, str):
        modifications = modifications.replace("+", ",").split(",")
    names = {str(m).strip().lower().replace("-", "_") for m in modifications if str(m).strip()}
    unknown = sorted(names - set(MODIFICATIONS))
    if unknown:
        raise GolemError(f"unknown modification {unknown[0]!r}; known: {', '.join(MODIFICATIONS)}")
    if not names:
        raise GolemError(f"no modification given; choose from: {', '.join(MODIFICATIONS)}")
    return tuple(m for m in MODIFICATIONS if m in names)


def variant_stem(scenario: str, modifications: Iterable[str], seed: int) -> str:
    """``<scenario>-<modifications joined by +>-seed<NNNNNN>``: the default file name of a variant."""
    return f"{scenario}-{'+'.join(normalise_modifications(list(modifications)))}-seed{int(seed):06d}"


def knob_rng(scenario: str, knob: str, seed: int) -> random.Random:
    """The random draws of one modification: seeded from the scenario, the knob and the seed alone."""
    return random.Random(f"golem-procgen-vary/{scenario}/{knob}/{int(seed)}")


@dataclass
class _Source:
    """A scenario's files as read: its name, config, WAD lumps (name, bytes), map and the map's lump range."""

    name: str
    config: Path
    wad: Path
    lumps: list[tuple[str, bytes]]
    map: str
    start: int  # index of the map marker
    end: int  # index of ENDMAP

    def map_lumps(self, name: str) -> list[int]:
        """Indices of the lumps called ``name`` inside the map (marker to ENDMAP)."""
        return [i for i in range(self.start + 1, self.end) if self.lumps[i][0] == name]

    def global_lump(self, name: str) -> int | None:
        """Index of the lump ``name`` outside any map (``DECORATE``, ``MAPINFO``), or ``None``."""
        inside = set(range(self.start, self.end + 1))
        return next((i for i, (n, _) in enumerate(self.lumps) if n == name and i not in inside), None)


def read_source(scenario: str) -> _Source:
    """Resolve ``scenario`` (a shipped scenario name or a ``.cfg`` path) and read its WAD.

    Raises:
        GolemError: an unknown scenario, a config without a scenario WAD, or a map that is not UDMF.
    """
    if scenario.lower().endswith(".wad"):
        raise GolemError(f"vary needs a scenario name or its .cfg, not a WAD ({scenario})")
    resolved = resolve_scenario(scenario)
    if resolved.config is None or resolved.wad is None:
        raise GolemError(f"scenario {scenario} has no scenario WAD (doom_scenario_path) to vary")
    config_map = next((e.value for e in read_config(resolved.config) if e.key == "doom_map" and e.value), "MAP01")
    map_name = (resolved.doom_map or config_map).upper()
    directory = read_wad(resolved.wad)
    lumps = [(lump.name, read_lump(resolved.wad, lump)) for lump in directory.lumps]
    names = [n for n, _ in lumps]
    if map_name not in names:
        raise GolemError(f"map {map_name} not found in {resolved.wad}")
    start = names.index(map_name)
    if start + 1 >= len(names) or names[start + 1] != "TEXTMAP":
        raise GolemError(
            f"map {map_name} of {resolved.wad.name} is in the classic format (no TEXTMAP): variants need a UDMF map"
        )
    end = next((i for i in range(start + 1, len(names)) if names[i] == UDMF_END), None)
    if end is None:
        raise GolemError(f"map {map_name} of {resolved.wad.name} is UDMF without ENDMAP")
    return _Source(resolved.name, resolved.config, resolved.wad, lumps, map_name, start, end)


def acs_strings(source: _Source) -> list[str]:
    """Strings the map's scripts use: the string table of the ``BEHAVIOR`` the engine loads (the last in the map)
    and the quoted strings of ``SCRIPTS``."""
    out: list[str] = []
    behavior = source.map_lumps("BEHAVIOR")
    if behavior:
        out += [
            s.decode("latin-1")
            for s in re.findall(rb"[A-Za-z_][A-Za-z0-9_]{2,}(?=\x00)", source.lumps[behavior[-1]][1])
        ]
    for i in source.map_lumps("SCRIPTS"):
        out += re.findall(r'"([^"\\\n]*)"', strip_comments(source.lumps[i][1].decode("latin-1")))
    return out


def inventory_only(source: _Source) -> set[str]:
    """Class names (lower case) the map's ``SCRIPTS`` name only as the first argument of ``GiveInventory``,
    ``TakeInventory``, ``CheckInventory`` and the like: given to or counted on the player, never seen lying
    in the map (empty when the map has no ``SCRIPTS``)."""
    call = r'\w*Inventory\s*\(\s*"([^"\\\n]*)"'
    text = "\n".join(strip_comments(source.lumps[i][1].decode("latin-1")) for i in source.map_lumps("SCRIPTS"))
    inventory = {q.lower() for q in re.findall(call, text, re.IGNORECASE)}
    elsewhere = re.sub(call, "", text, flags=re.IGNORECASE)
    return inventory - {q.lower() for q in re.findall(r'"([^"\\\n]*)"', elsewhere)}


def map_classes(source: _Source, textmap: Textmap, cat: Catalogue) -> list[str]:
    """Actor classes the map names: its things (by editor number) and its scripts' strings (sorted, as declared)."""
    named = {cat.ednums.get(int(t.number("type"))) for t in textmap.of_kind("thing")} | set(acs_strings(source))
    return sorted({c for c in (cat.canonical(n) for n in named if n) if c})


@dataclass
class _Build:
    """What the knobs produce: the map text, DECORATE and MAPINFO to add, and the details."""

    textmap: Textmap
    textmap_changed: bool = False
    decorate: list[str] = field(default_factory=list)
    mapinfo: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)


def _textures(b: _Build, source: _Source, cat: Catalogue, rng: random.Random) -> None:
    iwad = iwad_path(source.config, source.map)
    if iwad is None:
        raise GolemError(f"textures: the IWAD of {source.config.name} is not on disk")
    art = textures.iwad_art(iwad)
    walls, flats = textures.used_textures(b.textmap)
    script_names = {s.upper() for s in acs_strings(source)}
    keep = textures.special_line_textures(b.textmap) | ((walls | flats) & script_names)
    keep |= {n for n in walls if n.startswith(("SW1", "SW2"))}
    wall_map, flat_map = textures.draw_textures(b.textmap, art, keep, rng)
    changed = textures.apply_textures(b.textmap, wall_map, flat_map)
    b.textmap_changed |= changed > 0
    b.details["textures"] = {
        "walls": wall_map,
        "flats": flat_map,
        "kept": sorted((walls | flats) - set(wall_map) - set(flat_map)),
    }


def _monsters(b: _Build, source: _Source, cat: Catalogue, rng: random.Random, seed: int) -> None:
    classes = [n for n in map_classes(source, b.textmap, cat) if cat.is_monster(n)]
    found = looks.draw_monster_looks(cat, classes, seed, rng)
    b.decorate += [looks.monster_decorate(cat, look) for look in found]
    b.details["monsters"] = {look.original: look.as_dict() for look in found}
    if not found:
        b.details["monsters"]["note"] = "no monster class in this map"


def _items(b: _Build, source: _Source, cat: Catalogue, rng: random.Random, seed: int) -> None:
    named = map_classes(source, b.textmap, cat)
    sprites = {n: spawn_sprite(cat, n) for n in named}
    placed = {cat.canonical(cat.ednums.get(int(t.number("type")), "")) for t in b.textmap.of_kind("thing")}
    given = inventory_only(source) - {p.lower() for p in placed if p}
    classes = [
        n
        for n in named
        if any(cat.inherits(n, base) for base in ITEM_BASES)
        and sprites[n] is not None
        and sprites[n][0] != "TNT1"
        and n.lower() not in given
    ]
    taken = {s[0] for s in sprites.values() if s is not None}
    found = looks.draw_item_looks(classes, {n: sprites[n][0] for n in classes}, taken, seed, rng)
    b.decorate += [looks.item_decorate(look) for look in found]
    b.details["items"] = {look.original: look.as_dict() for look in found}
    if not found:
        b.details["items"]["note"] = "no health, armour or ammunition pickup in this map"


def _light(b: _Build, rng: random.Random) -> None:
    sectors = b.textmap.of_kind("sector")
    if not sectors:
        raise GolemError("light: the map has no sectors")
    old = [int(s.number("lightlevel", 160)) for s in sectors]
    lo, hi = LIGHT_RANGE
    for _ in range(32):
        scale, shift = round(rng.uniform(*LIGHT_SCALE), 3), rng.randint(*LIGHT_SHIFT)
        new = [min(hi, max(lo, round(level * scale + shift))) for level in old]
        if sum(abs(a - b) for a, b in zip(old, new)) / len(old) >= LIGHT_MIN_CHANGE:
            break
    for sector, level in zip(sectors, new):
        sector.set_int("lightlevel", level)
    b.textmap_changed = True
    b.details["light"] = {
        "scale": scale,
        "shift": shift,
        "levels": {str(a): c for a, c in sorted(set(zip(old, new)))},
    }


def _view_height(b: _Build, rng: random.Random, seed: int) -> None:
    height = rng.choice(VIEW_HEIGHTS)
    actor = looks.variant_name(PLAYER_CLASS, seed)
    b.decorate.append(looks.player_decorate(actor, PLAYER_CLASS, height))
    b.mapinfo.append(f'gameinfo\n{{\n  playerclasses = "{actor}"\n}}\n')
    b.details["view_height"] = {"player": actor, "view_height": height, "default": DEFAULT_VIEW_HEIGHT}


def _obstacles(b: _Build, cat: Catalogue, rng: random.Random) -> None:
    kinds = []
    for number in OBSTACLE_TYPES:
        name = cat.ednums.get(number)
        if name and cat.get(name) is not None and cat.is_solid(name):
            kinds.append((number, name, cat.radius(name)))
    radius_of = {n: cat.radius(c) for n, c in cat.ednums.items() if cat.get(c) is not None}
    count = rng.randint(*OBSTACLE_COUNT)
    try:
        placed = obstacles.place_obstacles(b.textmap, kinds, count, rng, radius_of, minimum=OBSTACLE_COUNT[0])
    except GolemError as exc:
        raise GolemError(f"obstacles: {exc}") from None
    b.textmap.blocks.extend(obstacles.obstacle_things(placed))
    b.textmap_changed = True
    b.details["obstacles"] = [o.as_dict() for o in placed]


def _cfg_text(source: _Source, wad: Path, cfg: Path, modifications: tuple[str, ...], seed: int) -> str:
    """The source config with ``doom_scenario_path`` pointing at ``wad`` (relative to ``cfg``'s folder)."""
    lines = source.config.read_text(errors="replace").splitlines()
    target = os.path.relpath(wad.resolve(), cfg.resolve().parent)
    entries = [e for e in read_config(source.config) if e.key == "doom_scenario_path"]
    for entry in entries:
        lines[entry.line - 1] = f"doom_scenario_path = {target}"
    header = [
        f"# Golem scenario variant of {source.name}: {'+'.join(modifications)}, seed {seed} (golem procgen vary).",
        "# Same layout and rules as the scenario, another look; the WAD is generated, do not edit it.",
    ]
    return "\n".join(header + lines) + "\n"


def _assemble(source: _Source, b: _Build, modifications: tuple[str, ...], seed: int) -> bytes:
    """The variant's WAD bytes: the source's lumps with TEXTMAP, DECORATE and MAPINFO replaced or added."""
    lumps = list(source.lumps)
    if b.textmap_changed:
        lumps[source.start + 1] = ("TEXTMAP", write_textmap(b.textmap).encode("latin-1"))
    banner = f"// golem procgen vary: {source.name}, {'+'.join(modifications)}, seed {seed}\n"
    prefix: list[tuple[str, bytes]] = []
    for name, added in (("DECORATE", b.decorate), ("MAPINFO", b.mapinfo)):
        if not added:
            continue
        text = banner + "\n".join(added)
        at = source.global_lump(name)
        if at is None:
            prefix.append((name, text.encode("latin-1")))
        else:
            lumps[at] = (name, lumps[at][1].rstrip(b"\0") + b"\n\n" + text.encode("latin-1"))
    return build_wad(prefix + lumps)


def build_variant(
    scenario: str, modifications: Iterable[str] | str, seed: int, path: Path | str | None = None
) -> VariantInfo:
    """Write the variant of ``scenario`` with ``modifications`` and ``seed`` to ``path`` and its config beside it.

    Args:
        scenario: a shipped scenario name (``take_cover``) or a scenario ``.cfg`` whose WAD holds a UDMF map.
        modifications: names of :data:`MODIFICATIONS` (any order; applied in theirs).
        seed: the variant's seed (``>= 0``).
        path: the WAD to write (default: :func:`variant_stem` ``.wad`` in the current folder); the config is
            ``path`` with the suffix ``.cfg``, the sidecar (:data:`SIDECAR_SUFFIX`) beside them.

    Raises:
        GolemError: an unknown scenario or modification, a map that is not UDMF, a modification that cannot
            be made (obstacles that would cut the map off), or output that does not validate — one line;
            nothing is written then.
    """
    mods = normalise_modifications(modifications)
    if int(seed) < 0:
        raise GolemError(f"the seed must be >= 0, got {seed}")
    source = read_source(scenario)
    cat = catalogue()
    decorate_at = source.global_lump("DECORATE")
    if decorate_at is not None:
        cat = cat.with_decorate(source.lumps[decorate_at][1].decode("latin-1"), f"{source.wad.name}:DECORATE")
    mapinfo_at = source.global_lump("MAPINFO")
    if mapinfo_at is not None:
        cat = cat.with_ednums(source.lumps[mapinfo_at][1].decode("latin-1"))
    b = _Build(parse_textmap(source.lumps[source.start + 1][1].decode("latin-1")))
    for knob in mods:
        rng = knob_rng(source.name, knob, seed)
        if knob == "textures":
            _textures(b, source, cat, rng)
        elif knob == "monsters":
            _monsters(b, source, cat, rng, seed)
        elif knob == "items":
            _items(b, source, cat, rng, seed)
        elif knob == "light":
            _light(b, rng)
        elif knob == "view_height":
            _view_height(b, rng, seed)
        elif knob == "obstacles":
            _obstacles(b, cat, rng)
    data = _assemble(source, b, mods, seed)
    wad = Path(path) if path is not None else Path(variant_stem(source.name, mods, seed) + ".wad")
    read_wad_bytes(data, str(wad)).validate_map(source.map)  # nothing invalid ever lands at wad
    with atomic_write(wad) as fh:
        fh.write(data)
    check_map_file(wad, source.map)
    cfg = wad.with_suffix(".cfg")
    info = VariantInfo(
        map=source.map,
        path=wad,
        config=cfg,
        scenario=source.name,
        modifications=mods,
        seed=int(seed),
        details=json.loads(json.dumps(b.details, sort_keys=True)),
    )
    sidecar = {k: v for k, v in info.as_dict().items() if k not in ("path", "config")} | {"generator": "vary"}
    with atomic_write(wad.with_suffix(SIDECAR_SUFFIX)) as fh:
        fh.write(json.dumps(sidecar, sort_keys=True, indent=1).encode())
    with atomic_write(cfg) as fh:  # last: a config only ever names a WAD that is complete
        fh.write(_cfg_text(source, wad, cfg, mods, seed).encode())
    check_config(cfg)
    log.info("variant_built", scenario=source.name, modifications="+".join(mods), seed=int(seed), path=str(wad))
    return info


class VaryGenerator:
    """The ``vary`` map generator: ``build({"scenario": ..., "modifications": [...]}, seed, path)`` writes a
    variant of a shipped scenario (:func:`build_variant`). It samples no curriculum phase.

    Args:
        settings: the run's settings (unused: a variant is all in its configuration and seed).
    """

    name = "vary"

    def __init__(self, settings: Any = None) -> None:
        self.settings = settings

    def build(self, config: Mapping[str, Any], seed: int, path: Path) -> VariantInfo:
        """Write the variant ``config`` names (keys ``scenario`` and ``modifications``) from ``seed`` to ``path``.

        Raises:
            GolemError: a configuration without a scenario or with other keys, or anything :func:`build_variant`
                refuses.
        """
        extra = sorted(set(config) - {"scenario", "modifications"})
        if extra:
            raise GolemError(f"vary: unknown configuration key {extra[0]!r} (it takes scenario and modifications)")
        scenario = config.get("scenario")
        if not isinstance(scenario, str) or not scenario:
            raise GolemError("vary: the configuration needs a scenario, e.g. {'scenario': 'take_cover', ...}")
        return build_variant(scenario, config.get("modifications") or [], seed, path)


__all__ = [
    "MODIFICATIONS",
    "VariantInfo",
    "VaryGenerator",
    "build_variant",
    "knob_rng",
    "normalise_modifications",
    "variant_stem",
]
