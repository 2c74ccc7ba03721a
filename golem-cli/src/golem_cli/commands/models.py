"""``golem models``: the checkpoints on disk."""

from __future__ import annotations

import json
from typing import Annotated, Optional

import typer
from rich.table import Table

from golem.learning.archives import ArchiveEntry, list_archives
from golem_cli.options import JsonOpt, SetOpt
from golem_cli.state import state

app = typer.Typer(help="Trained models: archives and the active model per profile.", no_args_is_help=True)


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f}{unit[0]}" if unit == "B" else f"{n:.1f}{unit[0]}"
        n /= 1024
    return str(n)


def _num(value: float | None, fmt: str = ".3f") -> str:
    return "—" if value is None else format(value, fmt)


@app.command("list")
def list_command(
    ctx: typer.Context,
    profile: Annotated[Optional[str], typer.Option("--profile", help="Only this action profile (default: every profile).")] = None,
    set_: SetOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Archived checkpoints per profile: date, size, model, sensors, training settings, validation scores."""
    st = state(ctx)
    settings = st.resolve(set_=set_).settings
    entries = list_archives(settings, profile)
    if as_json:
        typer.echo(json.dumps([e.to_dict() for e in entries]))
        return
    if not entries:
        st.out.print(f"no archived models under {settings.data.root / 'models'}; run `golem run train`", highlight=False)
        return
    for name in dict.fromkeys(e.profile for e in entries):
        rows = [e for e in entries if e.profile == name]
        table = Table(title=f"Profile {name}", box=None, pad_edge=False, header_style="bold")
        for col in ("#", "created", "size", "model", "sensors", "epochs", "loss", "lr", "exact", "F1"):
            numeric = col in ("#", "size", "epochs", "lr", "exact", "F1")
            table.add_column(
                col, justify="right" if numeric else "left", no_wrap=col == "created",
                overflow="fold" if col == "sensors" else "ellipsis",
            )
        for i, e in enumerate(rows, 1):
            table.add_row(str(i), *_row(e))
        table.caption = "times UTC · exact: validation exact match · F1: mean validation F1 · *: active"
        st.out.print(table)
        for i, e in enumerate(rows, 1):
            mark = " [bold]*[/bold] active" if e.active else ""
            note = " (interrupted)" if e.interrupted else ""
            if e.error:
                note = f" [red]{e.error}[/red]"
            st.out.print(f"  {i}. {e.path}{note}{mark}", highlight=False, soft_wrap=True)


def _row(e: ArchiveEntry) -> list[str]:
    if e.error:
        return ["[red]unreadable[/red]", _size(e.bytes), "", "", "", "", "", "", ""]
    val = e.validation or {}
    created = (e.created or "—").replace("T", " ")[:16] + (" *" if e.active else "")
    return [
        created, _size(e.bytes), e.model or "—", ",".join(e.sensors),
        str(e.epochs) if e.epochs is not None else "—", e.loss or "—", _num(e.learning_rate, "g"),
        _num(val.get("exact_match")), _num(e.mean_f1),
    ]
