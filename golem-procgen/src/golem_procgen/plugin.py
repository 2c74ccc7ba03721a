"""The ``procgen`` plugin: the ``builtin``, ``oblige`` and ``vary`` map generators, the ``explorer`` and ``scout``
experts, the ``balanced`` sampler, ``golem procgen …``."""

from __future__ import annotations

from typing import Any

from golem import hookimpl


@hookimpl
def register_map_generators(register) -> None:
    from golem_procgen.builtin import BuiltinGenerator
    from golem_procgen.oblige import ObligeGenerator
    from golem_procgen.space import ProcgenSettings
    from golem_procgen.variants.build import VaryGenerator

    register("builtin", BuiltinGenerator, settings=ProcgenSettings)  # procgen.* covers both backends
    register("oblige", ObligeGenerator)
    register("vary", VaryGenerator)  # variants of a shipped scenario; samples no curriculum phase


@hookimpl
def register_experts(register) -> None:
    from golem_procgen.explorer import ExplorerExpert
    from golem_procgen.scout import ScoutExpert

    register("explorer", ExplorerExpert)
    register("scout", ScoutExpert)  # the explorer that heads for the exit only once it has seen it


@hookimpl
def register_samplers(register) -> None:
    from golem_procgen.balanced import BalancedSampler, BalancedSettings

    register("balanced", BalancedSampler, settings=BalancedSettings)


@hookimpl
def register_commands(app: Any) -> None:
    from golem_procgen.commands import app as procgen_app

    app.add_typer(procgen_app, name="procgen")
