"""CMA-ES on the linear controller, entirely inside the dream.

A generation: ``population`` candidates × ``rollouts`` dreams each, all
``P · R`` dreams in one lockstep :class:`DreamEnv` batch. Every candidate gets
the *same* ``R`` dream starts and the same random stream (paired comparison:
a candidate cannot win by being handed easier starts). Fitness is the mean
dream return; ``cma`` minimises, so it is given the negative. Every
``real_every`` generations the current best (the best dream fitness seen so
far) also plays ``real_episodes`` real episodes, logged beside its dream score.

Checkpoint: the CMA-ES mean, step size and generation, and the best
candidate. No pickle of the ``cma`` object is kept, so a resumed run restarts
the search distribution from the saved mean and sigma with a fresh
(isotropic) covariance — logged as ``dream.cmaes.resume``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import structlog
import torch

from golem_worldmodel.checkpoints import load_part, progress_of, save_part
from golem_worldmodel.controller import LinearController, act_population, n_params
from golem_worldmodel.dream_env import DreamEnv, StartPool, dream_returns
from golem_worldmodel.mdnrnn import MDNRNN
from golem_worldmodel.presets import Preset

log = structlog.get_logger("golem_worldmodel.evolution")

#: ``on_generation(generation, record)``; ``record`` has dream/real scores.
OnGeneration = Callable[[int, dict[str, Any]], None]
#: ``real_score(params) -> list of survival tics`` in the real engine.
RealScore = Callable[[np.ndarray], list[int]]


def controller_config(rnn: MDNRNN) -> dict[str, Any]:
    return {"z_dim": rnn.z_dim, "hidden": rnn.hidden}


def load_controller(path: Path, which: str = "mean") -> tuple[LinearController, dict[str, Any]]:
    """A controller saved at ``path`` and its metadata.

    ``which``: ``mean`` (the CMA-ES mean: the current solution) or ``best``
    (the top candidate of the last generation).
    """
    state, meta, _ = load_part(path, "controller")
    cfg = meta["spec"]["config"]
    if which not in ("best", "mean"):
        from golem.errors import GolemError

        raise GolemError(f"controller must be 'best' or 'mean', got {which!r}")
    return LinearController(state[which].float().numpy(), int(cfg["z_dim"]), int(cfg["hidden"])), meta


def train_controller(
    path: Path,
    log_path: Path,
    rnn: MDNRNN,
    pool: StartPool,
    preset: Preset,
    seed: int = 0,
    real_score: RealScore | None = None,
    on_generation: OnGeneration | None = None,
    rnn_sha256: str | None = None,
    members: Sequence[MDNRNN] = (),
    init: np.ndarray | None = None,
) -> dict[str, Any]:
    """Evolve (or continue evolving) the controller to ``preset.generations`` generations.

    ``init``: the mean a fresh search starts from (``[Z + H + 1]``; default zeros) — an iterative round starts from
    the controller it kept, with the preset's ``sigma0``.

    ``members``: the rest of an MDN-RNN ensemble (``rnn`` is member 0; the
    dream dies as ``preset.ensemble_death`` says). A checkpoint evolved in
    another dream (``rnn_sha256``, the members' digests, differs) is not
    continued: the search starts afresh and overwrites it.
    """
    import cma

    D = n_params(rnn.z_dim, rnn.hidden)
    config = controller_config(rnn)
    prog = progress_of(path) or {}
    if path.is_file() and rnn_sha256 is not None and prog.get("rnn_sha256") not in (None, rnn_sha256):
        log.warning(
            "dream.cmaes.restart", reason="the MDN-RNN changed since this controller was evolved", path=str(path)
        )
        path.unlink()
        log_path.unlink(missing_ok=True)
        prog = {}
    done = int(prog.get("generations", 0))
    if done >= preset.generations:
        log.info("dream.cmaes.skip", generations=done)
        return {"generations": done, "skipped": True, "dream_of_mean": prog.get("dream_of_mean")}
    mean, sigma = np.zeros(D), preset.sigma0
    if init is not None:
        if np.shape(init) != (D,):
            from golem.errors import GolemError

            raise GolemError(f"the controller to start from has {np.shape(init)} parameters, this dream needs ({D},)")
        mean = np.asarray(init, np.float64).copy()
    if path.is_file():
        state, meta, _ = load_part(path, "controller")
        mean, sigma = state["mean"].double().numpy(), float(prog.get("sigma", preset.sigma0))
        log.info("dream.cmaes.resume", generation=done, sigma=sigma, note="covariance restarts isotropic")
    es = cma.CMAEvolutionStrategy(mean, sigma, {"popsize": preset.population, "seed": seed + 1 + done, "verbose": -9})
    P, R = preset.population, preset.rollouts
    env = DreamEnv(
        rnn,
        pool,
        (P + 1) * R,
        temperature=preset.temperature,
        reward_mode=preset.reward_mode,
        reward_lambda=preset.reward_lambda,
        termination=preset.termination,
        max_steps=preset.dream_steps,
        autoreset=False,
        noise_period=R,
        members=members,
        death=preset.ensemble_death,
    )
    rng = np.random.default_rng(seed + 7919 * (done + 1))
    result: dict[str, Any] = {}
    for gen in range(done, preset.generations):
        started = time.perf_counter()
        cands = np.asarray(es.ask())
        e, t0 = pool.sample(R, rng)
        starts = (np.tile(e, P + 1), np.tile(t0, P + 1))  # candidate-major: the same R starts for every candidate
        mean_now = np.asarray(es.mean, np.float64)
        params = torch.from_numpy(np.concatenate([cands, mean_now[None]]).astype(np.float32))  # row P: the mean
        gen_seed = int(rng.integers(0, 2**31 - 1))
        # noise_period=R: candidate p's r-th dream and candidate q's r-th dream share start and noise.
        out = dream_returns(
            env, lambda obs, rows, params=params: act_population(params, obs, rows, R), starts, gen_seed
        )
        fit_all = out["return"].reshape(P + 1, R).mean(1)
        fit, mean_fit = fit_all[:P], float(fit_all[P])
        es.tell(list(cands), list(-fit))
        i = int(np.argmax(fit))
        best = cands[i].copy()
        record: dict[str, Any] = {
            "generation": gen + 1,
            "dream_mean": float(fit.mean()),
            "dream_max": float(fit[i]),
            "dream_of_mean": mean_fit,
            "sigma": float(es.sigma),
            "seconds": round(time.perf_counter() - started, 2),
            "dream_steps": int(out["steps"].sum()),
        }
        if (
            real_score is not None
            and preset.real_every > 0
            and ((gen + 1) % preset.real_every == 0 or gen + 1 == preset.generations)
        ):
            real = real_score(mean_now)
            record["real_mean"] = float(np.mean(real))
            record["real_episodes"] = len(real)
        save_part(
            path,
            "controller",
            config,
            {
                "best": torch.from_numpy(best.astype(np.float32)),
                "mean": torch.from_numpy(np.asarray(es.mean, np.float64)),
            },
            {"generations": gen + 1, "sigma": float(es.sigma), "dream_of_mean": mean_fit, "rnn_sha256": rnn_sha256},
            extra={
                "preset": preset.name,
                "temperature": preset.temperature,
                "reward_mode": preset.reward_mode,
                "termination": preset.termination,
                "warmup": preset.warmup,
                "rnn_members": 1 + len(members),
                "ensemble_death": preset.ensemble_death,
                "population": P,
                "rollouts": R,
            },
        )
        with open(log_path, "a") as fh:
            fh.write(json.dumps(record) + "\n")
        log.info("dream.cmaes.generation", **record)
        if on_generation is not None:
            on_generation(gen + 1, record)
        result = record
    return result
