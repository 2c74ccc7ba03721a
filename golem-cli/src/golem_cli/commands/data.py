"""``golem data``: the trajectory store (list, info, verify, import, export, delete)."""

from __future__ import annotations

import typer

app = typer.Typer(help="The trajectory store: list, info, verify, import, export, delete.", no_args_is_help=True)
