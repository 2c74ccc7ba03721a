"""The pipeline's stages as functions of a :class:`~golem_worldmodel.context.Context`.

Each ``golem dream …`` command is one of these with its own options folded
into the context's preset; ``golem dream iterate`` (:mod:`golem_worldmodel.rounds`)
calls the same functions with a round's targets. Every stage is resumable
and returns what it did.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import structlog

from golem.errors import GolemError
from golem.learning.checkpoints import read_metadata
from golem_worldmodel.context import Context, epoch_hooks
from golem_worldmodel.presets import Preset

log = structlog.get_logger("golem_worldmodel.stages")


def models(c: Context) -> tuple[Any, Any]:
    """The run's VAE and MDN-RNN member 0, eval mode (one line naming the stage to run when missing)."""
    from golem_worldmodel.training import load_rnn, load_vae

    c.require(c.paths.vae, "train-vae")
    c.require(c.paths.rnn, "train-rnn")
    return load_vae(c.paths.vae), load_rnn(c.paths.rnn)


def controller_files(c: Context, controller: Path | None = None) -> tuple[Path, Path]:
    """The VAE and the MDN-RNN files ``controller`` (default: the run's) was evolved to read
    (:func:`golem_worldmodel.training.controller_reader`, :func:`~golem_worldmodel.training.vae_reader`)."""
    from golem_worldmodel.training import controller_reader, vae_reader

    controller = controller or c.paths.controller
    c.require(c.paths.vae, "train-vae")
    c.require(c.paths.rnn, "train-rnn")
    c.require(controller, "train-controller")
    rnn = controller_reader(c.paths, controller)
    return vae_reader(c.paths, rnn), rnn


def controller_models(c: Context, controller: Path | None = None, run_vae: Any = None) -> tuple[Any, Any]:
    """The VAE and the MDN-RNN of :func:`controller_files`, eval mode; ``run_vae``, the run's V already loaded,
    is returned instead of reading that file again when the controller reads it."""
    from golem_worldmodel.training import load_rnn, load_vae

    vae, rnn = controller_files(c, controller)
    return (run_vae if run_vae is not None and vae == c.paths.vae else load_vae(vae)), load_rnn(rnn)


def members(c: Context, preset: Preset | None = None) -> tuple[list[Any], str]:
    """The ensemble's further MDN-RNNs (members ``1 … rnn_members − 1``) and one digest naming all members."""
    from golem_worldmodel.training import load_ensemble

    return load_ensemble(c.paths, (preset or c.preset).rnn_members)


def collect_random(c: Context, seed: int) -> dict[str, Any]:
    """Random (and probe) rollouts up to the preset's targets; returns :func:`golem_worldmodel.collect.collect`'s
    counts."""
    from golem_worldmodel.collect import collect

    with c.progress("collect") as progress:
        task = progress.add_task(c.scenario, total=c.preset.episodes + c.preset.probe_episodes, info="")
        dropped = 0

        def on_episode(kept: int, episode: Any) -> None:
            nonlocal dropped
            dropped += episode is None
            progress.update(task, completed=kept, info=f"dropped {dropped}")

        return collect(c.settings, c.registry, c.paths.store, c.preset, c.scenario, seed, on_episode=on_episode)


def train_vae(c: Context, seed: int, preset: Preset | None = None) -> dict[str, Any]:
    """Train (or continue) V to ``preset.vae_epochs`` on every collected frame."""
    from golem_worldmodel.training import train_vae as train

    preset = preset or c.preset
    if not (c.paths.store / "data.mdb").is_file():
        raise GolemError(f"no trajectory store in {c.paths.root}; run `golem dream collect --run {c.paths.root}` first")
    with c.progress("train-vae") as progress:
        start, batch = epoch_hooks(progress, preset.vae_epochs)
        return train(c.paths.vae, c.paths.store, preset, c.scenario, seed, start, batch)


def ensure_latents(c: Context) -> Any:
    """Encode the store with the current VAE unless ``latents.safetensors`` already holds its episodes under that VAE.

    Episodes collected since (``collect --episodes`` raised, a round's controller episodes) are encoded with the
    rest; M then trains on all of them.
    """
    from golem.data.store import TrajectoryStore
    from golem_worldmodel.latents import encode_store, load_latents, save_latents, store_episodes
    from golem_worldmodel.training import load_vae

    c.require(c.paths.vae, "train-vae")
    vae_sha = read_metadata(c.paths.vae)["sha256"]
    known = None
    if c.paths.latents.is_file():
        latents, meta = load_latents(c.paths.latents)
        with TrajectoryStore.open(c.paths.store) as store:
            ids = [i.id for i in store_episodes(store, c.scenario)]
        if meta.get("vae_sha256") == vae_sha and latents.episode_ids == ids:
            return latents
        if meta.get("vae_sha256") == vae_sha and latents.episode_ids == ids[: len(latents.episode_ids)]:
            known = latents  # the same VAE, episodes added since: only those are encoded
        log.info(
            "dream.latents.stale",
            reason="the VAE changed"
            if meta.get("vae_sha256") != vae_sha
            else f"the store holds {len(ids)} episodes, the latents {len(latents.episode_ids)}",
        )
    vae = load_vae(c.paths.vae)
    with c.progress("encode") as progress:
        task = progress.add_task("frames → mu, logvar", total=None, info="")
        latents = encode_store(
            vae,
            c.paths.store,
            c.scenario,
            on_episode=lambda d, t: progress.update(task, completed=d, total=t),
            known=known,
        )
    save_latents(c.paths.latents, latents, vae_sha, c.scenario)
    return latents


def train_rnn(c: Context, seed: int, preset: Preset | None = None, refit: bool = False) -> list[dict[str, Any]]:
    """Encode the frames, then train (or continue) every MDN-RNN member to ``preset.rnn_epochs``.

    ``refit``: a member trained on an earlier VAE's latents continues from its weights on the new latents
    (an iterative round that fine-tuned V) instead of starting afresh.
    """
    from golem_worldmodel.training import train_rnn as train

    preset = preset or c.preset
    latents = ensure_latents(c)
    vae_sha = read_metadata(c.paths.vae)["sha256"]
    out = []
    for i in range(preset.rnn_members):
        path = c.paths.member(i)
        label = "train-rnn" + (f" {i + 1}/{preset.rnn_members}" if preset.rnn_members > 1 else "")
        with c.progress(label) as progress:
            start, batch = epoch_hooks(progress, preset.rnn_epochs)
            out.append(train(path, latents, preset, seed + i, start, batch, vae_sha256=vae_sha, refit=refit))
    return out


def real_scorer(c: Context, vae: Any, rnn: Any, episodes: int, seed: int) -> Any:
    """``score(params) -> survival tics`` of a controller candidate over ``episodes`` real episodes from ``seed``."""
    from golem_worldmodel.controller import LinearController
    from golem_worldmodel.real_runner import play_real

    def score(params: np.ndarray) -> list[int]:
        policy = LinearController(params, rnn.z_dim, rnn.hidden)
        return play_real(
            c.settings,
            vae,
            rnn,
            policy,
            episodes,
            c.scenario,
            seed=seed,
            max_steps=c.preset.max_steps,
            screen_flashes=c.preset.screen_flashes,
        )["survival"]

    return score


def train_controller(
    c: Context,
    seed: int,
    preset: Preset | None = None,
    path: Path | None = None,
    log_path: Path | None = None,
    init: np.ndarray | None = None,
) -> dict[str, Any]:
    """Evolve (or continue) the controller in the dream to ``preset.generations`` (a bar per generation).

    ``path``/``log_path``: where the controller and its log go (default: the run's); ``init``: the CMA-ES mean a
    fresh search starts from (default: zeros).
    """
    from golem_worldmodel.dream_env import StartPool
    from golem_worldmodel.evolution import train_controller as evolve
    from golem_worldmodel.latents import load_latents

    preset = preset or c.preset
    vae, rnn = models(c)
    ensemble, digest = members(c, preset)
    c.require(c.paths.latents, "train-rnn")
    latents, _ = load_latents(c.paths.latents)
    pool = StartPool.from_latents(latents, preset.warmup)
    scorer = real_scorer(c, vae, rnn, preset.real_episodes, seed=50_000) if preset.real_every else None
    with c.progress("train-controller") as progress:
        task = progress.add_task("generations", total=preset.generations, info="")
        last_real = [float("nan")]

        def on_generation(gen: int, rec: dict[str, Any]) -> None:
            last_real[0] = rec.get("real_mean", last_real[0])
            progress.update(
                task,
                completed=gen,
                info=f"dream: population {rec['dream_mean']:.0f} max {rec['dream_max']:.0f} "
                f"CMA mean {rec['dream_of_mean']:.0f}  real {last_real[0]:.0f}  σ {rec['sigma']:.3f}",
            )

        return evolve(
            path or c.paths.controller,
            log_path or c.paths.controller_log,
            rnn,
            pool,
            preset,
            seed,
            scorer,
            on_generation,
            rnn_sha256=digest,
            members=ensemble,
            init=init,
        )
