"""Per-frame latents of the collected episodes: the RNN's training data and the dreams' start states.

After ``train-vae`` every stored frame is encoded once; the posterior
``mu`` and ``logvar`` of each frame are kept (the RNN samples
``z = mu + exp(logvar / 2) · ε`` afresh for every batch, World Models' trick
against overfitting to the means). Layout of ``latents.safetensors``:

* ``mu``, ``logvar``  float32 ``[N, Z]``: all episodes' frames, concatenated;
* ``actions``        int64 ``[N]``: discrete action taken on each frame;
* ``rewards``        float32 ``[N]``: the engine's reward for that action;
* ``done``           float32 ``[N]``: 1 on an episode's last step when the player died then;
* ``offsets``        int64 ``[E + 1]``: episode ``e`` is rows ``offsets[e]:offsets[e+1]``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from golem.data.store import TrajectoryStore
from golem.errors import GolemError
from golem.learning.checkpoints import load_checkpoint, save_checkpoint
from golem_worldmodel.actions import to_discrete
from golem_worldmodel.collect import TAG
from golem_worldmodel.vae import ConvVAE, frames_to_input


@dataclass
class Latents:
    """Encoded episodes (see the module docstring for the arrays)."""

    mu: np.ndarray
    logvar: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    done: np.ndarray
    offsets: np.ndarray
    episode_ids: list[int]

    @property
    def n_episodes(self) -> int:
        return len(self.offsets) - 1

    @property
    def z_dim(self) -> int:
        return int(self.mu.shape[1])

    def lengths(self) -> np.ndarray:
        """``[E]`` steps per episode."""
        return np.diff(self.offsets)

    def episode(self, e: int) -> dict[str, np.ndarray]:
        """Arrays of episode ``e`` (``mu``, ``logvar`` ``[T, Z]``; ``actions``, ``rewards``, ``done`` ``[T]``)."""
        s, t = int(self.offsets[e]), int(self.offsets[e + 1])
        return {k: getattr(self, k)[s:t] for k in ("mu", "logvar", "actions", "rewards", "done")}

    def split(self, holdout: float) -> tuple[Latents, Latents]:
        """``(train, held-out)``: the last ``holdout`` share of episodes held out (at least one when possible)."""
        E = self.n_episodes
        n_val = min(E - 1, max(1 if E > 1 and holdout > 0 else 0, int(round(E * holdout))))
        return self.subset(range(E - n_val)), self.subset(range(E - n_val, E))

    def subset(self, episodes: Any) -> Latents:
        """A :class:`Latents` of the given episode indices."""
        idx = list(episodes)
        parts = [self.episode(e) for e in idx]
        lengths = [len(p["actions"]) for p in parts]
        cat = lambda k, dt: np.concatenate([p[k] for p in parts]).astype(dt) if parts else np.zeros((0,), dt)  # noqa: E731
        return Latents(
            mu=cat("mu", np.float32).reshape(-1, self.z_dim),
            logvar=cat("logvar", np.float32).reshape(-1, self.z_dim),
            actions=cat("actions", np.int64),
            rewards=cat("rewards", np.float32),
            done=cat("done", np.float32),
            offsets=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
            episode_ids=[self.episode_ids[e] for e in idx],
        )

    @classmethod
    def join(cls, parts: list[Latents]) -> Latents:
        """The episodes of ``parts``, in order, as one :class:`Latents` (at least one part)."""
        lengths = np.concatenate([p.lengths() for p in parts])
        return cls(
            mu=np.concatenate([p.mu for p in parts]),
            logvar=np.concatenate([p.logvar for p in parts]),
            actions=np.concatenate([p.actions for p in parts]),
            rewards=np.concatenate([p.rewards for p in parts]),
            done=np.concatenate([p.done for p in parts]),
            offsets=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
            episode_ids=[i for p in parts for i in p.episode_ids],
        )


def store_episodes(store: TrajectoryStore, scenario: str | None = None) -> list[Any]:
    """This pipeline's episodes in ``store`` (tag ``wm-random``; of ``scenario`` when given), by id."""
    return [i for i in store.episodes() if TAG in i.meta.tags and (scenario is None or i.meta.scenario == scenario)]


def episode_labels(info: Any, store: TrajectoryStore) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(actions [T] int64, rewards [T] float32, done [T] float32)`` of a stored episode.

    ``done[T-1] = 1`` iff the episode ended in the player's death (``meta.extra["dead"]``).
    """
    buttons = store.read(info, "actions")
    actions = to_discrete(np.asarray(buttons), info.meta.action_names)
    rewards = np.asarray(store.read(info, "rewards"), np.float32).copy()
    done = np.zeros(len(actions), np.float32)
    if float(info.meta.extra.get("dead", 0.0)) > 0.5:
        done[-1] = 1.0
    return actions, rewards, done


@torch.no_grad()
def encode_store(
    vae: ConvVAE,
    store_path: Path,
    scenario: str | None = None,
    batch: int = 256,
    on_episode: Callable[[int, int], None] | None = None,
    known: Latents | None = None,
) -> Latents:
    """Encode every pipeline episode of the store with ``vae`` (eval mode). ``on_episode(done, total)`` reports
    progress.

    ``known``: latents of the same VAE whose episodes are the store's first ones, in order (a round's
    earlier data); only the episodes after them are encoded, and the result is ``known`` followed by them —
    the arrays a full encoding gives (an episode is encoded alone, in the same batches).
    """
    vae.eval()
    with TrajectoryStore.open(store_path) as store:
        infos = store_episodes(store, scenario)
        if not infos:
            raise GolemError(f"no collected episodes in {store_path}; run `golem dream collect` first")
        if known is not None:
            if [i.id for i in infos[: len(known.episode_ids)]] != known.episode_ids:
                raise GolemError("the known latents are not the store's first episodes; encode the store afresh")
            infos = infos[len(known.episode_ids) :]
            if not infos:
                return known
        mus, logvars, acts, rews, dones = [], [], [], [], []
        for n, info in enumerate(infos):
            frames = np.asarray(store.read(info, "frames"))
            m, lv = [], []
            for s in range(0, len(frames), batch):
                x = frames_to_input(torch.from_numpy(frames[s : s + batch].copy()))
                a, b = vae.encode(x)
                m.append(a)
                lv.append(b)
            mus.append(torch.cat(m).numpy())
            logvars.append(torch.cat(lv).numpy())
            a, r, d = episode_labels(info, store)
            acts.append(a)
            rews.append(r)
            dones.append(d)
            if on_episode is not None:
                on_episode(n + 1, len(infos))
    lengths = [len(a) for a in acts]
    new = Latents(
        mu=np.concatenate(mus).astype(np.float32),
        logvar=np.concatenate(logvars).astype(np.float32),
        actions=np.concatenate(acts),
        rewards=np.concatenate(rews),
        done=np.concatenate(dones),
        offsets=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
        episode_ids=[i.id for i in infos],
    )
    return new if known is None else Latents.join([known, new])


def save_latents(path: Path, latents: Latents, vae_sha: str, scenario: str | None) -> Path:
    """Write ``latents`` atomically; ``vae_sha`` ties them to the VAE that made them."""
    tensors = {
        k: torch.from_numpy(np.ascontiguousarray(getattr(latents, k)))
        for k in ("mu", "logvar", "actions", "rewards", "done", "offsets")
    }
    return save_checkpoint(
        path,
        tensors,
        {"model": "latents", "config": {"z_dim": latents.z_dim}},
        extra={"vae_sha256": vae_sha, "episode_ids": latents.episode_ids, "scenario": scenario},
    )


def load_latents(path: Path) -> tuple[Latents, dict[str, Any]]:
    """``(latents, metadata)`` from :func:`save_latents`'s file."""
    state, meta = load_checkpoint(path)
    if meta.get("spec", {}).get("model") != "latents":
        raise GolemError(f"{path} is not a latents file")
    arrays = {k: v.numpy() for k, v in state.items()}
    return Latents(**arrays, episode_ids=[int(i) for i in meta.get("episode_ids", [])]), meta
