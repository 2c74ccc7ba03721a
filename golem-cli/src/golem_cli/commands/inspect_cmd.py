"""``golem run inspect``: what a dataset holds, before training on it."""

from __future__ import annotations

import json
from typing import Annotated, Optional

import typer
from rich.table import Table

from golem.data.inspection import IDLE_WARNING, inspect_episodes
from golem.data.store import TrajectoryStore
from golem_cli.options import JsonOpt, SetOpt, StoreOpt, store_path
from golem_cli.state import state


def inspect_command(
    ctx: typer.Context,
    scenario: Annotated[Optional[str], typer.Option("--scenario", "-s", help="Only episodes of this scenario.")] = None,
    source: Annotated[Optional[str], typer.Option("--source", help="Only episodes from this source.")] = None,
    tag: Annotated[Optional[list[str]], typer.Option("--tag", help="Only episodes with this tag. Repeatable.")] = None,
    store: StoreOpt = None,
    set_: SetOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Shapes and value ranges per modality, action balance, idle share and per-episode returns."""
    st = state(ctx)
    settings = st.resolve(set_=set_).settings
    path = store_path(settings, store)
    with TrajectoryStore.open(path) as opened:
        infos = [
            i
            for i in opened.episodes(source=source, scenario=scenario, tags=tag)
            if i.meta.profile == settings.brain.profile
        ]
        report = inspect_episodes(opened, infos)
    data = report.to_dict()
    if as_json:
        st.out.print_json(json.dumps(data))
        return

    mods = Table(title=f"Modalities ({len(report.episodes)} episodes, {report.steps} steps)")
    for col in ("array", "shape", "dtype", "min", "max", "mean"):
        mods.add_column(col, justify="right" if col in ("min", "max", "mean") else "left")
    for key, m in data["modalities"].items():
        mods.add_row(
            key,
            "×".join(map(str, m["shape"])) or "scalar",
            m["dtype"],
            f"{m['min']:.3g}",
            f"{m['max']:.3g}",
            f"{m['mean']:.3g}",
        )
    st.out.print(mods)

    acts = Table(title="Actions")
    acts.add_column("action")
    acts.add_column("count", justify="right")
    acts.add_column("share", justify="right")
    for name, a in data["actions"].items():
        acts.add_row(name, str(a["count"]), f"{a['share']:.1%}")
    acts.add_row("[dim](idle: nothing pressed)[/dim]", str(report.idle_steps), f"{report.idle_share:.1%}")
    st.out.print(acts)
    if report.idle_warning:
        st.err.print(
            f"[yellow]warning: {report.idle_share:.0%} of steps press nothing (above {IDLE_WARNING:.0%}); "
            "a model trained on this learns mostly to stand still[/yellow]"
        )

    eps = Table(title="Episodes")
    for col in ("id", "source", "scenario", "seed", "length", "return"):
        eps.add_column(col, justify="right" if col in ("id", "seed", "length", "return") else "left")
    for e in report.episodes:
        eps.add_row(str(e["id"]), e["source"], e["scenario"], str(e["seed"]), str(e["length"]), f"{e['return']:.2f}")
    r = data["returns"]
    st.out.print(eps)
    st.out.print(f"return: mean {r['mean']:.2f} ± {r['std']:.2f} (min {r['min']:.2f}, max {r['max']:.2f})")
