"""The ``golem`` application: parse, assemble plugins, report."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console
from rich.markup import escape
from typer.core import TyperGroup

import golem
from golem.allocator import keep_freed_memory
from golem.errors import GolemError, UnknownComponentError
from golem.logs import LEVELS, configure_logging
from golem.plugins import PluginHost, load_plugins
from golem_cli.commands import config as config_cmd
from golem_cli.commands import data as data_cmd
from golem_cli.commands import models as models_cmd
from golem_cli.commands import plugins as plugins_cmd
from golem_cli.commands import run as run_cmd
from golem_cli.commands.demo import demo_command
from golem_cli.commands.zoo import zoo_command
from golem_cli.options import PluginOpt, SetOpt
from golem_cli.state import AppState


class GolemGroup(TyperGroup):
    """Turns user errors anywhere below into one line on stderr and a non-zero exit."""

    def invoke(self, ctx: typer.Context) -> Any:
        try:
            return super().invoke(ctx)
        except GolemError as exc:
            message = str(exc)
            broken = ctx.obj.host.broken if isinstance(ctx.obj, AppState) else []
            if isinstance(exc, UnknownComponentError) and broken:
                message += f" ({len(broken)} broken plugin(s): see `golem plugins list`)"
            Console(stderr=True).print(
                f"[bold red]error:[/bold red] {escape(message)}", highlight=False, soft_wrap=True
            )  # messages may quote brackets (paths, gloo's sources)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            Console(stderr=True).print("[yellow]interrupted[/yellow]")
            raise typer.Exit(130) from None


def _version(value: bool) -> None:
    if value:
        typer.echo(f"golem {golem.__version__}")
        raise typer.Exit()


def build_app(host: PluginHost | None = None, *, log_json: bool = False, log_level: str = "warning") -> typer.Typer:
    """The ``golem`` typer app with the core commands and every plugin's commands.

    Logging is configured before plugins load (so their events honour
    ``--log-json``) and again by the root callback from the parsed flags.
    """
    configure_logging(json=log_json, level=log_level if log_level in LEVELS else "warning")
    host = host if host is not None else load_plugins()
    app = typer.Typer(
        name="golem",
        cls=GolemGroup,
        help="Golem trains agents that play Doom from what they see and hear.",
        no_args_is_help=True,
        pretty_exceptions_show_locals=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    @app.callback()
    def root(
        ctx: typer.Context,
        config: Annotated[
            Optional[Path], typer.Option("--config", "-c", help="Settings file (default: ./golem.toml if present).")
        ] = None,
        plugin: PluginOpt = None,
        set_: SetOpt = None,
        log_json: Annotated[bool, typer.Option("--log-json", help="Log events as JSON lines on stderr.")] = False,
        log_level: Annotated[
            str,
            typer.Option(
                "--log-level",
                help=f"Least severe log event shown on stderr: {', '.join(LEVELS)} "
                "(info shows every stage's events; tables and progress bars show regardless).",
            ),
        ] = "warning",
        version: Annotated[
            bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
        ] = False,
    ) -> None:
        if log_level not in LEVELS:
            raise typer.BadParameter(f"{log_level!r} is not one of {', '.join(LEVELS)}", param_hint="--log-level")
        configure_logging(json=log_json, level=log_level)
        ctx.obj = AppState(host=host, config=config, plugin_flags=list(plugin or []), set_flags=list(set_ or []))

    app.add_typer(plugins_cmd.app, name="plugins")
    app.add_typer(config_cmd.app, name="config")
    run_app = run_cmd.build_app()
    app.add_typer(run_app, name="run")
    app.add_typer(data_cmd.app, name="data")
    app.add_typer(models_cmd.app, name="models")
    app.command("demo")(demo_command)
    app.command("zoo")(zoo_command)
    host.add_commands(app)
    run_cmd.add_missing_plugin_commands(run_app)
    return app


def _early_log_flags(argv: list[str]) -> tuple[bool, str]:
    """``--log-json`` / ``--log-level X`` from argv before parsing, so plugin loading logs right."""
    level = "warning"
    for i, arg in enumerate(argv):
        if arg == "--log-level" and i + 1 < len(argv):
            level = argv[i + 1]
        elif arg.startswith("--log-level="):
            level = arg.split("=", 1)[1]
    return "--log-json" in argv, level


#: Options of the root command, with how many values follow each; they may also be given after a subcommand.
GLOBAL_OPTIONS = {"--config": 1, "-c": 1, "--log-level": 1, "--log-json": 0}


def hoist_global_options(argv: list[str]) -> list[str]:
    """``argv`` with the root's options (``--log-level``, ``--config``, …) moved in front of the subcommand.

    ``golem run train --log-level info`` then means ``golem --log-level info run train``.
    Everything after a ``--`` is left alone.
    """
    front: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            rest += argv[i:]
            break
        name = arg.split("=", 1)[0]
        if name in GLOBAL_OPTIONS:
            takes = 0 if "=" in arg else GLOBAL_OPTIONS[name]
            front += argv[i : i + 1 + takes]
            i += 1 + takes
            continue
        rest.append(arg)
        i += 1
    return front + rest


def main() -> None:
    """Console-script entry point."""
    keep_freed_memory()  # before any tensor is allocated: see golem.allocator
    argv = hoist_global_options(sys.argv[1:])
    log_json, log_level = _early_log_flags(argv)
    build_app(log_json=log_json, log_level=log_level)(args=argv)


if __name__ == "__main__":
    main()
