"""``golem run``: the pipeline stages, in the order a run goes through them."""

from __future__ import annotations

import typer

HELP = """The pipeline, stage by stage.

Stages appear here as they are built: record demonstrations, inspect them,
train, audit, evaluate and play.
"""

app = typer.Typer(help=HELP, no_args_is_help=True)
