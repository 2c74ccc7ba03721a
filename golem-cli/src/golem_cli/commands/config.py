"""``golem config``: the effective settings and where each came from."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from golem_cli.options import JsonOpt, PluginOpt, SetOpt
from golem_cli.state import state

app = typer.Typer(help="Effective settings: defaults < golem.toml < GOLEM_* env < flags.", no_args_is_help=True)


@app.command("show")
def show(ctx: typer.Context, plugin: PluginOpt = None, set_: SetOpt = None, as_json: JsonOpt = False) -> None:
    """Show every setting, its value and its source (default, file, env or flag)."""
    st = state(ctx)
    resolved = st.resolve(plugin=plugin, set_=set_)
    rows = resolved.rows()
    if as_json:
        payload = {
            "config_file": str(resolved.config_file) if resolved.config_file else None,
            "settings": {k: {"value": v, "source": s} for k, v, s in rows},
        }
        st.out.print_json(json.dumps(payload))
        return
    table = Table(title=f"Golem settings ({resolved.config_file or 'no golem.toml'})")
    table.add_column("key")
    table.add_column("value", overflow="fold")
    table.add_column("source", style="dim")
    for key, value, source in rows:
        style = None if source == "default" else "bold"
        table.add_row(key, json.dumps(value), source, style=style)
    st.out.print(table)
