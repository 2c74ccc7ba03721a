"""``golem run train``: behavioural cloning on the recorded demonstrations."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import replace
from typing import Annotated, Any, Optional

import typer

from golem.data.store import TrajectoryStore
from golem.errors import GolemError
from golem.learning.device import select_device
from golem.learning.distributed import (
    Ranks,
    backend_for,
    check_divisible,
    close_group,
    init_from_environment,
    spawn_ranks,
)
from golem.learning.training import TrainPlan, TrainResult, train, train_rank
from golem.learning.training_data import generated_sensors
from golem.settings import ResolvedSettings
from golem_cli.commands.tune import tune_model, tune_summary, tune_table, verdict
from golem_cli.options import (
    DeviceOpt,
    JsonOpt,
    PluginOpt,
    SetOpt,
    StoreOpt,
    module_option,
    seed_option,
    store_path,
)
from golem_cli.progress import TrainingView
from golem_cli.state import state
from golem_cli.tables import action_scores


def train_command(
    ctx: typer.Context,
    module: Annotated[Optional[str], module_option("Train on")] = None,
    include_recovery: Annotated[
        bool,
        typer.Option(
            "--include-recovery", help="Also train on recovery episodes (training.recovery_ratio of the streams)."
        ),
    ] = False,
    epochs: Annotated[Optional[int], typer.Option("--epochs", "-e", min=1, help="Epochs (training.epochs).")] = None,
    updates: Annotated[
        Optional[int],
        typer.Option(
            "--updates", "-u", min=1, help="Train for this many optimiser steps instead of epochs (training.updates)."
        ),
    ] = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="Fine-tune the profile's active model instead of starting afresh.")
    ] = False,
    tensorboard: Annotated[
        Optional[bool],
        typer.Option(
            "--tensorboard/--no-tensorboard",
            help="TensorBoard event files under data.root/runs (training.tensorboard).",
        ),
    ] = None,
    seed: Annotated[Optional[int], seed_option("Seed of weights, split and sampler (training.seed).")] = None,
    nproc: Annotated[
        int,
        typer.Option(
            "--nproc",
            min=1,
            max=64,
            help=(
                "Data-parallel processes on this machine (torch.distributed DDP: gloo on CPU, NCCL on CUDA); "
                "each trains on batch_size / N of the streams."
            ),
        ),
    ] = 1,
    device: DeviceOpt = None,
    store: StoreOpt = None,
    plugin: PluginOpt = None,
    set_: SetOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Train the model on the store. Ctrl-C saves the current weights and stops."""
    st = state(ctx)
    flags = {
        "training.epochs": epochs,
        "training.updates": updates,
        "training.seed": seed,
        "training.device": device,
        "training.tensorboard": tensorboard,
    }
    resolved = st.resolve(plugin=plugin, set_=set_, flags=flags)
    settings = resolved.settings
    plan = TrainPlan(
        module=module, include_recovery=include_recovery, resume=resume, store=store, given=frozenset(resolved.sources)
    )
    settings, plan = _generated_sensors(st, settings, plan, quiet=as_json or os.environ.get("RANK", "0") != "0")
    timeout = settings.training.peer_timeout
    check_divisible(settings.training.batch_size, Ranks(0, nproc))  # before any process starts
    with ExitStack() as stack:
        if nproc > 1:
            device = select_device(settings.training.device)
            stack.enter_context(
                spawn_ranks(
                    nproc,
                    train_rank,
                    (settings.model_dump_json(), plan),
                    timeout_s=timeout,
                    backend=backend_for(device),
                )
            )
        elif init_from_environment(timeout, backend_for(select_device(settings.training.device))).world > 1:
            stack.callback(close_group)  # under torchrun every process runs this command; rank 0 reports
        ranks = Ranks.current()
        with TrainingView(None if as_json or not ranks.main else st.err, settings.training.epochs) as view:
            result = train(settings, st.host.registry, plan, on_batch=view.on_batch, on_epoch=view.on_epoch)
        if not ranks.main:
            return
    tuned = None
    if not result.interrupted:
        tuned = tune_after_training(st, resolved, result, quiet=as_json)
    if as_json:
        typer.echo(json.dumps(result.to_dict() | {"tuned": tuned}))
    elif tuned is None:
        _report(st.out, result)  # also after Ctrl-C: the scores of the last finished epoch
    if result.interrupted:
        st.err.print(
            f"[yellow]interrupted: the current weights were saved to {result.archive}; {result.activation}[/yellow]",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(130)


def _generated_sensors(st: Any, settings: Any, plan: TrainPlan, quiet: bool) -> tuple[Any, TrainPlan]:
    """The settings and plan with the sensors the episodes' generated maps add where the user chose none
    (:func:`generated_sensors`), decided once here for every rank (the plan then counts them as chosen, so
    training does not read the store's episodes for them again); one line for each added unless ``quiet``."""
    path = store_path(settings, plan.store)
    if not TrajectoryStore.exists(path):
        return settings, plan  # training says so
    with TrajectoryStore.open(path) as store:
        settings, added = generated_sensors(
            settings,
            st.host.registry,
            store,
            module=plan.module,
            include_recovery=plan.include_recovery,
            given=plan.given,
        )
    if not quiet:
        for name in added:
            st.err.print(
                f"training on the {name} sensor beside the screen: every episode was recorded with it on "
                f"generated maps, whose default it is (--plugin no:{name} to leave it out)",
                highlight=False,
                soft_wrap=True,
            )
    return settings, replace(plan, given=plan.given | {"brain.sensors"})


def tune_after_training(
    st: Any,
    resolved: ResolvedSettings,
    result: TrainResult,
    quiet: bool,
    on_progress: Callable[[int, int, str], None] | None = None,
) -> dict[str, Any] | None:
    """Thresholds tuned by play on the trained model where ``training.tune_episodes`` (or the scenario's spec)
    asks for it; the summary of the search (``None``: not asked). ``on_progress``: as :func:`tune_model`'s.

    Training's model is saved before this starts, so a failed or interrupted search
    is reported (``{"error": line}``) and the trained model stays active.
    """
    episodes = int(result.data.get("tune_by_play") or 0)
    if not episodes or result.active is None:
        return None
    if not quiet:
        _report(st.out, result)
    if not result.data.get("scenario") or not result.thresholds:
        why = (
            "the store holds several scenarios" if not result.data.get("scenario") else "no thresholds were calibrated"
        )
        st.err.print(f"[yellow]not tuning the thresholds by play: {why}[/yellow]", highlight=False, soft_wrap=True)
        return {"error": f"not tuned: {why}"}
    if not quiet:
        st.out.print(
            f"tuning the press thresholds by play: {episodes} episodes a candidate "
            "(training.tune_episodes; 0 turns it off)",
            highlight=False,
            soft_wrap=True,
        )
    try:
        search, archive, active = tune_model(
            st,
            resolved,
            result.active,
            episodes=episodes,
            confirm=max(2, episodes),
            workers=max(1, min(2, os.cpu_count() or 1)),
            on_progress=on_progress,
        )
    except (GolemError, KeyboardInterrupt) as exc:
        line = str(exc) if isinstance(exc, GolemError) else "interrupted"
        st.err.print(
            f"[yellow]tuning by play stopped ({line}); the trained model stays active: {result.active}[/yellow]",
            highlight=False,
            soft_wrap=True,
        )
        return {"error": line}
    if not quiet:
        st.out.print(tune_table(search))
        st.out.print(
            verdict(search, hint="the trained model keeps the thresholds calibrated on validation"),
            highlight=False,
            soft_wrap=True,
        )
        if archive is not None:
            st.out.print(f"tuned thresholds → {archive} (and {active})", highlight=False, soft_wrap=True)
    return tune_summary(search, archive, active)


def _report(out, result: TrainResult) -> None:
    """Validation per-action precision/recall/F1, exact match, and where the checkpoint went."""
    val = result.validation
    if val is None:
        out.print("[yellow]no validation episodes (training.validation_split or too few episodes)[/yellow]")
    else:
        title = f"Validation: {val.steps} steps, each once, state carried"
        caption = f"exact match {val.exact_match:.3f}   loss {val.loss:.4f} (rates only {val.constant_loss:.4f})"
        out.print(action_scores(title, val.actions, caption, support="pressed"))
    last = result.history[-1] if result.history else None
    if last is not None:
        out.print(
            f"epoch {last['epoch'] + 1}: train loss {last['train_loss']:.4f}, {last['frames_per_s']:.0f} frames/s "
            f"on {result.device}, {result.updates} updates"
        )
    if result.best_epoch is not None and last is not None and result.best_epoch != last["epoch"]:
        out.print(f"kept epoch {result.best_epoch + 1}, the lowest validation loss (training.keep_best)")
    if result.thresholds:
        shown = "  ".join(f"{name} {value:.2f}" for name, value in result.thresholds.items())
        out.print(f"press thresholds calibrated on validation, used by play and evaluate: {shown}", soft_wrap=True)
    if result.data.get("tensorboard"):
        out.print(
            f"curves       → {result.data['tensorboard']} (tensorboard --logdir {result.data['tensorboard']})",
            highlight=False,
            soft_wrap=True,
        )
    out.print(f"active model → {result.active}", highlight=False, soft_wrap=True)
    out.print(f"archived as  → {result.archive}", highlight=False, soft_wrap=True)
