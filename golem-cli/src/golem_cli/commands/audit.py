"""``golem run audit``: per-action precision/recall/F1 of a trained model on held-out episodes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from golem.diagnostics.audit import AuditPlan, AuditReport, audit
from golem.errors import GolemError
from golem.learning.archives import resolve_model
from golem.settings import GolemSettings
from golem_cli.options import DeviceOpt, JsonOpt, PluginOpt, SetOpt, StoreOpt, checkpoint_option, module_option
from golem_cli.progress import task_bar
from golem_cli.state import state
from golem_cli.tables import action_scores


def audit_command(
    ctx: typer.Context,
    model: Annotated[Optional[Path], checkpoint_option("to audit", short=False)] = None,
    episodes: Annotated[
        Optional[str],
        typer.Option(
            "--episodes",
            help="Episode ids, e.g. 0,3,5-7 (default: the checkpoint's validation episodes).",
            metavar="IDS",
        ),
    ] = None,
    module: Annotated[Optional[str], module_option("Audit")] = None,
    sequence_length: Annotated[
        Optional[int],
        typer.Option(
            "--sequence-length", "-L", min=1, help="Window length (default: the one the model was trained with)."
        ),
    ] = None,
    threshold: Annotated[
        Optional[float], typer.Option("--threshold", help="Press an action above this probability (brain.activation).")
    ] = None,
    chart: Annotated[
        Optional[Path],
        typer.Option(
            "--chart",
            help="PNG of P/R/F1 per action (default: under data.root/reports, when golem-explain is installed).",
            metavar="PATH",
        ),
    ] = None,
    no_chart: Annotated[bool, typer.Option("--no-chart", help="Do not write the chart.")] = False,
    device: DeviceOpt = None,
    store: StoreOpt = None,
    plugin: PluginOpt = None,
    set_: SetOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Score the model on held-out episodes run as contiguous streams with carried state, every frame once."""
    st = state(ctx)
    flags = {"brain.activation": threshold, "training.device": device}
    settings = st.resolve(plugin=plugin, set_=set_, flags=flags).settings
    ids = parse_ids(episodes) if episodes is not None else None
    drawn = "audit" in st.host.registry.names("charts")  # the chart comes with golem-explain
    chart_path = None if no_chart or (chart is None and not drawn) else chart
    if chart_path is None and drawn and not no_chart:
        chart_path = default_chart_path(settings, resolve_model(settings, model))
    plan = AuditPlan(
        model=model, store=store, episodes=ids, module=module, sequence_length=sequence_length, chart=chart_path
    )
    progress = task_bar(st.err, "[bold]auditing[/bold]", "steps", disable=as_json, transient=True)
    task = progress.add_task("audit", total=None)

    def on_start(total: int) -> None:  # the bar appears once the model and the episodes are known to be good
        progress.update(task, total=total)
        progress.start()

    try:
        report = audit(
            settings,
            st.host.registry,
            plan,
            on_start=on_start,
            on_window=lambda w: progress.advance(task, len(w.probabilities)),
        )
    finally:
        if progress.live.is_started:
            progress.stop()
    if as_json:
        typer.echo(json.dumps(report.to_dict()))
        return
    print_report(st, report)


def default_chart_path(settings: GolemSettings, model: Path | str) -> Path:
    """``<data.root>/reports/audit-<profile>-<checkpoint stem>.png``."""
    return settings.data.root / "reports" / f"audit-{settings.brain.profile}-{Path(model).stem}.png"


def parse_ids(text: str) -> list[int]:
    """``"0,3,5-7"`` → ``[0, 3, 5, 6, 7]`` (sorted, unique).

    Raises:
        GolemError: anything but comma-separated ids and ``a-b`` ranges.
    """
    out: set[int] = set()
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        lo, sep, hi = part.partition("-")
        try:
            a = int(lo)
            b = int(hi) if sep else a
        except ValueError:
            raise GolemError(f"--episodes expects ids like 0,3,5-7, got {text!r}") from None
        if a < 0 or b < a:
            raise GolemError(f"--episodes expects ids like 0,3,5-7, got {text!r}")
        out.update(range(a, b + 1))
    if not out:
        raise GolemError(f"--episodes expects ids like 0,3,5-7, got {text!r}")
    return sorted(out)


def print_report(st, report: AuditReport) -> None:
    chosen = {"validation": "held-out validation", "episodes": "chosen", "module": "module", "all": "all"}
    title = (
        f"Audit on {len(report.episodes)} episode(s) ({chosen.get(report.selection, report.selection)}), "
        f"{report.steps} steps in {report.windows} windows of ≤{report.sequence_length}, state carried"
    )
    caption = f"exact match {report.exact_match:.3f}   threshold {report.threshold:g}   — : undefined (0/0)"
    st.out.print(action_scores(title, report.actions, caption))
    if report.selection == "all":
        st.err.print(
            "[yellow]note: the model names no held-out episodes of this store; these scores include "
            "episodes it may have trained on (choose with --episodes or --module)[/yellow]"
        )
    st.out.print(f"model {report.model}", highlight=False, soft_wrap=True)
    if report.chart:
        st.out.print(f"chart → {report.chart}", highlight=False, soft_wrap=True)
