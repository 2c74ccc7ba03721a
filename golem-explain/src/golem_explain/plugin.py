"""The ``explain`` plugin: ``golem run summary``, ``golem run examine`` and the audit's chart."""

from __future__ import annotations

from typing import Any

from golem.plugins import hookimpl


@hookimpl
def register_commands(app: Any) -> None:
    from golem_explain.commands import examine_command, summary_command

    run = next((g.typer_instance for g in app.registered_groups if g.name == "run"), None)
    group = run if run is not None else app
    group.command("summary")(summary_command)
    group.command("examine")(examine_command)


@hookimpl
def register_charts(register) -> None:
    from golem_explain.chart import write_chart

    register("audit", write_chart)
