"""``golem run examine``: Grad-CAM of the live model at one step of a recorded episode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from golem.diagnostics.examine import examine
from golem_cli.options import DeviceOpt, JsonOpt, PluginOpt, SetOpt, StoreOpt, checkpoint_option
from golem_cli.state import state


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
