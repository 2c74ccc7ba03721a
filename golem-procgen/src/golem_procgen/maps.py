"""What every generator writes beside its WAD, and the generated-map set of a phase.

A built map is three files with one stem: ``<stem>.wad`` (the map),
``<stem>.nav.json`` (the navigation sidecar, :mod:`golem_procgen.navigation`)
and ``<stem>.cfg`` (a ViZDoom scenario config that loads the WAD with the
map's skill, time-out and rewards), so a generated map plays like any shipped
scenario: ``golem run play --scenario <stem>.cfg``. Each file is written
atomically; the WAD is validated before it is written, and before the config that points at it.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from golem.atomic import atomic_write
from golem.errors import GolemError
from golem.settings import GolemSettings, section
from golem.wad import read_wad_bytes
from golem_procgen.navigation import sidecar_path
from golem_procgen.space import MapConfig, ProcgenSettings, sample_configuration

#: size → episode time-out in tics (35 = 1 s).
TIMEOUTS: dict[str, int] = {"micro": 2100, "small": 3150, "regular": 4200, "large": 6300}
#: Rewards of a generated map: reaching the exit, dying, each kill.
EXIT_REWARD, DEATH_PENALTY, KILL_REWARD = 1.0, 1.0, 0.1


@dataclass(frozen=True)
class MapInfo:
    """A built map: ``map`` lump, the WAD ``path``, its ``config`` and ``nav`` sidecars (``None``: none), how it was
    made."""

    map: str
    path: Path
    config: Path
    nav: Path | None
    generator: str
    seed: int
    params: dict[str, str]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "map": self.map,
            "path": str(self.path),
            "config": str(self.config),
            "nav": str(self.nav) if self.nav else None,
            "generator": self.generator,
            "seed": self.seed,
            "params": dict(self.params),
        }


#: A Doom-format THINGS record: x, y, angle, type, flags (int16 each); type 1 is player 1's start.
_THING = struct.Struct("<hhhHH")
PLAYER_START = 1


def check_playable(data: bytes, map_name: str, source: str) -> None:
    """Refuse WAD bytes whose ``map_name`` is missing, malformed or has no player-1 start (Doom format).

    Raises:
        GolemError: one line saying what is wrong.
    """
    wad = read_wad_bytes(data, source)
    wad.validate_map(map_name)
    names = [lump.name for lump in wad.lumps]
    start = names.index(map_name.upper())
    things = next((lump for lump in wad.lumps[start + 1 :] if lump.name == "THINGS"), None)
    if things is None:
        return  # UDMF: its TEXTMAP is the engine's to parse
    raw = data[things.offset : things.offset + things.size]
    types = {_THING.unpack_from(raw, k)[3] for k in range(0, len(raw) - _THING.size + 1, _THING.size)}
    if PLAYER_START not in types:
        raise GolemError(f"map {map_name} in {source} has no player start")


def config_path(wad: Path) -> Path:
    """The scenario config beside ``wad``."""
    return wad.with_suffix(".cfg")


class PhaseGenerator:
    """What the generators share: their ``procgen`` settings and :meth:`sample` over the curriculum's phases.

    Args:
        settings: the run's settings; ``procgen.space`` bounds phase 3 of :meth:`sample`.
    """

    name = ""

    def __init__(self, settings: GolemSettings | None = None) -> None:
        self.settings = section(settings or GolemSettings.model_construct(), ProcgenSettings)

    def sample(self, phase: int, seed: int, overrides: Mapping[str, str] | None = None) -> MapConfig:
        """A configuration for ``phase`` drawn from ``seed`` (see :func:`golem_procgen.space.sample_configuration`)."""
        return sample_configuration(phase, seed, self.settings.space, overrides)


def write_map(
    wad_bytes: bytes,
    path: Path,
    map_name: str,
    nav: Mapping[str, Any] | None,
    params: Mapping[str, str],
    skill: int,
    generator: str,
    seed: int,
    timeout: int | None = None,
) -> MapInfo:
    """Validate the WAD bytes, write them, its sidecar (unless ``nav`` is ``None``) and its scenario config
    (each atomically); return the info. ``timeout``: the episode time-out in tics (default: by size, :data:`TIMEOUTS`).

    Raises:
        GolemError: the WAD does not validate (nothing is written).
    """
    path = Path(path)
    check_playable(wad_bytes, map_name, str(path))  # nothing invalid ever lands at path
    with atomic_write(path) as fh:
        fh.write(wad_bytes)
    nav_path = sidecar_path(path) if nav is not None else None
    if nav_path is not None:
        with atomic_write(nav_path) as fh:
            fh.write(json.dumps(nav, separators=(",", ":")).encode())
    cfg = config_path(path)
    lines = [
        f"# Golem procedural map: generator {generator}, seed {seed}",
        "# " + json.dumps(dict(params), sort_keys=True),
        f"doom_scenario_path = {path.name}",
        f"doom_map = {map_name}",
        f"doom_skill = {skill}",
        f"episode_timeout = {timeout if timeout is not None else TIMEOUTS.get(str(params.get('size')), 4200)}",
        f"map_exit_reward = {EXIT_REWARD}",
        f"death_penalty = {DEATH_PENALTY}",
        f"kill_reward = {KILL_REWARD}",
        "",
    ]
    with atomic_write(cfg) as fh:
        fh.write("\n".join(lines).encode())
    return MapInfo(
        map=map_name, path=path, config=cfg, nav=nav_path, generator=generator, seed=int(seed), params=dict(params)
    )
