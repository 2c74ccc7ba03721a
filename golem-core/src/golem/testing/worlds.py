"""Contract checks for map generators, for plugin authors' tests."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from golem.settings import GolemSettings
from golem.wad import validate_wad


def _field(info: Any, name: str) -> Any:
    return info.get(name) if isinstance(info, Mapping) else getattr(info, name, None)


def assert_map_generator_contract(
    builder: Any, folder: Path, config: Mapping[str, Any], *, seed: int = 0, settings: GolemSettings | None = None
) -> Any:
    """Check a registered map-generator builder as Golem uses it (see ``register_map_generators``).

    Checks: ``builder(settings)`` gives an object with ``build``; ``build(config,
    seed, path)`` writes a WAD that :func:`golem.wad.validate_wad`
    accepts with the returned ``map`` lump; it leaves nothing else in the folder
    (no temporary file); and the same config and seed give the same bytes.

    Returns the first build's map info.
    """
    settings = settings or GolemSettings.model_construct()
    generator = builder(settings)
    assert callable(getattr(generator, "build", None)), "a map generator needs build(config, seed, path)"
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    first, second = folder / "first.wad", folder / "second.wad"
    info = generator.build(dict(config), seed, first)
    map_name = _field(info, "map")
    assert isinstance(map_name, str) and map_name, f"build() must return the map lump name, got {info!r}"
    assert first.is_file(), f"build() did not write {first}"
    validate_wad(first, map_name)
    again = generator.build(dict(config), seed, second)
    assert _field(again, "map") == map_name, "the same config and seed gave another map lump"
    assert first.read_bytes() == second.read_bytes(), "the same config and seed gave different WAD bytes"
    left = sorted(p.name for p in folder.iterdir() if p.name not in {first.name, second.name})
    sidecars = [n for n in left if n.startswith(("first", "second"))]
    assert len(sidecars) == len(left), f"build() left other files behind: {left}"
    return info
