"""Scenario variants: the same map and rules with another look (``golem procgen vary``, the ``vary`` generator).

Modules: :mod:`~golem_procgen.variants.udmf` (TEXTMAP text ↔ blocks),
:mod:`~golem_procgen.variants.decorate` (the engine's actor classes and their states),
:mod:`~golem_procgen.variants.looks` (sprites, tints and the DECORATE of a new look),
:mod:`~golem_procgen.variants.textures` (the IWAD's textures and flats),
:mod:`~golem_procgen.variants.obstacles` (where a solid decoration cuts nothing off),
:mod:`~golem_procgen.variants.build` (the modifications, the WAD and its config).
"""

from __future__ import annotations

from golem_procgen.variants.build import (
    MODIFICATIONS,
    VariantInfo,
    VaryGenerator,
    build_variant,
    normalise_modifications,
    variant_stem,
)

__all__ = ["MODIFICATIONS", "VariantInfo", "VaryGenerator", "build_variant", "normalise_modifications", "variant_stem"]
