"""The commands ``golem run summary`` (the network, layer by layer) and ``golem run examine`` (Grad-CAM)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table
from rich.text import Text

from golem_cli.options import DeviceOpt, JsonOpt, PluginOpt, SetOpt, StoreOpt, checkpoint_option
from golem_cli.state import state
from golem_explain.examine import examine
from golem_explain.summary import summarize


def summary_command(
    ctx: typer.Context,
    model: Annotated[
        Optional[Path],
        typer.Option(
            "--model", help="Describe this checkpoint instead of the settings' configuration.", metavar="PATH"
        ),
    ] = None,
    depth: Annotated[int, typer.Option("--depth", min=1, max=8, help="Layer nesting shown.")] = 3,
    plugin: PluginOpt = None,
    set_: SetOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The network layer by layer (torchinfo) and parameters per cortex, core and head (settings, or --model PATH)."""
    st = state(ctx)
    settings = st.resolve(plugin=plugin, set_=set_).settings
    result = summarize(settings, st.host.registry, model, depth=depth)
    if as_json:
        typer.echo(json.dumps(result.to_dict()))
        return
    st.out.print(Text(result.table), soft_wrap=True)
    table = Table(title=f"{result.model} on {result.profile} ({result.n_actions} actions) — {result.source}")
    for col in ("sensor", "array", "step shape", "dtype", "cortex", "parameters"):
        table.add_column(col, justify="right" if col == "parameters" else "left")
    for s in result.sensors:
        params = f"{s.parameters:,}" if s.parameters is not None else "[dim](counted above)[/dim]"
        table.add_row(s.name, s.key, "×".join(map(str, s.shape)), s.dtype, s.cortex, params)
    if result.standardiser:
        table.add_row(
            "[bold]standardiser[/bold]", "", "", "", "each cortex feature, before the core", f"{result.standardiser:,}"
        )
    table.add_row("[bold]core[/bold]", "", "", "", f"working memory {result.working_memory}", f"{result.core:,}")
    table.add_row("[bold]head[/bold]", "", "", "", f"→ {result.n_actions} logits", f"{result.head:,}")
    table.caption = f"total {result.total:,} parameters ({result.trainable:,} trainable)"
    st.out.print(table)


def examine_command(
    ctx: typer.Context,
    episode: Annotated[int, typer.Option("--episode", "-e", min=0, help="Episode id in the store.")],
    step: Annotated[int, typer.Option("--step", "-t", min=0, help="Step of the episode to explain (0-based).")] = 0,
    model: Annotated[Optional[Path], checkpoint_option(short=False)] = None,
    out: Annotated[
        Optional[Path],
        typer.Option("--out", "-o", help="PNG to write (default: under data.root/reports).", metavar="PATH"),
    ] = None,
    device: DeviceOpt = None,
    store: StoreOpt = None,
    plugin: PluginOpt = None,
    set_: SetOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run the episode up to STEP with carried state, then show where the image cortices looked (Grad-CAM)."""
    st = state(ctx)
    settings = st.resolve(plugin=plugin, set_=set_, flags={"training.device": device}).settings
    result = examine(settings, st.host.registry, episode, step, model=model, store=store, out=out)
    if as_json:
        typer.echo(json.dumps(result.to_dict()))
        return
    top = sorted(result.probabilities.items(), key=lambda kv: -kv[1])[:3]
    st.out.print(
        f"episode {result.episode}, step {result.step}: {result.action} (p={result.probability:.2f}); "
        f"next {', '.join(f'{n} {p:.2f}' for n, p in top[1:])}; recorded: {'+'.join(result.recorded) or 'nothing'}",
        highlight=False,
    )
    st.out.print(f"Grad-CAM of {', '.join(result.layers.values())} → {result.path}", highlight=False, soft_wrap=True)
