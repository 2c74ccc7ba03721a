"""``golem models``: the checkpoints on disk."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from golem.errors import GolemError
from golem.learning.archives import ArchiveEntry, activate, active_models, list_archives
from golem_cli.options import JsonOpt, SetOpt
from golem_cli.state import state
from golem_cli.tables import human_bytes, number

app = typer.Typer(help="Trained models: archives and the active model per profile.", no_args_is_help=True)


@app.command("list")
def list_command(
    ctx: typer.Context,
    profile: Annotated[
        Optional[str], typer.Option("--profile", help="Only this action profile (default: every profile).")
    ] = None,
    set_: SetOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Archived checkpoints per profile: date, size, model, sensors, training settings, validation scores.

    A checkpoint fine-tuned by `golem rl finetune` shows the frames it was fine-tuned for and its held-out
    return at its last evaluation (its validation scores are its source's, so they are not repeated).
    """
    st = state(ctx)
    settings = st.resolve(set_=set_).settings
    entries = list_archives(settings, profile)
    damaged = [a for a in active_models(settings, profile) if a.error]
    if as_json:
        typer.echo(json.dumps([e.to_dict() for e in entries]))
        return
    for active in damaged:
        st.out.print(
            f"[red]profile {active.profile}: the active model is damaged[/red] ({active.error}); "
            f"choose another with `golem models activate N`",
            highlight=False,
            soft_wrap=True,
        )
    if not entries:
        st.out.print(
            f"no archived models under {settings.data.root / 'models'}; run `golem run train`", highlight=False
        )
        return
    for name in dict.fromkeys(e.profile for e in entries):
        rows = [e for e in entries if e.profile == name]
        table = Table(title=f"Profile {name}", box=None, pad_edge=False, header_style="bold")
        tuned = any(e.finetuned for e in rows)
        cols = ("#", "created", "size", "model", "sensors", "epochs", "loss", "lr", "exact", "F1")
        cols += ("RL frames", "play") if tuned else ()
        for col in cols:
            numeric = col in ("#", "size", "epochs", "lr", "exact", "F1", "RL frames", "play")
            table.add_column(
                col,
                justify="right" if numeric else "left",
                no_wrap=col == "created",
                overflow="fold" if col == "sensors" else "ellipsis",
            )
        for i, e in enumerate(rows, 1):
            table.add_row(str(i), *_row(e), *(_rl_cells(e) if tuned else ()))
        table.caption = "times UTC · exact: validation exact match · F1: mean validation F1 · *: active"
        if tuned:
            table.caption += " · RL frames: frames fine-tuned · play: held-out return at its last evaluation"
        st.out.print(table)
        for i, e in enumerate(rows, 1):
            mark = " [bold]*[/bold] active" if e.active else ""
            note = " (interrupted)" if e.interrupted else ""
            if e.finetuned:
                note += _rl_note(e)
            if e.error:
                note = f" [red]{e.error}[/red]"
            st.out.print(f"  {i}. {e.path}{note}{mark}", highlight=False, soft_wrap=True)


def _rl_cells(e: ArchiveEntry) -> list[str]:
    """The fine-tuning columns: frames fine-tuned and the last held-out evaluation's mean return."""
    if not e.finetuned:
        return ["", ""]
    mean = (e.evaluation or {}).get("mean")
    return [number(e.frames, ","), number(mean, ".4g")]


def _rl_note(e: ArchiveEntry) -> str:
    """`` (fine-tuned from FILE SHA…, sampled decisions)`` for the line under the table."""
    source = e.finetuned_from or {}
    named = f"{source.get('file', '?')} {str(source.get('sha256', ''))[:12]}".strip()
    how = ", buttons drawn from their probabilities" if e.decisions == "sample" else ""
    return f" (fine-tuned from {named}{how})"


def _row(e: ArchiveEntry) -> list[str]:
    if e.error:
        return ["[red]unreadable[/red]", human_bytes(e.bytes, short=True), "", "", "", "", "", "", ""]
    if e.finetuned:  # its training settings and validation are its source's: shown once, on the source
        e = replace(e, validation=None, epochs=None, loss=None, learning_rate=None)
    val = e.validation or {}
    created = (e.created or "—").replace("T", " ")[:16] + (" *" if e.active else "")
    return [
        created,
        human_bytes(e.bytes, short=True),
        e.model or "—",
        ",".join(e.sensors),
        str(e.epochs) if e.epochs is not None else "—",
        e.loss or "—",
        number(e.learning_rate, "g"),
        number(val.get("exact_match")),
        number(e.mean_f1),
    ]


@app.command("activate")
def activate_command(
    ctx: typer.Context,
    archive: Annotated[
        str, typer.Argument(help="An archive's path, or its number in `golem models list` for --profile.")
    ],
    profile: Annotated[
        Optional[str], typer.Option("--profile", help="Profile whose listing numbers ARCHIVE (default: brain.profile).")
    ] = None,
    set_: SetOpt = None,
) -> None:
    """Make an archived checkpoint its profile's active model (checked whole first, replaced atomically)."""
    st = state(ctx)
    settings = st.resolve(set_=set_).settings
    path = Path(archive)
    if archive.isdigit() and not path.is_file():
        name = profile or settings.brain.profile
        entries = list_archives(settings, name)
        index = int(archive)
        if not 1 <= index <= len(entries):
            raise GolemError(
                f"profile {name} has {len(entries)} archive(s); {index} is not one of them (see `golem models list`)"
            )
        path = Path(entries[index - 1].path)
    active = activate(settings, path)
    st.out.print(f"active model → {active} (from {path})", highlight=False, soft_wrap=True)
