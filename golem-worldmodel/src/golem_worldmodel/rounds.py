"""``golem dream iterate``: iterative training, as World Models proposes when random play does not cover the game.

Round 0 is the pipeline (collect → V → M → CMA-ES, each stage resumable and
skipped when done). Every further round ``r``:

1. plays the *kept* controller with ε-random holds for ``round_episodes``
   episodes into the store (tags ``wm-controller``, ``wm-round-<r>``;
   :mod:`golem_worldmodel.explore`);
2. fine-tunes V ``round_vae_epochs`` epochs (0 by default: the frames of one
   arena change little) and every MDN-RNN member ``round_rnn_epochs`` epochs
   on all data so far;
3. evolves a controller in the new dream for ``round_generations``
   generations, starting from the kept controller's parameters;
4. checks it in the engine (``round_eval_episodes`` episodes from seed
   70,000); one that survives at least as long as the last kept one then
   plays ``round_confirm_episodes`` fresh seeds beside the last kept
   controller, and is *kept* — copied to the run's ``controller.safetensors``,
   which ``evaluate`` and ``render`` play — only when its paired gain there
   exceeds ``round_confirm_margin`` standard errors (the rule of
   ``golem run tune``: the best of noisy checks is partly luck). A kept
   round also keeps its M (``rounds/<r>/mdnrnn.safetensors``): the
   controller reads that M's hidden state, and later rounds refit the run's
   (a round that fine-tunes V first keeps the V of the last kept round's M:
   ``rounds/<r>/vae.safetensors``);
5. calibrates the dream (:mod:`golem_worldmodel.calibration`): the held
   actions and the controller, dream ÷ engine.

The loop stops when the dream is honest (every gated ratio within
``honest_ratio``×; unless ``stop_when_honest`` is off) or after ``rounds`` rounds. Each finished round is one
entry of ``rounds.json`` (written atomically); an interrupted round resumes
from its stages' checkpoints and its tagged episodes, never storing an
episode twice.

Pessimism where the ensemble disagrees: a dream ends when the most
pessimistic member sees a death (``ensemble_death = "max"``), and the
controller reads member 0's ``h``, which depends only on the latents and
actions so far — never on which member was drawn to sample ``z_{t+1}`` —
so its input is the one the real engine gives it.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import structlog

from golem.atomic import atomic_write
from golem.errors import GolemError
from golem.learning.checkpoints import read_metadata
from golem_worldmodel import stages
from golem_worldmodel.context import Context

log = structlog.get_logger("golem_worldmodel.rounds")

#: Engine seed of the first episode of a round's real-engine check.
CHECK_SEED = 70_000
#: Engine seed of the first episode of round ``r``'s confirmation: ``CONFIRM_SEED + CONFIRM_STRIDE · r``.
CONFIRM_SEED = 80_000
CONFIRM_STRIDE = 1_000


def load_rounds(path: Path) -> list[dict[str, Any]]:
    """The finished rounds recorded at ``path`` (empty when there is none).

    Raises:
        GolemError: the file is not a rounds record.
    """
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text())
        records = data["rounds"]
        if not isinstance(records, list) or any(r.get("round") != i for i, r in enumerate(records)):
            raise ValueError("rounds out of order")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise GolemError(f"{path} is not a rounds record ({exc}); move it away to start the rounds afresh") from None
    return records


def _save_rounds(path: Path, records: list[dict[str, Any]]) -> None:
    with atomic_write(path) as fh:
        fh.write(json.dumps({"rounds": records}, indent=2).encode())


def _copy(src: Path, dst: Path) -> None:
    """Copy a checkpoint atomically (a reader never sees half of it)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(dst) as fh, open(src, "rb") as fin:
        shutil.copyfileobj(fin, fh)


def _store_size(c: Context) -> tuple[int, int]:
    """``(episodes, frames)`` of this pipeline's episodes in the run's store."""
    from golem.data.store import TrajectoryStore
    from golem_worldmodel.latents import store_episodes

    with TrajectoryStore.open(c.paths.store) as store:
        infos = store_episodes(store, c.scenario)
        return len(infos), int(sum(i.length for i in infos))


def _round_size(c: Context, r: int) -> dict[str, int]:
    """``episodes`` and ``frames`` round ``r``'s controller added to the store."""
    from golem.data.store import TrajectoryStore
    from golem_worldmodel.explore import round_episodes

    with TrajectoryStore.open(c.paths.store) as store:
        infos = round_episodes(store, c.scenario, r)
        return {"episodes": len(infos), "frames": int(sum(i.length for i in infos))}


def keeps(records: list[dict[str, Any]], real_mean: float) -> bool:
    """Whether a round whose controller survived ``real_mean`` tics in its check passes it after ``records``:
    the first round always, a later one when it is not worse than the last kept round (a passed check is
    then confirmed on fresh seeds: :func:`_confirm`)."""
    kept = [x for x in records if x.get("kept")]
    return not kept or real_mean >= float(kept[-1]["real_mean"])


def confirm_seeds(r: int, episodes: int) -> range:
    """The engine seeds of round ``r``'s confirmation (fresh for every round)."""
    first = CONFIRM_SEED + CONFIRM_STRIDE * r
    return range(first, first + episodes)


def _confirm(c: Context, r: int, candidate: Any, rnn: Any, vae: Any, records: list[dict[str, Any]]) -> dict[str, Any]:
    """Round ``r``'s controller and the last kept one, each with the M it reads, on :func:`confirm_seeds`:
    the paired gain and whether it exceeds ``round_confirm_margin`` standard errors."""
    from golem.workflows.tuning import confirm_gain
    from golem_worldmodel.evolution import load_controller
    from golem_worldmodel.real_runner import play_real

    seeds = confirm_seeds(r, c.preset.round_confirm_episodes)
    kept_path = kept_controller(c, records)
    kept_vae, kept_rnn = stages.controller_models(c, kept_path, run_vae=vae)
    kept, _ = load_controller(kept_path, "mean")
    played: dict[str, list[int]] = {}
    with c.progress(f"round {r}: confirm") as progress:
        for name, (v, m, policy) in {"kept": (kept_vae, kept_rnn, kept), "candidate": (vae, rnn, candidate)}.items():
            task = progress.add_task(name, total=len(seeds), info="")
            played[name] = play_real(
                c.settings,
                v,
                m,
                policy,
                len(seeds),
                c.scenario,
                seed=seeds[0],
                max_steps=c.preset.max_steps,
                screen_flashes=c.preset.screen_flashes,
                on_episode=lambda done, t, task=task: progress.update(task, completed=done),
            )["survival"]
    gain, se, confirmed = confirm_gain(played["kept"], played["candidate"], c.preset.round_confirm_margin)
    return {
        "seeds": [seeds[0], seeds[-1]],
        "against_round": int(kept_path.parent.name),
        "kept_mean": float(np.mean(played["kept"])),
        "candidate_mean": float(np.mean(played["candidate"])),
        "gain": gain,
        "se": se,
        "margin": c.preset.round_confirm_margin,
        "confirmed": confirmed,
    }


def kept_controller(c: Context, records: list[dict[str, Any]]) -> Path:
    """The controller file of the last kept round."""
    kept = [r for r in records if r.get("kept")]
    if not kept:
        raise GolemError(f"{c.paths.rounds} records no kept round; move it away to start the rounds afresh")
    return c.paths.round_dir(int(kept[-1]["round"])) / "controller.safetensors"


def _collect(c: Context, r: int, controller: Path) -> dict[str, Any]:
    from golem_worldmodel.explore import collect_round

    with c.progress(f"round {r}: collect") as progress:
        task = progress.add_task("controller + ε", total=c.preset.round_episodes, info="")
        dropped = 0

        def on_episode(kept: int, episode: Any) -> None:
            nonlocal dropped
            dropped += episode is None
            progress.update(task, completed=kept, info=f"dropped {dropped}")

        return collect_round(
            c.settings, c.registry, c.paths.root, controller, c.preset, c.scenario, r, on_episode=on_episode
        )


def _finish(
    c: Context,
    r: int,
    seed: int,
    records: list[dict[str, Any]],
    seconds: dict[str, float],
    added: dict[str, Any] | None,
) -> dict[str, Any]:
    """Check round ``r``'s controller in the engine, calibrate the dream, keep or not, record the round.

    ``added``: what the round stored (``None``: the whole store, round 0's)."""
    from golem_worldmodel.calibration import calibrate, honest
    from golem_worldmodel.evolution import load_controller
    from golem_worldmodel.real_runner import play_real

    started = time.perf_counter()
    path = c.paths.round_dir(r) / "controller.safetensors"
    vae, rnn = stages.models(c)
    members, _ = stages.members(c)
    controller, meta = load_controller(path, "mean")
    with c.progress(f"round {r}: check") as progress:
        task = progress.add_task("real episodes", total=c.preset.round_eval_episodes, info="")
        real = play_real(
            c.settings,
            vae,
            rnn,
            controller,
            c.preset.round_eval_episodes,
            c.scenario,
            seed=CHECK_SEED,
            max_steps=c.preset.max_steps,
            screen_flashes=c.preset.screen_flashes,
            on_episode=lambda done, t: progress.update(task, completed=done),
        )["survival"]
    real_arr = np.asarray(real, np.float64)
    latents = stages.ensure_latents(c)
    calibration = calibrate(
        c.settings,
        c.scenario,
        c.preset,
        vae,
        rnn,
        members,
        latents,
        controller,
        dreams=c.preset.calibration_dreams,
        episodes=c.preset.calibration_episodes,
        controller_real=real,
        random_policy=False,
        cache=c.paths.calibration_cache,
    )
    is_honest = honest(calibration, c.preset.honest_ratio)
    kept = keeps(records, float(real_arr.mean()))
    confirmation = None
    if kept and r > 0 and c.preset.round_confirm_episodes:
        confirmation = _confirm(c, r, controller, rnn, vae, records)
        kept = confirmation["confirmed"]
    if kept:
        _copy(c.paths.rnn, c.paths.round_dir(r) / "mdnrnn.safetensors")  # the M this controller reads
        if r > 0:
            _copy(path, c.paths.controller)
    seconds["check"] = round(time.perf_counter() - started, 1)
    episodes, frames = _store_size(c)
    progress_meta = meta.get("progress", {})
    record = {
        "round": r,
        "seed": seed,
        "measured": datetime.now(UTC).isoformat(timespec="seconds"),
        "kept": kept,
        "honest": is_honest,
        "real_mean": float(real_arr.mean()),
        "real_std": float(real_arr.std()),
        "real_se": float(real_arr.std(ddof=1) / np.sqrt(len(real_arr))) if len(real_arr) > 1 else float("nan"),
        "real_episodes": len(real_arr),
        "real_seed": CHECK_SEED,
        "confirmation": confirmation,
        "dream_of_mean": progress_meta.get("dream_of_mean"),
        "generations": progress_meta.get("generations"),
        "calibration": calibration,
        "honest_ratio": c.preset.honest_ratio,
        "store_episodes": episodes,
        "store_frames": frames,
        "added": added if added is not None else {"episodes": episodes, "frames": frames},
        "vae_epochs": int(read_metadata(c.paths.vae).get("progress", {}).get("epochs", 0)),
        "rnn_epochs": int(read_metadata(c.paths.rnn).get("progress", {}).get("epochs", 0)),
        "controller_sha256": read_metadata(path)["sha256"],
        "seconds": seconds,
    }
    records.append(record)
    _save_rounds(c.paths.rounds, records)
    log.info(
        "dream.round.done",
        round=r,
        real=round(record["real_mean"], 1),
        kept=kept,
        honest=is_honest,
        ratios={k: round(v["ratio"], 2) for k, v in calibration.items()},
    )
    return record


def iterate(
    c: Context, rounds: int, seed: int = 0, on_round: Callable[[dict[str, Any]], None] | None = None
) -> list[dict[str, Any]]:
    """Run round 0 (the pipeline) and up to ``rounds`` further rounds; returns every round's record.

    Resumable: finished rounds are read from ``rounds.json``; the round in progress continues from its
    stages' checkpoints. ``on_round(record)`` is called after each round finishes.
    """
    records = load_rounds(c.paths.rounds)
    if not records:
        seconds: dict[str, float] = {}
        for name, stage in (
            ("collect", lambda: stages.collect_random(c, seed)),
            ("vae", lambda: stages.train_vae(c, seed)),
            ("rnn", lambda: stages.train_rnn(c, seed)),
            ("controller", lambda: stages.train_controller(c, seed)),
        ):
            started = time.perf_counter()
            stage()
            seconds[name] = round(time.perf_counter() - started, 1)
        _copy(c.paths.controller, c.paths.round_dir(0) / "controller.safetensors")
        record = _finish(c, 0, seed, records, seconds, None)
        if on_round is not None:
            on_round(record)
    while len(records) <= rounds:
        if records[-1]["honest"] and c.preset.stop_when_honest:
            log.info("dream.rounds.honest", round=records[-1]["round"], note="the dream is honest: no further round")
            break
        r = len(records)
        p = c.preset
        target = p.with_overrides(
            vae_epochs=p.vae_epochs + r * p.round_vae_epochs,
            rnn_epochs=p.rnn_epochs + r * p.round_rnn_epochs,
            generations=p.round_generations,
        )
        from_controller = kept_controller(c, records)
        seconds = {}
        c.paths.round_dir(r).mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        collected = _collect(c, r, from_controller)
        seconds["collect"] = round(time.perf_counter() - started, 1)
        if p.round_vae_epochs:
            started = time.perf_counter()
            kept_vae = from_controller.parent / "vae.safetensors"
            if not kept_vae.is_file():  # the V the kept controller's M reads, before V changes under it
                _copy(c.paths.vae, kept_vae)
            stages.train_vae(c, seed, target)
            seconds["vae"] = round(time.perf_counter() - started, 1)
        started = time.perf_counter()
        stages.train_rnn(c, seed, target, refit=True)
        seconds["rnn"] = round(time.perf_counter() - started, 1)
        started = time.perf_counter()
        from golem_worldmodel.evolution import load_controller

        init, _ = load_controller(from_controller, "mean")
        stages.train_controller(
            c,
            seed + 1000 * r,
            target,
            path=c.paths.round_dir(r) / "controller.safetensors",
            log_path=c.paths.round_dir(r) / "controller_log.jsonl",
            init=init.params.numpy(),
        )
        seconds["controller"] = round(time.perf_counter() - started, 1)
        added = {**_round_size(c, r), "dropped": collected["dropped"], "from_round": int(from_controller.parent.name)}
        record = _finish(c, r, seed, records, seconds, added)
        if on_round is not None:
            on_round(record)
    return records
