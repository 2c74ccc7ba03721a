"""The ``rl`` plugin: golem-rl's reward shapers (with the ``rl`` settings section) and ``golem rl …``."""

from __future__ import annotations

from typing import Any

from golem import hookimpl


@hookimpl
def register_reward_shapers(register) -> None:
    from golem_rl.settings import RLSettings
    from golem_rl.shapers import SHAPERS

    # A settings section needs a registered component to own it; golem-rl's first shaper carries the run's
    # `rl` section (the shapers' weights live there too: rl.shapers).
    for i, (name, cls) in enumerate(SHAPERS.items()):
        register(name, cls, settings=RLSettings if i == 0 else None)


@hookimpl
def register_commands(app: Any) -> None:
    from golem_rl.commands import app as rl_app

    app.add_typer(rl_app, name="rl")
