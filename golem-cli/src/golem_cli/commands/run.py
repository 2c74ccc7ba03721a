"""``golem run``: the pipeline stages, in the order a run goes through them."""

from __future__ import annotations

from collections.abc import Callable

import typer

from golem.errors import GolemError
from golem_cli.commands.audit import audit_command
from golem_cli.commands.dagger import dagger_command
from golem_cli.commands.evaluate import evaluate_command
from golem_cli.commands.inspect_cmd import inspect_command
from golem_cli.commands.intervene import intervene_command
from golem_cli.commands.play import play_command
from golem_cli.commands.record import record_command
from golem_cli.commands.train import train_command
from golem_cli.commands.tune import tune_command

HELP = """The pipeline, stage by stage.

Record demonstrations, inspect them, train a model on them, look inside it
(summary, audit, examine), tune its press thresholds by play (tune), then let
it play and judge it against a random policy and the scripted expert
(evaluate); DAgger fine-tunes it on its own
states labelled by the expert (dagger) or by you taking over (intervene).
Matches pit agents against agents, bots and people in lockstep multiplayer
(match, from the golem-match plugin). Summary and examine come with the
golem-explain plugin.
"""

#: Commands that plugins add to this group, and the distribution to install when one is missing.
PLUGIN_COMMANDS = {"summary": "golem-explain", "examine": "golem-explain", "match": "golem-match"}
#: The group's commands in pipeline order, plugins' included (any other follows, in the order it was added).
ORDER = ("record", "inspect", "train", "summary", "audit", "examine", "tune", "play", "evaluate", "intervene", "dagger")


def build_app() -> typer.Typer:
    """The ``golem run`` group with the core's stages; plugins add theirs (``register_commands``)."""
    app = typer.Typer(help=HELP, no_args_is_help=True)

    # Stages, in pipeline order.
    app.command("record")(record_command)
    app.command("inspect")(inspect_command)
    app.command("train")(train_command)
    app.command("audit")(audit_command)
    app.command("tune")(tune_command)
    app.command("play")(play_command)
    app.command("evaluate")(evaluate_command)
    app.command("intervene")(intervene_command)
    app.command("dagger")(dagger_command)
    return app


def add_missing_plugin_commands(run_app: typer.Typer) -> None:
    """A stand-in for each plugin command no installed plugin registered (it says what to install); then every
    command in pipeline order (:data:`ORDER`).

    Args:
        run_app: the ``golem run`` group after every plugin's ``register_commands`` ran.
    """
    have = {c.name for c in run_app.registered_commands}
    for name, distribution in PLUGIN_COMMANDS.items():
        if name not in have:
            run_app.command(
                name,
                help=f"(not installed: pip install {distribution})",
                context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []},
            )(_stand_in(name, distribution))
    rank = {name: i for i, name in enumerate(ORDER)}
    run_app.registered_commands.sort(key=lambda c: rank.get(c.name or "", len(ORDER)))


def _stand_in(name: str, distribution: str) -> Callable[[], None]:
    def missing() -> None:
        raise GolemError(f"`golem run {name}` comes with the {distribution} plugin: pip install {distribution}")

    return missing
