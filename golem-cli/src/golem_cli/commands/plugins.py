"""``golem plugins``: what is installed and what it registered."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from golem.registry import CATEGORIES
from golem_cli.options import JsonOpt
from golem_cli.state import state

app = typer.Typer(help="Installed plugins and the components they register.", no_args_is_help=True)


@app.command("list")
def list_plugins(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """List plugin distributions, their versions and components; broken plugins with their error."""
    st = state(ctx)
    rows = [
        {
            "plugin": p.name,
            "distribution": p.distribution,
            "version": p.version,
            "module": p.module,
            "status": "broken" if p.broken else "ok",
            "error": p.error,
            "components": {c: p.components[c] for c in CATEGORIES if c in p.components},
        }
        for p in st.host.plugins
    ]
    if as_json:
        st.out.print_json(json.dumps({"plugins": rows}))
        return
    table = Table(title="Golem plugins", show_lines=True)
    for col in ("plugin", "distribution", "version", "components", "status"):
        table.add_column(col, overflow="fold")
    for r in rows:
        comps = "\n".join(f"{cat}: {', '.join(names)}" for cat, names in r["components"].items()) or "-"
        status = f"[red]broken[/red]: {r['error']}" if r["error"] else "[green]ok[/green]"
        table.add_row(r["plugin"], r["distribution"], r["version"], comps, status)
    st.out.print(table)
    if st.host.broken:
        st.err.print(f"[yellow]{len(st.host.broken)} broken plugin(s); the others work as usual[/yellow]")
