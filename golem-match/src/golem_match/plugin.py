"""The ``match`` plugin: lockstep multiplayer matches as ``golem run match``."""

from __future__ import annotations

from typing import Any

from golem.plugins import hookimpl


@hookimpl
def register_commands(app: Any) -> None:
    from golem_match.command import match_command

    run = next((g.typer_instance for g in app.registered_groups if g.name == "run"), None)
    (run if run is not None else app).command("match")(match_command)
