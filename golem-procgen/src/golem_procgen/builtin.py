"""The ``builtin`` map generator: rooms and corridors written here, no external program.

``BuiltinGenerator(settings).build(config, seed, path)`` turns a map
configuration (:mod:`golem_procgen.space`) into a WAD, its navigation
sidecar and its scenario config (:mod:`golem_procgen.maps`); the geometry is
:mod:`golem_procgen.layout`, the lumps :mod:`golem_procgen.wadwriter`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from golem_procgen.layout import generate_layout
from golem_procgen.maps import MapInfo, PhaseGenerator, write_map
from golem_procgen.navigation import layout_to_nav
from golem_procgen.space import config_from_mapping
from golem_procgen.wadwriter import MAP_NAME, write_wad


class BuiltinGenerator(PhaseGenerator):
    """Builds maps from a configuration and a seed (the same pair gives the same bytes).

    Args:
        settings: the run's settings; ``procgen.space`` bounds phase 3 of :meth:`sample`.
    """

    name = "builtin"

    def build(self, config: Mapping[str, Any], seed: int, path: Path) -> MapInfo:
        """Write the map of ``config`` (a :class:`MapConfig` dict or bare parameters) and ``seed`` to ``path``.

        Raises:
            GolemError: unknown parameter or value.
        """
        params = config_from_mapping(config)
        layout = generate_layout(params, seed)
        path = Path(path)
        nav = layout_to_nav(layout, self.name, MAP_NAME)
        return write_map(write_wad(layout), path, MAP_NAME, nav, params, layout.skill, self.name, seed)
