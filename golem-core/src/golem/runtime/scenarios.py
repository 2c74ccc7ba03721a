"""Scenario resolution: a ViZDoom scenario name, a ``.cfg`` path, or a ``.wad`` path + map.

Every WAD is validated (:mod:`golem.runtime.wad`) before the engine loads it, because
the engine crashes or hangs on malformed maps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from golem.errors import GolemError
from golem.runtime.wad import read_wad

#: The map used when a WAD is given without a map name (else the WAD's first map).
DEFAULT_WAD_MAP = "MAP01"


def scenarios_dir() -> Path:
    """The folder of scenario ``.cfg``/``.wad`` files shipped with ViZDoom."""
    import vizdoom

    return Path(vizdoom.scenarios_path)


#: Step limits of shipped scenarios that have no time-out of their own (their experts rarely die):
#: take_cover as World Models ran it, 2,100 tics (60 s); defend_the_line the same.
DEFAULT_MAX_STEPS: dict[str, int] = {"take_cover": 2100, "defend_the_line": 2100}


def step_limit(scenario: str, max_steps: int | None) -> int | None:
    """``max_steps`` when given, else the scenario's default limit (:data:`DEFAULT_MAX_STEPS`), else ``None``.

    ``scenario`` is a name or a ``.cfg``/``.wad`` path (its file stem is looked up).
    """
    if max_steps is not None:
        return max_steps
    return DEFAULT_MAX_STEPS.get(Path(scenario).stem if scenario.endswith((".cfg", ".wad")) else scenario)


def known_scenarios() -> list[str]:
    """Names of every scenario ``.cfg`` ViZDoom ships (``basic``, ``deathmatch``, …), sorted."""
    return sorted(p.stem for p in scenarios_dir().glob("*.cfg"))


@dataclass(frozen=True)
class Scenario:
    """A resolved scenario.

    Attributes:
        name: display name (scenario name or file stem).
        config: the ``.cfg`` to load, or ``None`` for a bare WAD.
        wad: the scenario WAD (``doom_scenario_path``), or ``None`` when the
            config only uses the IWAD (``doom2.cfg``).
        doom_map: the map to start (upper case), or ``None`` to keep the config's.
    """

    name: str
    config: Path | None
    wad: Path | None
    doom_map: str | None


def _config_value(config: Path, key: str) -> str | None:
    """A ``key = value`` entry of a ViZDoom config (last one wins), or ``None``."""
    value = None
    pattern = re.compile(rf"^\s*{re.escape(key)}\s*=\s*(\S+)", re.IGNORECASE)
    for line in config.read_text(errors="replace").splitlines():
        match = pattern.match(line.split("#", 1)[0])
        if match:
            value = match.group(1)
    return value


def iwad_path(config: Path | None = None, doom_map: str | None = None) -> Path | None:
    """The IWAD the engine will use, or ``None`` when it is not on disk.

    The config's ``doom_game_path`` (relative to the config, else to ViZDoom's
    folder), else the bundled Freedoom: ``freedoom1.wad`` for ``ExMy`` maps,
    ``freedoom2.wad`` otherwise.
    """
    bundled = scenarios_dir().parent
    entry = _config_value(config, "doom_game_path") if config is not None else None
    if entry:
        path = Path(entry)
        candidates = [path] if path.is_absolute() else [config.parent / path, bundled / path]  # type: ignore[union-attr]
    else:
        episodic = bool(doom_map and re.fullmatch(r"E[0-9]M[0-9]", doom_map.upper()))
        candidates = [bundled / ("freedoom1.wad" if episodic else "freedoom2.wad")]
    return next((p for p in candidates if p.is_file()), None)


def resolve_scenario(scenario: str, doom_map: str | None = None) -> Scenario:
    """Resolve ``scenario`` and check its WAD and map before any engine starts.

    Args:
        scenario: a ViZDoom scenario name (see :func:`known_scenarios`), a path
            to a ``.cfg``, or a path to a ``.wad``.
        doom_map: map lump to play (``MAP01``, ``E1M1``); for a WAD it defaults
            to ``MAP01`` (or the WAD's first map), for a config to the config's.

    Raises:
        GolemError: unknown name (listing the known ones), missing file, or an
            invalid WAD/map — one line.
    """
    lower = scenario.lower()
    if lower.endswith(".wad"):
        wad_path = Path(scenario).expanduser()
        wad = read_wad(wad_path)  # raises on missing / malformed
        maps = wad.maps()
        chosen = (doom_map or (DEFAULT_WAD_MAP if DEFAULT_WAD_MAP in maps or not maps else maps[0])).upper()
        wad.validate_map(chosen)
        return Scenario(name=wad_path.stem, config=None, wad=wad_path.resolve(), doom_map=chosen)
    if lower.endswith(".cfg") or "/" in scenario:
        config = Path(scenario).expanduser()
        if not config.is_file():
            raise GolemError(f"scenario config not found: {config}")
        name = config.stem
    else:
        config = scenarios_dir() / f"{scenario}.cfg"
        if not config.is_file():
            raise GolemError(f"unknown scenario {scenario!r}; known: {', '.join(known_scenarios())} (or a .cfg/.wad path)")
        name = scenario
    config = config.resolve()
    wad_entry = _config_value(config, "doom_scenario_path")
    wad_path = None
    if wad_entry:
        wad_path = Path(wad_entry)
        if not wad_path.is_absolute():
            wad_path = config.parent / wad_path
        if not wad_path.is_file():
            raise GolemError(f"scenario {name}: WAD {wad_path} named by {config.name} not found")
    chosen = doom_map.upper() if doom_map else None
    check_map = chosen or (_config_value(config, "doom_map") or DEFAULT_WAD_MAP).upper()
    sources = [read_wad(wad_path)] if wad_path is not None else []
    iwad = iwad_path(config, check_map) if chosen else None
    if iwad is not None:
        # A map missing from the scenario WAD is looked up in the IWAD, as the engine does.
        sources.append(read_wad(iwad))
    for wad in sources:
        if check_map in {lump.name for lump in wad.lumps}:
            wad.validate_map(check_map)
            break
    else:
        if chosen and sources:
            known = sorted({m for wad in sources for m in wad.maps()})
            raise GolemError(f"map {chosen} not found for scenario {name} (maps: {', '.join(known) or 'none'})")
    return Scenario(name=name, config=config, wad=wad_path, doom_map=chosen)
