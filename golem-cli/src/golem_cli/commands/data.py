"""``golem data``: the trajectory store (list, info, verify, import, export, delete)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from golem.data.arrays import array_rules
from golem.data.store import SOURCES, EpisodeInfo, TrajectoryStore
from golem.data.store.npz import ImportOptions
from golem.errors import GolemError
from golem.profiles import PROFILES
from golem.runtime.generated import world_matches
from golem.settings import GolemSettings
from golem_cli.options import JsonOpt, StoreOpt
from golem_cli.state import AppState, state
from golem_cli.tables import human_bytes

app = typer.Typer(help="The trajectory store: list, info, verify, import, export, delete.", no_args_is_help=True)

SourceOpt = Annotated[
    Optional[str], typer.Option("--source", help=f"Only episodes from this source: {', '.join(SOURCES)}.")
]
ScenarioOpt = Annotated[Optional[str], typer.Option("--scenario", help="Only episodes of this scenario.")]
TagOpt = Annotated[Optional[list[str]], typer.Option("--tag", help="Only episodes with this tag. Repeatable.")]
GeneratorFilterOpt = Annotated[
    Optional[str],
    typer.Option("--built-by", help="Only episodes on maps built by this map generator (builtin, oblige, vary, …)."),
]
PhaseFilterOpt = Annotated[
    Optional[int], typer.Option("--phase", help="Only episodes on generated maps of this curriculum phase.")
]
FormatOpt = Annotated[
    str,
    typer.Option("--format", help="Data format: npz (built in), minari (golem-farama), or another a plugin registers."),
]


def _settings(ctx: typer.Context) -> tuple[AppState, GolemSettings]:
    st = state(ctx)
    return st, st.resolve().settings


def _store_path(settings: GolemSettings, store: Path | None) -> Path:
    return store if store is not None else settings.store_path()


@contextmanager
def _open(settings: GolemSettings, store: Path | None, readonly: bool = True) -> Iterator[TrajectoryStore]:
    with TrajectoryStore.open(_store_path(settings, store), readonly=readonly) as opened:
        yield opened


def _check_source(source: str | None) -> None:
    if source is not None and source not in SOURCES:
        raise GolemError(f"--source {source!r} is not one of {', '.join(SOURCES)}")


def _progress(st: AppState, enabled: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=st.err,
        disable=not enabled,
        transient=True,
    )


def _row(info: EpisodeInfo) -> dict[str, object]:
    m = info.meta
    return {
        "id": info.id,
        "source": m.source,
        "scenario": m.scenario,
        "map": m.map,
        "profile": m.profile,
        "length": info.length,
        "return": m.total_return,
        "sensors": m.sensors,
        "tags": m.tags,
        "created": m.created,
        "bytes": info.nbytes,
        "world": m.extra.get("world"),
    }


@app.command("list")
def list_(
    ctx: typer.Context,
    store: StoreOpt = None,
    source: SourceOpt = None,
    scenario: ScenarioOpt = None,
    tag: TagOpt = None,
    generator: GeneratorFilterOpt = None,
    phase: PhaseFilterOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List the episodes in the store (filtered by source, scenario, tags, and the generator and phase of the
    maps they were played on)."""
    st, settings = _settings(ctx)
    _check_source(source)
    with _open(settings, store) as opened:
        infos = [
            i
            for i in opened.episodes(source=source, scenario=scenario, tags=tag)
            if world_matches(i.meta.extra, generator, phase)
        ]
        path = opened.path
    if as_json:
        st.out.print_json(json.dumps({"store": str(path), "episodes": [_row(i) for i in infos]}))
        return
    table = Table(title=f"{len(infos)} episode(s) in {path}")
    corrections = any(i.meta.source == "recovery" for i in infos)
    built = any(isinstance(i.meta.extra.get("world"), dict) for i in infos)
    columns = ("id", "source", "scenario", "profile", "steps", "return", "sensors", "tags", "created")
    for column in columns + (("map",) if built else ()) + (("corrected",) if corrections else ()):
        table.add_column(column, justify="right" if column in ("id", "steps", "return") else "left")
    for info in infos:
        m = info.meta
        row = [
            str(info.id),
            m.source,
            m.scenario + (f" {m.map}" if m.map else ""),
            m.profile,
            str(info.length),
            f"{m.total_return:.2f}",
            ",".join(m.sensors),
            ",".join(m.tags),
            m.created,
        ]
        if built:
            row.append(world_label(m.extra))
        if corrections:
            row.append(corrected(m.extra) if m.source == "recovery" else "")
        table.add_row(*row)
    st.out.print(table)


def world_label(extra: dict[str, object]) -> str:
    """The built map an episode played on: ``builtin p1 #5`` (generator, phase, seed), or nothing."""
    world = extra.get("world")
    if not isinstance(world, dict):
        return ""
    phase = f" p{world['phase']}" if world.get("phase") is not None else ""
    return f"{world.get('generator')}{phase} #{world.get('seed')}"


def corrected(extra: dict[str, object]) -> str:
    """What a recovery episode corrected: the model's hash (first 12 hex digits), the DAgger round and β."""
    sha = str(extra.get("learner_sha256") or extra.get("model_sha256") or "")[:12]
    parts = [f"model {sha}" if sha else "model ?"]
    if extra.get("dagger_round") is not None:
        parts.append(f"round {extra['dagger_round']}, β {float(extra.get('beta', 0)):.2f}")
    return "; ".join(parts)


@app.command("info")
def info(
    ctx: typer.Context,
    episode: Annotated[Optional[int], typer.Argument(help="An episode id; without it, the whole store.")] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show the store's totals, or one episode's metadata and arrays."""
    st, settings = _settings(ctx)
    with _open(settings, store) as opened:
        if episode is None:
            stats = opened.stats()
            if as_json:
                st.out.print_json(json.dumps(stats.to_dict()))
                return
            table = Table(title=f"trajectory store {stats.path}", show_header=False)
            table.add_column("key", style="bold")
            table.add_column("value")
            table.add_row("schema", f"v{stats.schema_version}")
            table.add_row("chunk steps", str(stats.chunk_steps))
            table.add_row("episodes", str(stats.episodes))
            table.add_row("steps", str(stats.steps))
            table.add_row("array bytes", human_bytes(stats.bytes))
            table.add_row("file bytes", human_bytes(stats.file_bytes))
            table.add_row("by source", ", ".join(f"{k}={v}" for k, v in sorted(stats.by_source.items())) or "-")
            st.out.print(table)
            return
        found = opened.get(episode)
    if as_json:
        st.out.print_json(json.dumps({k: v for k, v in found.to_dict().items() if k != "checksums"}))
        return
    table = Table(title=f"episode {found.id}", show_header=False)
    table.add_column("key", style="bold")
    table.add_column("value", overflow="fold")
    for key, value in found.meta.to_dict().items():
        table.add_row(key, json.dumps(value))
    st.out.print(table)
    arrays = Table(title="arrays")
    for column in ("name", "dtype", "shape", "bytes"):
        arrays.add_column(column)
    for name, spec in found.arrays.items():
        shape = [found.length, *spec.step_shape]
        arrays.add_row(name, spec.dtype, str(shape), human_bytes(found.length * spec.step_bytes))
    st.out.print(arrays)


@app.command("verify")
def verify(
    ctx: typer.Context,
    store: StoreOpt = None,
    checksums: Annotated[bool, typer.Option("--checksums/--no-checksums", help="Check CRC-32 of every chunk.")] = True,
    as_json: JsonOpt = False,
) -> None:
    """Check every episode's chunks (present, right size, checksum); exit 1 when anything is wrong."""
    st, settings = _settings(ctx)
    with _open(settings, store) as opened:
        report = opened.verify(checksums=checksums)
        path = opened.path
    if as_json:
        st.out.print_json(json.dumps({"store": str(path), **report.to_dict()}))
    else:
        if report.ok:
            st.out.print(
                f"[green]ok[/green] {path}: {report.episodes_checked} episode(s), {report.chunks_checked} chunk(s)"
            )
        else:
            table = Table(title=f"problems in {path}")
            table.add_column("episode", justify="right")
            table.add_column("problem", overflow="fold")
            for episode_id, problems in sorted(report.problems.items()):
                for problem in problems:
                    table.add_row(str(episode_id), problem)
            for problem in report.store_problems:
                table.add_row("-", problem)
            st.out.print(table)
    if not report.ok:
        raise typer.Exit(1)


def _format(st: AppState, name: str) -> Any:
    """The data format ``name`` from the registry (``register_data_formats``); unknown: one line with the known."""
    return st.host.registry.get("data_formats", name).obj


@app.command("import")
def import_(
    ctx: typer.Context,
    paths: Annotated[
        list[Path],
        typer.Argument(
            help=".npz files or folders holding them; with --format minari, dataset ids (found in "
            "$MINARI_DATASETS_PATH, else ~/.minari/datasets) or dataset folders."
        ),
    ],
    store: StoreOpt = None,
    source: Annotated[str, typer.Option("--source", help=f"Source of the episodes: {', '.join(SOURCES)}.")] = "human",
    tag: Annotated[Optional[list[str]], typer.Option("--tag", help="Tag every imported episode. Repeatable.")] = None,
    chunk_steps: Annotated[int, typer.Option("--chunk-steps", help="Steps per chunk when creating the store.")] = 64,
    fmt: FormatOpt = "npz",
    as_json: JsonOpt = False,
) -> None:
    """Import seed-layout .npz recordings (files named *recovery* become recovery episodes), or Minari datasets.

    Every file is checked before anything is written, so a bad file leaves the store unchanged.
    Each array becomes what its sensor records with these settings: images are resized, and
    audio is resampled to brain.dsp.sample_rate in 4-tic windows (files that do not record
    their rate are taken to be at brain.dsp.legacy_sample_rate, 44100 Hz as the seeds recorded).
    A Minari dataset's episodes keep the metadata Golem exported with them (docs/formats.md).
    """
    st, settings = _settings(ctx)
    _check_source(source)
    data_format = _format(st, fmt)
    profile = settings.brain.profile
    options = ImportOptions(
        profile=profile,
        action_names=PROFILES[profile],
        sensors=tuple(settings.brain.sensors),
        scenario=settings.game.scenario,
        map=settings.game.doom_map,
        seed=settings.game.seed,
        source=source,
        tags=tuple(tag or ()),
        settings=settings,
    )
    rules = array_rules(st.host.registry)
    sources = data_format.sources(paths)
    show = len(sources) > 1 and not as_json
    with _progress(st, show) as progress:
        task = progress.add_task("checking", total=len(sources))
        for _, found in sources:
            data_format.check(found, options, rules)
            progress.advance(task)
    target = _store_path(settings, store)
    imported: list[dict[str, object]] = []
    with TrajectoryStore.open_or_create(target, chunk_steps=chunk_steps) as opened, _progress(st, show) as progress:
        task = progress.add_task("importing", total=len(sources))
        for name, found in sources:
            for episode_id in data_format.write(opened, found, options, rules):
                info = opened.get(episode_id)
                imported.append(
                    {data_format.label: name, "id": episode_id, "steps": info.length, "source": info.meta.source}
                )
            progress.advance(task)
    if as_json:
        st.out.print_json(json.dumps({"store": str(target), "imported": imported}))
        return
    steps = sum(int(row["steps"]) for row in imported)  # type: ignore[call-overload]
    st.out.print(f"imported {len(imported)} episode(s), {steps} steps into {target}")


@app.command("export")
def export(
    ctx: typer.Context,
    out_dir: Annotated[
        Path,
        typer.Argument(
            help="Folder to write episode-NNNNNN.npz files into; with --format minari, the dataset id "
            "(namespace/name-vN, e.g. golem/basic/expert-v0)."
        ),
    ],
    episode: Annotated[Optional[list[int]], typer.Option("--episode", "-e", help="Episode id. Repeatable.")] = None,
    store: StoreOpt = None,
    source: SourceOpt = None,
    scenario: ScenarioOpt = None,
    tag: TagOpt = None,
    fmt: FormatOpt = "npz",
    out: Annotated[
        Optional[Path],
        typer.Option(
            "--out",
            help="With --format minari: the datasets folder (default $MINARI_DATASETS_PATH, else ~/.minari/datasets).",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Export episodes as .npz in the stored layout (re-importable bit for bit), or as a Minari dataset; default all."""
    st, settings = _settings(ctx)
    _check_source(source)
    data_format = _format(st, fmt)
    if out is not None and not data_format.takes_out:
        raise GolemError(f"--out is not for --format {fmt}: it writes into the folder given as the argument")
    with _open(settings, store) as opened:
        if episode:
            infos = [opened.get(i) for i in episode]
        else:
            infos = opened.episodes(source=source, scenario=scenario, tags=tag)
        if not infos:
            raise GolemError(f"no episodes to export from {opened.path}")
        with _progress(st, len(infos) > 1 and not as_json) as progress:
            task = progress.add_task("exporting", total=len(infos))
            report, line = data_format.export(
                opened, infos, out_dir, array_rules(st.host.registry), out=out, advance=lambda: progress.advance(task)
            )
    if as_json:
        st.out.print_json(json.dumps(report))
        return
    st.out.print(line, highlight=False, soft_wrap=True)


@app.command("delete")
def delete(
    ctx: typer.Context,
    episodes: Annotated[list[int], typer.Argument(help="Episode ids to delete.")],
    store: StoreOpt = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Delete episodes (asks first unless --yes)."""
    st, settings = _settings(ctx)
    with _open(settings, store, readonly=False) as opened:
        missing = [i for i in episodes if not opened.has(i)]  # an unreadable record can still be deleted
        if missing:
            raise GolemError(f"no episode {', '.join(map(str, missing))} in {opened.path}")
        if not yes and not typer.confirm(f"Delete {len(episodes)} episode(s) from {opened.path}?", err=True):
            raise GolemError("not deleted", exit_code=1)
        deleted = opened.delete(episodes)
    if as_json:
        st.out.print_json(json.dumps({"deleted": deleted}))
        return
    st.out.print(f"deleted {len(deleted)} episode(s): {', '.join(map(str, deleted))}")
