"""The ``worldmodel`` plugin: the ``dream`` environment, its collectors (``random-hold``, ``dream-controller``), and
``golem dream …``."""

from __future__ import annotations

from typing import Any

from golem import hookimpl


@hookimpl
def register_environments(register) -> None:
    from golem_worldmodel.env_factory import make_dream_env
    from golem_worldmodel.presets import DreamSettings

    register("dream", make_dream_env, settings=DreamSettings)


@hookimpl
def register_experts(register) -> None:
    from golem_worldmodel.collect import RandomHoldPolicy
    from golem_worldmodel.explore import DreamControllerPolicy

    register("random-hold", RandomHoldPolicy)
    register("dream-controller", DreamControllerPolicy)


@hookimpl
def register_commands(app: Any) -> None:
    from golem_worldmodel.commands import app as dream_app

    app.add_typer(dream_app, name="dream")
