"""``golem zoo SCENARIO``: one scoreboard row — record the expert, train, (tune), evaluate — resumable."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from golem.atomic import atomic_write
from golem.errors import GolemError
from golem_cli.options import PluginOpt, SetOpt, check_suffixes, workers_option
from golem_cli.progress import PLAIN_INTERVAL_S
from golem_cli.state import state
from golem_cli.zoo import (
    DEFAULT_EVAL_EPISODES,
    EVAL_EPISODES,
    ROW_COLUMNS,
    STAGES,
    STATE_FILE,
    Row,
    ZooPlan,
    board_name,
    row_cells,
    row_key,
)


class StageLines:
    """A line per stage in one progress display; implements :class:`~golem_cli.zoo.StageView`.

    Off a terminal each stage prints a line when it starts and ends, and one every
    :data:`~golem_cli.progress.PLAIN_INTERVAL_S` seconds while it advances.
    """

    def __init__(self, console: Console) -> None:
        self.console = console
        self.plain = not console.is_terminal
        self.progress = Progress(
            TextColumn("[bold]{task.description:<8}[/bold]"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[info]}"),
            TimeElapsedColumn(),
            console=console,
            disable=self.plain,
        )
        self.tasks = {stage: self.progress.add_task(stage, total=None, info="waiting", start=False) for stage in STAGES}
        self._printed = 0.0

    def __enter__(self) -> StageLines:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.__exit__(*exc)

    def _line(self, stage: str, text: str) -> None:
        if self.plain:
            self._printed = time.monotonic()
            self.console.print(f"{stage}: {text}", highlight=False, soft_wrap=True)

    def begin(self, stage: str, total: int | None, info: str) -> None:
        self.progress.start_task(self.tasks[stage])
        self.progress.update(self.tasks[stage], total=total, completed=0, info=info)
        self._line(stage, info)

    def update(self, stage: str, completed: int, total: int | None, info: str) -> None:
        self.progress.update(self.tasks[stage], completed=completed, total=total, info=info)
        if time.monotonic() - self._printed >= PLAIN_INTERVAL_S:
            self._line(stage, f"{completed}" + (f"/{total}" if total else "") + f", {info}")

    def finish(self, stage: str, info: str, skipped: bool = False) -> None:
        task = self.tasks[stage]
        if skipped and "not asked" not in info:
            info += " (skipped: done before)"
        self.progress.start_task(task)
        total = self.progress._tasks[task].total or 1
        self.progress.update(task, total=total, completed=total, info=f"[dim]{info}[/dim]" if skipped else info)
        self.progress.stop_task(task)
        self._line(stage, info)


def row_table(row: dict[str, Any]) -> Table:
    """The row as the README's scoreboard shows it, one column of the board a line."""
    table = Table(title=f"golem zoo: {row_key(row)}", show_edge=False, show_header=False)
    table.add_column("column", style="bold")
    table.add_column("value")
    names = list(ROW_COLUMNS)
    names[7:10] = [f"{policy} ({row['measure']['label']})" for policy in ("model", "random", "expert")]
    for name, cell in zip(names, row_cells(row), strict=True):
        table.add_row(name, cell)
    return table


def zoo_command(
    ctx: typer.Context,
    scenario: Annotated[str, typer.Argument(help="A scenario with a scripted expert (basic, defend_the_center, …).")],
    model: Annotated[
        str,
        typer.Option(
            "--model", "-m", help="Model component to train (brain.model; see `golem plugins list`).", metavar="NAME"
        ),
    ] = "cfc",
    episodes: Annotated[
        Optional[int],
        typer.Option(
            "--episodes",
            "-n",
            min=1,
            help="Expert episodes to record (default: the scenario spec's, as `golem run record` records).",
        ),
    ] = None,
    eval_episodes: Annotated[
        Optional[int],
        typer.Option(
            "--eval-episodes",
            min=1,
            help=f"Evaluation episodes per policy (default: {DEFAULT_EVAL_EPISODES}; "
            + ", ".join(f"{n} on {s}" for s, n in EVAL_EPISODES.items())
            + ").",
        ),
    ] = None,
    workers: Annotated[int, workers_option()] = 2,
    tune: Annotated[
        bool,
        typer.Option(
            "--tune",
            help=(
                "Tune the press thresholds by play (`golem run tune`) between training and evaluation; "
                "the row is MODEL+tuned."
            ),
        ),
    ] = False,
    folder: Annotated[
        Optional[Path],
        typer.Option(
            "--dir",
            help=(
                "Work folder: store, checkpoints and the state that lets a re-run skip finished stages "
                "(default: ./golem-zoo/SCENARIO-MODEL)."
            ),
            metavar="PATH",
        ),
    ] = None,
    out: Annotated[
        Optional[Path],
        typer.Option("--json", help="Write the row, as in bench/results/zoo.json, to this file.", metavar="PATH"),
    ] = None,
    plugin: PluginOpt = None,
    set_: SetOpt = None,
) -> None:
    """One scoreboard row, as a new user gets it: record the expert, train, (tune), evaluate; resumable.

    Records the scenario spec's expert episodes, trains with default settings, optionally tunes the press
    thresholds by play, then evaluates against the random policy and the expert on unseen seeds.

    --set applies to training (the row's settings), --plugin to every stage (an extra sensor is recorded
    and read). Ctrl-C or a crash loses little: run the same command again and it skips the finished stages
    (recording continues from the stored episodes).
    """
    st = state(ctx)
    registry = st.host.registry
    sensors = [name for name in (plugin or []) if name in registry.names("sensors")]  # extra sensors name the row
    name = board_name(model, sensors, tune)
    plan = ZooPlan(
        scenario=scenario,
        folder=folder or Path("golem-zoo") / f"{scenario}-{name}",
        model=model,
        episodes=episodes,
        eval_episodes=eval_episodes,
        workers=workers,
        sets=tuple(set_ or []),
        plugins=tuple(plugin or []),
        tune=tune,
    )
    check_suffixes([out] if out is not None else None, (".json",), "--json")
    lines = StageLines(st.err)
    runner = Row(st, plan, lines)  # the checks that need no engine fail before the display starts
    with lines:
        try:
            row = runner.run()
        except KeyboardInterrupt:
            lines.progress.stop()
            st.err.print(
                f"[yellow]interrupted: finished stages are kept in {plan.folder / STATE_FILE}; "
                "run the same command again to continue[/yellow]",
                highlight=False,
                soft_wrap=True,
            )
            raise typer.Exit(130) from None
    st.out.print(row_table(row))
    if out is not None:
        try:
            with atomic_write(out) as fh:
                fh.write((json.dumps(row, indent=2) + "\n").encode())
        except OSError as exc:
            raise GolemError(f"cannot write {out}: {exc.strerror or exc}") from None
        st.out.print(f"row → {out}", highlight=False, soft_wrap=True)
    st.out.print(f"work folder → {plan.folder}", highlight=False, soft_wrap=True)
