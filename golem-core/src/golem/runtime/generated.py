"""Generated maps as scenarios: a registered map generator's curriculum phase, built once per seed.

``golem run record --procgen-phase P --maps N`` and ``golem run evaluate
--procgen-phase P --maps N`` play one episode on each of N maps of phase P.
The maps come from a generator registered through ``register_map_generators``
that can also sample a phase (``sample(phase, seed) -> config``, as the
``golem-procgen`` generators do); map *k* is built from seed ``start + k``
into ``<data.root>/maps/<generator>/phase<P>/`` and reused while its files
are there (the same configuration and seed give the same bytes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from golem.errors import GolemError
from golem.registry import Registry
from golem.settings import GolemSettings
from golem.wad import validate_wad


@dataclass(frozen=True)
class GeneratedMap:
    """One generated map as a scenario: ``scenario`` (its ``.cfg``, else the ``.wad``) and the ``seed`` built from."""

    scenario: str
    seed: int
    params: dict[str, Any]


def _field(info: Any, name: str) -> Any:
    return info.get(name) if isinstance(info, Mapping) else getattr(info, name, None)


def map_generator(settings: GolemSettings, registry: Registry, name: str) -> Any:
    """The generator ``name`` built for ``settings``; it must be able to sample curriculum phases.

    Raises:
        GolemError: no generator of that name (none installed: install golem-procgen), or one without ``sample``.
    """
    if not registry.names("map_generators"):
        raise GolemError(
            "no map generator is installed: --procgen-phase needs golem-procgen (pip install golem-procgen)"
        )
    generator = registry.get("map_generators", name).obj(settings)
    if not callable(getattr(generator, "sample", None)):
        raise GolemError(f"map generator {name!r} cannot sample curriculum phases (it has no sample(phase, seed))")
    return generator


def maps_folder(settings: GolemSettings, generator: str, phase: int) -> Path:
    """Where the maps of ``phase`` from ``generator`` are kept: ``<data.root>/maps/<generator>/phase<P>``."""
    return settings.data.root / "maps" / generator / f"phase{phase}"


def generated_maps(
    settings: GolemSettings,
    registry: Registry,
    phase: int,
    count: int,
    start_seed: int = 0,
    generator: str = "builtin",
    folder: Path | None = None,
    on_map: Callable[[GeneratedMap], None] | None = None,
) -> list[GeneratedMap]:
    """``count`` maps of curriculum ``phase`` from seeds ``start_seed …``, built where missing.

    Raises:
        GolemError: no such generator, an unknown phase, or a build that fails (one line).
    """
    builder = map_generator(settings, registry, generator)
    folder = (folder if folder is not None else maps_folder(settings, generator, phase)).resolve()
    out: list[GeneratedMap] = []
    for seed in range(start_seed, start_seed + count):
        wad = folder / f"seed{seed:06d}.wad"
        config = builder.sample(phase, seed)
        as_dict = config.as_dict() if hasattr(config, "as_dict") else dict(config)
        cfg = wad.with_suffix(".cfg")
        if wad.is_file() and cfg.is_file():
            validate_wad(wad)  # a corrupt map left by an earlier run fails here with one line
            scenario = cfg
        else:
            info = builder.build(as_dict, seed, wad)
            scenario = _field(info, "config") or _field(info, "path")
        item = GeneratedMap(scenario=str(scenario), seed=seed, params=dict(as_dict.get("params", as_dict)))
        out.append(item)
        if on_map is not None:
            on_map(item)
    return out


__all__ = ["GeneratedMap", "generated_maps", "map_generator", "maps_folder"]
