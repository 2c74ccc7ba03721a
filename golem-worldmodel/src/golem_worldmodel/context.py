"""What every ``golem dream`` stage needs: the run's settings, files, preset and consoles (:class:`Context`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from golem.atomic import atomic_write
from golem.errors import GolemError
from golem.settings import GolemSettings
from golem_worldmodel.paths import RunPaths
from golem_worldmodel.presets import Preset, preset_from_settings


class Context:
    """What every stage needs: settings, run paths, the preset, consoles."""

    def __init__(
        self,
        ctx: typer.Context,
        run: Path | None,
        preset: str | None,
        scenario: str,
        set_: list[str] | None,
        threads: int | None = None,
        *,
        creates: bool = False,
        check: Callable[[RunPaths], None] | None = None,
        **overrides: Any,
    ) -> None:
        """``threads``: torch's CPU threads (``None``: ``OMP_NUM_THREADS``, else every core; :mod:`golem.threads`).
        ``creates``: this stage may start a new run folder (``collect``, ``train-vae``, ``iterate``); the
        others read an existing one, so a missing run changes nothing on disk before their one-line error.
        ``check(paths)``: validates the run's own files before anything is written (raises ``GolemError``)."""
        from golem.threads import set_threads

        set_threads(1, threads)  # the stages run one after another: alone, this process may use every core
        root = ctx.find_root().obj
        self.err: Console = getattr(root, "err", Console(stderr=True))
        self.out: Console = getattr(root, "out", Console())
        self.registry = root.host.registry
        self.settings: GolemSettings = root.resolve(set_=set_, flags={"game.scenario": scenario}).settings
        self.scenario = scenario
        self.paths = RunPaths(run if run is not None else self.settings.data.root / "dream" / scenario)
        if self.paths.root.exists() and not self.paths.root.is_dir():
            raise GolemError(f"--run {self.paths.root} is a file, not a run folder")
        self.preset = preset_from_settings(self.settings, preset, self._stored(preset), **overrides)
        if check is not None:  # before anything is written
            check(self.paths)
        if creates or self.paths.root.is_dir():
            self._save_preset()

    def _stored(self, name: str | None) -> Preset | None:
        """The preset this run folder was started with, if any (a different ``--preset`` is an error)."""
        saved = self.paths.root / "preset.json"
        if not saved.is_file():
            return None
        stored = Preset.from_dict(json.loads(saved.read_text()))
        if name is not None and name != stored.name:
            raise GolemError(
                f"run {self.paths.root} uses preset {stored.name!r}, not {name!r}; use another --run folder"
            )
        return stored

    def _save_preset(self) -> None:
        """A new run folder records its preset (with the settings' overrides, not a command's own options)."""
        saved = self.paths.root / "preset.json"
        if saved.is_file():
            return
        base = preset_from_settings(self.settings, self.preset.name)
        try:
            self.paths.root.mkdir(parents=True, exist_ok=True)
            with atomic_write(saved) as fh:
                fh.write(json.dumps(base.to_dict(), indent=2).encode())
        except OSError as exc:
            raise GolemError(f"cannot write the run folder {self.paths.root}: {exc.strerror or exc}") from None

    def progress(self, what: str) -> Progress:
        return Progress(
            TextColumn(f"[bold]{what}[/bold] {{task.description}}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[info]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=self.err,
        )

    def require(self, path: Path, stage: str) -> None:
        if not path.is_file():
            raise GolemError(f"{path} does not exist; run `golem dream {stage} --run {self.paths.root}` first")


def fmt(metrics: dict[str, float]) -> str:
    """``loss 0.123  kl 4.56``: metrics for a progress line."""
    return "  ".join(f"{k} {v:.4g}" for k, v in metrics.items())


def epoch_hooks(progress: Progress, total_epochs: int) -> tuple[Any, Any]:
    """``(on_epoch_start, on_batch)`` callbacks of the training loops, drawing one bar per epoch."""
    task = progress.add_task("", total=1, info="")

    def start(epoch: int, n_batches: int) -> None:
        progress.reset(task, total=n_batches, description=f"epoch {epoch + 1}/{total_epochs}", info="")

    def batch(done: int, total: int, metrics: dict[str, float]) -> None:
        progress.update(task, completed=done, info=fmt(metrics))

    return start, batch
