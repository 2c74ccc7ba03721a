"""Training loops of V (the VAE) and M (the MDN-RNN): resumable, one checkpoint each.

Both save after every epoch (atomically), with the epochs done in the
checkpoint's ``progress`` metadata; a rerun continues from there, or returns at
once when the target is already reached.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import structlog
import torch

from golem.data.store import TrajectoryStore
from golem.errors import GolemError
from golem.learning.checkpoints import read_metadata
from golem_worldmodel.actions import N_ACTIONS
from golem_worldmodel.checkpoints import load_module, load_optimizer, load_part, progress_of, save_part
from golem_worldmodel.latents import Latents, store_episodes
from golem_worldmodel.mdnrnn import MDNRNN, rnn_loss
from golem_worldmodel.paths import RunPaths
from golem_worldmodel.presets import Preset
from golem_worldmodel.vae import ConvVAE, frames_to_input, vae_loss

log = structlog.get_logger("golem_worldmodel.training")

#: ``on_batch(done, total, metrics)`` — progress of one epoch.
Progress = Callable[[int, int, dict[str, float]], None]


# --- V --------------------------------------------------------------------


def vae_config(preset: Preset) -> dict[str, Any]:
    return {"z_dim": preset.z_dim, "channels": list(preset.vae_channels)}


def build_vae(config: dict[str, Any]) -> ConvVAE:
    return ConvVAE(int(config["z_dim"]), tuple(int(c) for c in config["channels"]))


def load_vae(path: Path) -> ConvVAE:
    """The VAE saved at ``path``, rebuilt from its metadata, eval mode."""
    state, meta, _ = load_part(path, "vae")
    return load_module(build_vae(meta["spec"]["config"]), state, path).eval()


class FrameIndex:
    """Random access to every collected frame without loading the store into memory."""

    def __init__(self, store_path: Path, scenario: str | None) -> None:
        self.store = TrajectoryStore.open(store_path)
        self.infos = store_episodes(self.store, scenario)
        if not self.infos:
            self.store.close()
            raise GolemError(f"no collected episodes in {store_path}; run `golem dream collect` first")
        lengths = np.asarray([i.length for i in self.infos])
        self.episode = np.repeat(np.arange(len(self.infos)), lengths)
        self.step = np.concatenate([np.arange(n) for n in lengths])

    def __len__(self) -> int:
        return len(self.episode)

    def batch(self, idx: np.ndarray) -> np.ndarray:
        """uint8 ``[len(idx), 3, 64, 64]`` frames ``idx`` (flat indices)."""
        with self.store.reader() as r:
            return np.stack(
                [
                    r.view(self.infos[self.episode[i]], "frames", int(self.step[i]), int(self.step[i]) + 1)[0]
                    for i in idx
                ]
            )

    def close(self) -> None:
        self.store.close()


def _resume(path: Path, part: str, module: torch.nn.Module, opt: torch.optim.Optimizer, config: Any) -> None:
    """Load weights and Adam moments of ``part`` from ``path`` when it exists (the run continues).

    Raises:
        GolemError: the checkpoint was trained with another configuration.
    """
    if not path.is_file():
        return
    state, meta, opt_state = load_part(path, part)
    if meta["spec"]["config"] != config:
        raise GolemError(f"{path} was trained with {meta['spec']['config']}, not {config}; use another --run folder")
    load_module(module, state, path)
    load_optimizer(opt, opt_state, meta.get("optim"))


def train_vae(
    path: Path,
    store_path: Path,
    preset: Preset,
    scenario: str | None,
    seed: int = 0,
    on_epoch_start: Callable[[int, int], None] | None = None,
    on_batch: Progress | None = None,
) -> dict[str, Any]:
    """Train (or continue) the VAE to ``preset.vae_epochs`` epochs; returns the last epoch's metrics."""
    done = int((progress_of(path) or {}).get("epochs", 0))
    if done >= preset.vae_epochs:
        log.info("dream.vae.skip", epochs=done)
        return {"epochs": done, "skipped": True}
    config = vae_config(preset)
    vae = build_vae(config)
    opt = torch.optim.Adam(vae.parameters(), lr=preset.vae_lr)
    _resume(path, "vae", vae, opt, config)
    frames = FrameIndex(store_path, scenario)
    rng = np.random.default_rng(seed + done)
    torch.manual_seed(seed + done)
    metrics: dict[str, float] = {}
    for epoch in range(done, preset.vae_epochs):
        order = rng.permutation(len(frames))
        if preset.vae_max_frames:
            order = order[: preset.vae_max_frames]
        n_batches = max(1, len(order) // preset.vae_batch)
        if on_epoch_start is not None:
            on_epoch_start(epoch, n_batches)
        vae.train()
        sums = {"loss": 0.0, "recon": 0.0, "kl": 0.0}
        started = time.perf_counter()
        for b in range(n_batches):
            idx = np.sort(order[b * preset.vae_batch : (b + 1) * preset.vae_batch])
            x = frames_to_input(torch.from_numpy(frames.batch(idx)))
            recon, mu, logvar = vae(x)
            loss, rec, kl = vae_loss(x, recon, mu, logvar, preset.vae_kl_tolerance)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            for k, v in (("loss", loss), ("recon", rec), ("kl", kl)):
                sums[k] += v.item()
            if on_batch is not None:
                on_batch(b + 1, n_batches, {k: v / (b + 1) for k, v in sums.items()})
        metrics = {k: v / n_batches for k, v in sums.items()}
        save_part(
            path,
            "vae",
            config,
            vae.state_dict(),
            {"epochs": epoch + 1, "frames": int(len(frames))},
            opt,
            extra={"preset": preset.name, "metrics": metrics},
        )
        log.info(
            "dream.vae.epoch",
            epoch=epoch + 1,
            seconds=round(time.perf_counter() - started, 1),
            **{k: round(v, 3) for k, v in metrics.items()},
        )
    frames.close()
    return {"epochs": preset.vae_epochs, **metrics}


# --- M --------------------------------------------------------------------


def rnn_config(preset: Preset, z_dim: int) -> dict[str, Any]:
    return {"z_dim": int(z_dim), "n_actions": N_ACTIONS, "hidden": preset.hidden, "gaussians": preset.gaussians}


def build_rnn(config: dict[str, Any]) -> MDNRNN:
    return MDNRNN(int(config["z_dim"]), int(config["n_actions"]), int(config["hidden"]), int(config["gaussians"]))


def load_rnn(path: Path) -> MDNRNN:
    """The MDN-RNN saved at ``path``, rebuilt from its metadata, eval mode."""
    state, meta, _ = load_part(path, "mdnrnn")
    return load_module(build_rnn(meta["spec"]["config"]), state, path).eval()


def controller_reader(paths: RunPaths, controller: Path) -> Path:
    """The MDN-RNN file (member 0) whose hidden state ``controller`` was evolved to read.

    After ``golem dream iterate`` refits M, a kept controller of an earlier round still reads the M of its
    own round: every kept round keeps a copy (``rounds/<r>/mdnrnn.safetensors``). The match is by the
    SHA-256 the controller recorded (the first of its dream's member digests); a controller without one
    reads the run's M.

    Raises:
        GolemError: the M the controller was evolved with is no longer in the run.
    """
    wanted = str(read_metadata(controller).get("progress", {}).get("rnn_sha256") or "").split("+")[0]
    found = _kept_file(paths, paths.rnn, wanted)
    if found is None:
        raise GolemError(
            f"{controller} reads an MDN-RNN ({wanted[:12]}…) that is no longer in {paths.root}; "
            f"run `golem dream train-controller --run {paths.root}` again"
        )
    return found


def vae_reader(paths: RunPaths, rnn: Path) -> Path:
    """The VAE file whose latents the MDN-RNN ``rnn`` was trained on.

    Rounds that fine-tune V (``dream.round_vae_epochs`` > 0) keep each kept round's V beside its M
    (``rounds/<r>/vae.safetensors``); the match is by the SHA-256 the M recorded. An M without one reads
    the run's V.

    Raises:
        GolemError: the V that M was trained on is no longer in the run.
    """
    wanted = str(read_metadata(rnn).get("progress", {}).get("vae_sha256") or "")
    found = _kept_file(paths, paths.vae, wanted)
    if found is None:
        raise GolemError(
            f"{rnn} was trained on a VAE ({wanted[:12]}…) that is no longer in {paths.root}; "
            f"run `golem dream train-rnn --run {paths.root}` again"
        )
    return found


def _kept_file(paths: RunPaths, current: Path, sha256: str) -> Path | None:
    """``current`` (the run's file) or a kept round's copy of it (``rounds/<r>/<same name>``) whose SHA-256 is
    ``sha256``; ``current`` when nothing is asked for, ``None`` when none matches."""
    if not sha256:
        return current
    for path in [current, *sorted(paths.root.glob(f"rounds/*/{current.name}"))]:
        if path.is_file() and read_metadata(path)["sha256"] == sha256:
            return path
    return None


def load_ensemble(paths: RunPaths, count: int) -> tuple[list[MDNRNN], str]:
    """Members ``1 … count − 1`` of the run's MDN-RNN ensemble (member 0 is :func:`load_rnn` of ``paths.rnn``)
    and one digest naming all ``count`` members (their SHA-256s joined by ``+``).

    Raises:
        GolemError: a member's file is missing (train-rnn has not trained that many).
    """
    digests = [read_metadata(paths.rnn)["sha256"]]
    members = []
    for i in range(1, count):
        path = paths.member(i)
        if not path.is_file():
            raise GolemError(
                f"{path} does not exist; run `golem dream train-rnn --run {paths.root}` with "
                f"dream.rnn_members={count} first"
            )
        members.append(load_rnn(path))
        digests.append(read_metadata(path)["sha256"])
    return members, "+".join(digests)


def sequence_windows(latents: Latents, seq_len: int) -> np.ndarray:
    """``[W, 2]`` (episode, start) of non-overlapping windows covering every step (the last one may be short)."""
    out = [(e, s) for e, T in enumerate(latents.lengths()) for s in range(0, int(T), seq_len)]
    return np.asarray(out, np.int64).reshape(-1, 2)


def make_batch(
    latents: Latents, windows: np.ndarray, seq_len: int, rng: np.random.Generator
) -> dict[str, torch.Tensor]:
    """One batch of windows, zero-padded to ``seq_len``; latents SAMPLED from the posterior.

    Returns ``z [B, L, Z]`` (input ``z_t``), ``actions [B, L]``, ``z_next [B, L, Z]``
    (target ``z_{t+1}``), ``next_mask``, ``reward``, ``done``, ``step_mask`` ``[B, L]``.
    ``z_t`` and ``z_{t+1}`` are drawn independently per frame, and the same
    frame's sample is used both as a target (step ``t-1``) and an input (step ``t``).
    """
    B, L, Z = len(windows), seq_len, latents.z_dim
    z = np.zeros((B, L + 1, Z), np.float32)
    a = np.zeros((B, L), np.int64)
    r = np.zeros((B, L), np.float32)
    d = np.zeros((B, L), np.float32)
    step_mask = np.zeros((B, L), np.float32)
    next_mask = np.zeros((B, L), np.float32)
    for i, (e, s) in enumerate(windows):
        off, T = int(latents.offsets[e]), int(latents.offsets[e + 1] - latents.offsets[e])
        n = min(L, T - s)  # steps in this window
        m = min(L + 1, T - s)  # frames available: z_s .. z_{s+n} when the next frame exists
        rows = slice(off + s, off + s + m)
        eps = rng.standard_normal((m, Z)).astype(np.float32)
        z[i, :m] = latents.mu[rows] + np.exp(0.5 * latents.logvar[rows]) * eps
        a[i, :n] = latents.actions[off + s : off + s + n]
        r[i, :n] = latents.rewards[off + s : off + s + n]
        d[i, :n] = latents.done[off + s : off + s + n]
        step_mask[i, :n] = 1
        next_mask[i, : m - 1] = 1  # step t has a target iff frame t+1 exists
    zt = torch.from_numpy(z)
    return {
        "z": zt[:, :L],
        "z_next": zt[:, 1:],
        "actions": torch.from_numpy(a),
        "reward": torch.from_numpy(r),
        "done": torch.from_numpy(d),
        "step_mask": torch.from_numpy(step_mask),
        "next_mask": torch.from_numpy(next_mask),
    }


def train_rnn(
    path: Path,
    latents: Latents,
    preset: Preset,
    seed: int = 0,
    on_epoch_start: Callable[[int, int], None] | None = None,
    on_batch: Progress | None = None,
    vae_sha256: str | None = None,
    refit: bool = False,
) -> dict[str, Any]:
    """Train (or continue) the MDN-RNN to ``preset.rnn_epochs`` epochs; returns the last epoch's metrics.

    Every window starts with a zero LSTM state, at an episode boundary or
    inside an episode (truncated BPTT without carried state). A checkpoint
    trained on another VAE's latents (``vae_sha256`` differs) is not continued:
    training starts afresh and overwrites it — unless ``refit``, where it
    continues from its weights on the new latents (an iterative round that
    fine-tuned V, whose latents moved a little).
    """
    prog = progress_of(path) or {}
    changed = path.is_file() and vae_sha256 is not None and prog.get("vae_sha256") not in (None, vae_sha256)
    if changed and refit:
        log.info("dream.rnn.refit", reason="the VAE was fine-tuned; M continues on its new latents", path=str(path))
    elif changed:
        log.warning("dream.rnn.restart", reason="the VAE changed since this MDN-RNN was trained", path=str(path))
        path.unlink()
        prog = {}
    done = int(prog.get("epochs", 0))
    if done >= preset.rnn_epochs:
        log.info("dream.rnn.skip", epochs=done)
        return {"epochs": done, "skipped": True}
    config = rnn_config(preset, latents.z_dim)
    rnn = build_rnn(config)
    opt = torch.optim.Adam(rnn.parameters(), lr=preset.rnn_lr)
    _resume(path, "mdnrnn", rnn, opt, config)
    windows = sequence_windows(latents, preset.rnn_seq_len)
    rng = np.random.default_rng(seed + 1000 + done)
    torch.manual_seed(seed + done)
    metrics: dict[str, float] = {}
    for epoch in range(done, preset.rnn_epochs):
        order = rng.permutation(len(windows))
        n_batches = max(1, -(-len(order) // preset.rnn_batch))
        if on_epoch_start is not None:
            on_epoch_start(epoch, n_batches)
        rnn.train()
        sums = {"loss": 0.0, "mdn": 0.0, "reward": 0.0, "done": 0.0}
        started = time.perf_counter()
        for b in range(n_batches):
            batch = make_batch(
                latents, windows[order[b * preset.rnn_batch : (b + 1) * preset.rnn_batch]], preset.rnn_seq_len, rng
            )
            heads, _ = rnn(batch["z"], batch["actions"])
            losses = rnn_loss(
                heads,
                batch["z_next"],
                batch["next_mask"],
                batch["reward"],
                batch["done"],
                batch["step_mask"],
                preset.done_pos_weight,
                preset.reward_weight,
            )
            opt.zero_grad(set_to_none=True)
            losses["total"].backward()
            torch.nn.utils.clip_grad_norm_(rnn.parameters(), 1.0)
            opt.step()
            sums["loss"] += losses["total"].item()
            for k in ("mdn", "reward", "done"):
                sums[k] += losses[k].item()
            if on_batch is not None:
                on_batch(b + 1, n_batches, {k: v / (b + 1) for k, v in sums.items()})
        metrics = {k: v / n_batches for k, v in sums.items()}
        save_part(
            path,
            "mdnrnn",
            config,
            rnn.state_dict(),
            {"epochs": epoch + 1, "steps": int(len(latents.actions)), "vae_sha256": vae_sha256},
            opt,
            extra={"preset": preset.name, "metrics": metrics},
        )
        log.info(
            "dream.rnn.epoch",
            epoch=epoch + 1,
            seconds=round(time.perf_counter() - started, 1),
            **{k: round(v, 4) for k, v in metrics.items()},
        )
    return {"epochs": preset.rnn_epochs, **metrics}
