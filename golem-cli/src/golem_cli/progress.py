"""Progress for people: rich bars on a terminal, periodic plain lines where output is a file or a pipe.

Long commands (training, recording, evaluation) report progress through
callbacks; this module renders them. When the console is not a terminal (CI
logs, ``nohup``, ``| tee``), rich would draw nothing until the end, so a plain
line is printed at most every :data:`PLAIN_INTERVAL_S` seconds, and always
at the end of an epoch.
"""

from __future__ import annotations

import time
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from golem.learning.training import BatchProgress, EpochRecord

#: Seconds between plain progress lines when the console is not a terminal.
PLAIN_INTERVAL_S = 10.0


def epoch_summary(record: EpochRecord) -> str:
    """``train loss 0.1234  val loss 0.2345  exact 0.876``."""
    text = f"train loss {record.train_loss:.4f}"
    if record.validation is not None:
        text += f"  val loss {record.validation.loss:.4f}  exact {record.validation.exact_match:.3f}"
    return text


class TrainingView:
    """Renders :func:`golem.learning.training.train`'s ``on_batch``/``on_epoch`` callbacks on ``console``.

    Use as a context manager around the call; ``console=None`` shows nothing.
    """

    def __init__(self, console: Console | None, epochs: int) -> None:
        self.console, self.epochs = console, epochs
        self.plain = console is not None and not console.is_terminal
        self._last_line = 0.0
        self._progress = Progress(
            TextColumn("[bold]{task.description}[/bold]"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[info]}"),
            TimeElapsedColumn(),
            console=console,
            disable=console is None or self.plain,
        )
        self._epochs_task = self._progress.add_task("epochs", total=epochs, info="")
        self._batches_task = self._progress.add_task("batches", total=None, info="")
        self._epoch: int | None = None

    def __enter__(self) -> TrainingView:
        self._progress.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._progress.__exit__(kind, exc, tb)

    def on_batch(self, p: BatchProgress) -> None:
        info = f"loss {p.mean_loss:.4f}  {p.frames_per_s:.0f} frames/s"
        if p.epoch != self._epoch:
            if self._epoch is None:  # the run's plan: training.updates may need more or fewer epochs
                self._progress.update(self._epochs_task, total=p.epochs - p.epoch)
            self._epoch = p.epoch
            self._progress.reset(self._batches_task, total=p.batches, description=f"epoch {p.epoch + 1}", info="")
        self._progress.update(self._batches_task, completed=p.batch, info=info)
        now = time.monotonic()
        if self.plain and now - self._last_line >= PLAIN_INTERVAL_S:
            self._last_line = now
            of = f"/{p.batches}" if p.batches else ""
            self.console.print(f"epoch {p.epoch + 1}/{p.epochs}  batch {p.batch}{of}  {info}", highlight=False)

    def on_epoch(self, record: EpochRecord) -> None:
        summary = epoch_summary(record)
        self._progress.update(self._epochs_task, advance=1, info=summary)
        if self.plain:
            self._last_line = time.monotonic()
            self.console.print(f"epoch {record.epoch + 1} done: {summary}  ({record.seconds:.0f} s)", highlight=False)


class LineProgress(Progress):
    """A rich :class:`~rich.progress.Progress` that, off a terminal, prints plain lines instead of a bar.

    A line per task at most every :data:`PLAIN_INTERVAL_S` seconds while it
    advances, and one when the ``with`` block ends without an error:
    ``recording basic on basic: 3/10, fps 812, mean 85.4``. On a terminal it is the ordinary bar.
    """

    def __init__(self, *columns: Any, console: Console, **kwargs: Any) -> None:
        self.plain = not console.is_terminal
        super().__init__(*columns, console=console, **{**kwargs, "disable": kwargs.get("disable", False) or self.plain})
        self._printed: dict[TaskID, float] = {}

    def _line(self, task_id: TaskID) -> str:
        task = self._tasks[task_id]
        done = f"{task.completed:.0f}/{task.total:.0f}" if task.total is not None else f"{task.completed:.0f}"
        fields = ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in task.fields.items())
        return f"{task.description}: {done}" + (f", {fields}" if fields else "")

    def _maybe_print(self, task_id: TaskID) -> None:
        if not self.plain:
            return
        now = time.monotonic()
        if now - self._printed.get(task_id, 0.0) >= PLAIN_INTERVAL_S:
            self._printed[task_id] = now
            self.console.print(self._line(task_id), highlight=False, soft_wrap=True)

    def update(self, task_id: TaskID, **kwargs: Any) -> None:  # type: ignore[override]
        super().update(task_id, **kwargs)
        self._maybe_print(task_id)

    def advance(self, task_id: TaskID, advance: float = 1) -> None:
        super().advance(task_id, advance)
        self._maybe_print(task_id)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        super().__exit__(kind, exc, tb)
        if self.plain and kind is None:  # after an error its one line is all a person needs
            for task_id in list(self._tasks):
                self.console.print(self._line(task_id), highlight=False, soft_wrap=True)


def task_bar(console: Console, title: str, *columns: Any, **kwargs: Any) -> LineProgress:
    """The commands' progress bar: ``title`` (rich markup, may name task fields), a bar, done/total,
    ``columns`` (text or rich columns), the elapsed time; ``kwargs`` go to :class:`LineProgress`."""
    return LineProgress(
        TextColumn(title), BarColumn(), MofNCompleteColumn(), *columns, TimeElapsedColumn(), console=console, **kwargs
    )
