"""``golem run tune``: press thresholds tuned by play in the real engine, saved as a new active model."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.table import Table

from golem.diagnostics.evaluation import EVAL_START_SEED
from golem.errors import GolemError
from golem.learning.archives import save_retuned
from golem.runtime.agent import samples_buttons
from golem.scenarios import resolve_scenario
from golem.settings import ResolvedSettings
from golem.workflows.tuning import GRID, TUNE_START_SEED, Trial, TunePlan, TuneResult, pressed_actions, tune_thresholds
from golem_cli.options import (
    JsonOpt,
    MaxStepsOpt,
    ModelScenarioOpt,
    PluginOpt,
    SetOpt,
    WorkersOpt,
    check_suffixes,
    checkpoint_option,
    episodes_option,
    game_flags,
    seed_option,
)
from golem_cli.player import resolve_player
from golem_cli.progress import task_bar
from golem_cli.state import state


def _grid(text: str | None) -> tuple[float, ...]:
    if text is None:
        return GRID
    try:
        return tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise typer.BadParameter(
            f"{text!r}: give comma-separated numbers, e.g. 0.3,0.4,0.5", param_hint="--grid"
        ) from None


def tune_table(result: TuneResult) -> Table:
    """The start and best thresholds of the searched buttons, with the mean return each scored."""
    plan = result.plan
    table = Table(
        title=(
            f"{plan.scenario}: {len(result.trials)} candidate(s) × {plan.episodes} episode(s), seeds {plan.start_seed}…"
        ),
        show_edge=False,
    )
    table.add_column("")
    for name in plan.tune:
        table.add_column(name, justify="right")
    table.add_column("mean return", justify="right")
    index = {name: i for i, name in enumerate(plan.actions)}
    confirmation = result.confirmation
    if confirmation is not None:
        table.add_column(f"seeds {confirmation.seeds[0]}–{confirmation.seeds[1]}", justify="right")
    for label, trial, again in (
        ("start", result.start, confirmation and confirmation.start),
        ("tuned", result.best, confirmation and confirmation.best),
    ):
        table.add_row(
            label,
            *(f"{trial.thresholds[index[n]]:.2f}" for n in plan.tune),
            f"{trial.mean:.2f} ± {trial.std:.2f}",
            *([] if confirmation is None else [f"{again:.2f}"]),
        )
    return table


def verdict(result: TuneResult, hint: str = "more --episodes per candidate, or --confirm 0 to keep it anyway") -> str:
    """One line: whether the tuned thresholds were kept, and on what evidence (``hint``: what to try when refuted)."""
    c = result.confirmation
    if result.best is result.start:
        return "no candidate beat the start: the thresholds are unchanged and nothing was written"
    if c is None:
        return "kept without confirmation (--confirm 0)"
    gain = f"{c.gain:+.2f} ± {c.se:.2f} a seed on seeds {c.seeds[0]}–{c.seeds[1]}"
    if c.confirmed:
        return f"confirmed: {gain}"
    why = "no gain there" if c.gain <= 0 else f"within {result.plan.margin:g} standard error(s) of no gain"
    return f"not confirmed: {gain}, {why} — the search picked luck; nothing was written ({hint})"


def tune_summary(result: TuneResult, archive: Path | None, active: Path | None) -> dict[str, Any]:
    """JSON-ready summary of a search: its record, the best thresholds found, the thresholds the model now plays
    with (``plays``: the best when accepted, else the start) and where they were saved (``None``: not)."""
    plays = result.best if result.accepted else result.start
    return {
        **result.record(),
        "best": result.thresholds(),
        "plays": dict(zip(result.plan.actions, plays.thresholds, strict=True)),
        "archive": None if archive is None else str(archive),
        "active": None if active is None else str(active),
    }


def tune_model(
    st: Any,
    resolved: ResolvedSettings,
    model: Path | None,
    *,
    episodes: int = 30,
    workers: int = 1,
    seed: int = TUNE_START_SEED,
    max_steps: int | None = None,
    actions: tuple[str, ...] | None = None,
    grid: tuple[float, ...] = GRID,
    sweeps: int = 2,
    confirm: int = 30,
    on_progress: Callable[[int, int, str], None] | None = None,
) -> tuple[TuneResult, Path | None, Path | None]:
    """Tune a checkpoint's press thresholds by play with a progress bar; save them when the search is accepted.

    Shared by ``golem run tune``, ``golem run train`` (where ``training.tune_episodes`` asks for it) and
    ``golem zoo``. ``on_progress(candidates done, most candidates, what)`` replaces the bar (a caller's own
    display).

    Returns:
        ``(result, archive, active)``; the paths are ``None`` when nothing was written
        (no candidate beat the start, or the confirmation seeds refuted it).
    """
    registry = st.host.registry
    path, metadata, scenario_name, threshold, settings = resolve_player(resolved, model, registry)
    resolve_scenario(scenario_name, settings.game.doom_map)
    names = tuple((metadata.get("spec") or {}).get("action_names") or ())
    if not names:
        raise GolemError(f"checkpoint {path} names no actions; it cannot be tuned")
    if samples_buttons(metadata):
        raise GolemError(
            f"checkpoint {path} draws its buttons from their probabilities in play (decisions = sample): it has "
            "no press thresholds to tune"
        )
    start = [float(threshold)] * len(names) if isinstance(threshold, (int, float)) else [float(v) for v in threshold]
    tune = actions or pressed_actions(metadata, names)
    plan = TunePlan(
        model_path=path,
        scenario=scenario_name,
        actions=names,
        start=tuple(start),
        tune=tune,
        episodes=episodes,
        workers=workers,
        start_seed=seed,
        max_steps=max_steps,
        frame_skip=int(settings.game.frame_skip),
        grid=grid,
        sweeps=sweeps,
        confirm=confirm,
    )
    progress = task_bar(
        st.err,
        "[bold]tuning[/bold] {task.fields[what]}",
        "best {task.fields[best]}",
        transient=True,
        disable=on_progress is not None,
    )
    with progress:
        shown = {"what": f"{', '.join(tune)} on {scenario_name}", "best": "–"}
        task = progress.add_task("tune", total=plan.most_candidates, **shown)
        best, done = [float("-inf")], [0]  # the highest mean so far and the candidates played, for the bar

        def show(**fields: str) -> None:
            shown.update(fields)
            progress.update(task, completed=done[0], **fields)
            if on_progress is not None:
                on_progress(done[0], plan.most_candidates, f"{shown['what']}, best {shown['best']}")

        def on_trial(trial: Trial) -> None:
            best[0] = max(best[0], trial.mean)
            done[0] += 1
            show(best=f"{best[0]:.2f}")

        def on_confirm(seeds: tuple[int, int]) -> None:
            show(what=f"confirming on seeds {seeds[0]}–{seeds[1]}")

        result = tune_thresholds(settings, registry, plan, on_trial=on_trial, on_confirm=on_confirm)
    if not result.accepted:
        return result, None, None
    archive, active = save_retuned(settings, path, result.thresholds(), result.record())
    return result, archive, active


def tune_command(
    ctx: typer.Context,
    model: Annotated[Optional[Path], checkpoint_option("to tune")] = None,
    scenario: ModelScenarioOpt = None,
    episodes: Annotated[int, episodes_option("Episodes per candidate (the same seeds for every one).")] = 30,
    workers: WorkersOpt = 1,
    seed: Annotated[
        int, seed_option("Seed of the first episode (away from training's 0… and evaluation's 10000…).")
    ] = TUNE_START_SEED,
    max_steps: MaxStepsOpt = None,
    actions: Annotated[
        Optional[str],
        typer.Option(
            "--actions", help="Comma-separated buttons to tune (default: those the validation episodes pressed)."
        ),
    ] = None,
    grid: Annotated[
        Optional[str], typer.Option("--grid", help="Comma-separated thresholds to try (default: 0.20, 0.25, … 0.60).")
    ] = None,
    sweeps: Annotated[
        int, typer.Option("--sweeps", min=1, max=10, help="Passes over the buttons (stops when one changes nothing).")
    ] = 2,
    confirm: Annotated[
        int,
        typer.Option(
            "--confirm",
            min=0,
            help=(
                "Episodes on fresh seeds after the tuning ones where start and best play again; the tuned thresholds "
                "are kept only if they gain there by more than a standard error (0: keep the best unconfirmed)."
            ),
        ),
    ] = 30,
    out: Annotated[
        Optional[Path],
        typer.Option("--out", "-o", help="Write every candidate and its score to this .json.", metavar="PATH"),
    ] = None,
    json_: JsonOpt = False,
    plugin: PluginOpt = None,
    set_: SetOpt = None,
) -> None:
    """Tune the model's press thresholds by play: each button in turn over a grid, scored by mean return.

    Training picks each threshold for the best F1 on the expert's validation
    episodes; in play the model meets its own states. This plays every candidate
    on the same --episodes seeds (from --seed, unseen by training and by
    `golem run evaluate`) and keeps a change only when the mean return rises.
    The best of many candidates is partly the luckiest, so the start and the
    best then play --confirm fresh seeds; only a gain there beyond one
    standard error is kept. The tuned thresholds go into a new archive and the profile's active model
    (the weights are unchanged; training's archive keeps the old thresholds, and
    `golem models activate` goes back), so play, evaluate and match use them. Judge the result with \
`golem run evaluate`.
    """
    st = state(ctx)
    check_suffixes([out] if out is not None else None, (".json",), "--out")
    last = seed + episodes + confirm - 1
    if seed < EVAL_START_SEED + 100 and last >= EVAL_START_SEED:  # evaluate's seeds 10000–10099
        st.err.print(
            f"[yellow]warning:[/yellow] seeds {seed}–{last} overlap evaluate's default seeds "
            f"from {EVAL_START_SEED}: judge the tuned model on others",
            highlight=False,
            soft_wrap=True,
        )
    resolved = st.resolve(plugin=plugin, set_=set_, flags=game_flags(scenario))
    result, archive, active = tune_model(
        st,
        resolved,
        model,
        episodes=episodes,
        workers=workers,
        seed=seed,
        max_steps=max_steps,
        actions=tuple(a.strip() for a in actions.split(",") if a.strip()) if actions else None,
        grid=_grid(grid),
        sweeps=sweeps,
        confirm=confirm,
    )
    if out is not None:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(result.to_json(), indent=2) + "\n")
        except OSError as exc:
            raise GolemError(f"cannot write {out}: {exc.strerror or exc}") from None
    summary = tune_summary(result, archive, active)
    if json_:
        st.out.print_json(json.dumps(summary))
        return
    st.out.print(tune_table(result))
    st.out.print(verdict(result), highlight=False, soft_wrap=True)
    if archive is not None:
        st.out.print(f"tuned thresholds → {archive} (and {active})", highlight=False, soft_wrap=True)
