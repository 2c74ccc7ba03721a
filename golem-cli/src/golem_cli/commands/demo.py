"""``golem demo``: the main job, end to end, on a fresh clone with no arguments."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.panel import Panel

from golem.inspection import inspect_episodes
from golem.recording import RecordPlan, record, resolve_expert
from golem.store import TrajectoryStore
from golem.store.verify import verify_store
from golem_cli.state import state


def demo_command(
    ctx: typer.Context,
    out: Annotated[Path, typer.Option("--out", help="Folder for the demo's own store and files (recreated).")] = Path(
        "golem-data/demo"
    ),
    episodes: Annotated[int, typer.Option("--episodes", "-n", min=1, help="Expert episodes to record.")] = 20,
    workers: Annotated[int, typer.Option("--workers", "-w", min=1, help="Parallel engine processes.")] = 2,
    expert: Annotated[str, typer.Option("--expert", help="Scripted expert to learn from.")] = "basic",
) -> None:
    """Record expert demonstrations, inspect and verify them: the most complete path built so far."""
    st = state(ctx)
    settings = st.resolve().settings
    registry = st.host.registry
    _, scenario = resolve_expert(settings, registry, expert, scenario_given=False)
    store_path = out / "store"
    if store_path.exists():
        shutil.rmtree(store_path)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()

    st.out.rule(f"1/3 record {episodes} episodes of the {expert!r} expert on {scenario}")
    plan = RecordPlan(demonstrator="expert", expert=expert, episodes=episodes, workers=workers, tags=["demo"])
    with TrajectoryStore.create(store_path) as store:
        with st.err.status("recording…"):
            ids = record(settings, registry, plan, store, scenario)
        st.out.rule("2/3 inspect")
        report = inspect_episodes(store, store.episodes())
        data = report.to_dict()
        r = data["returns"]
        st.out.print(f"{len(ids)} episodes, {report.steps} steps; return {r['mean']:.2f} ± {r['std']:.2f}")
        for name, a in data["actions"].items():
            st.out.print(f"  {name:<14} {a['share']:6.1%}")
        st.out.print(f"  {'(idle)':<14} {report.idle_share:6.1%}")
        st.out.rule("3/3 verify")
        verdict = verify_store(store)
    status = "[green]ok[/green]" if verdict.ok else "[red]problems found[/red]"
    st.out.print(
        Panel.fit(
            f"store {store_path}  verify: {status}\n"
            f"{len(ids)} episodes in {time.perf_counter() - started:.0f} s\n"
            "next: `golem run inspect --store " + str(store_path) + "`",
            title="golem demo",
        )
    )
    if not verdict.ok:
        raise typer.Exit(1)
