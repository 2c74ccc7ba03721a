"""``make_dream_env``: the ``dream`` environment as the registry builds it, from a run folder's files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from golem.errors import GolemError
from golem.registry import Registry
from golem.settings import GolemSettings
from golem_worldmodel.dream_env import DreamEnv, StartPool


def make_dream_env(
    settings: GolemSettings,
    registry: Registry | None = None,
    run: str | Path | None = None,
    num_envs: int = 64,
    warmup: int = 8,
    **kwargs: Any,
) -> DreamEnv:
    """A :class:`DreamEnv` over the MDN-RNN and latents of ``run`` (default ``<data.root>/dream/<game.scenario>``).

    ``registry`` is the environment factories' common argument; the dream needs no component from it.
    ``kwargs`` go to :class:`DreamEnv` (``temperature``, ``reward_mode``, ``termination``, ``max_steps``,
    ``autoreset``).

    Raises:
        GolemError: the run has no trained MDN-RNN or latents yet.
    """
    from golem_worldmodel.latents import load_latents
    from golem_worldmodel.paths import RunPaths
    from golem_worldmodel.training import load_rnn

    paths = RunPaths(Path(run) if run is not None else settings.data.root / "dream" / settings.game.scenario)
    for p in (paths.rnn, paths.latents):
        if not p.is_file():
            raise GolemError(
                f"{p} does not exist; train the world model first (`golem dream train-rnn --run {paths.root}`)"
            )
    latents, _ = load_latents(paths.latents)
    return DreamEnv(load_rnn(paths.rnn), StartPool.from_latents(latents, warmup), num_envs, **kwargs)
