"""Is the dream as deadly as the real game? Fixed policies and the controller, dreamt and played.

CMA-ES maximises survival *in the dream*; a controller is only as good as
the dream is honest. :func:`calibrate` plays the same policies in M's dream
and in the real engine and reports their survival side by side:

* ``noop``, ``left``, ``right`` — one discrete action every tic (what a
  collapsed controller does), ``random`` — a uniform random action every tic,
  and ``controller`` — a run's CMA-ES mean, when given;
* dream: ``dreams`` dreams from the first steps of collected episodes (``t0``
  = the warm-up, as a real episode starts), the preset's τ, termination and
  ensemble; survival in tics including the warm-up;
* real: ``episodes`` engine episodes from seed 60,000 (unseen by training,
  the real-engine checks and the evaluation). A fixed policy's real survival
  depends only on the engine, so it is cached in the run folder.

:func:`honest` is ``golem dream iterate``'s gate: every held action and the
controller within ``bound``× of the engine (either way). The random policy is
reported but not gated: it is what the first data were collected with.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from golem.atomic import atomic_write
from golem.settings import GolemSettings
from golem_worldmodel.dream_env import DreamEnv, StartPool, dream_returns
from golem_worldmodel.latents import Latents
from golem_worldmodel.mdnrnn import MDNRNN
from golem_worldmodel.presets import Preset
from golem_worldmodel.real_runner import play_real

#: The held actions: one discrete action every tic.
FIXED = {"noop": 0, "left": 1, "right": 2}
#: The policies the gate checks (``random`` is reported only).
GATED = ("noop", "left", "right", "controller")
#: Engine seed of the first real calibration episode.
REAL_SEED = 60_000


def death_head(rnn: MDNRNN, latents: Latents) -> dict[str, float]:
    """M's death head teacher-forced on every collected episode that ends in a death.

    Returns the share of deaths where ``p_done > 0.5`` on the dying step, the false-positive rate on the other
    steps, and the median number of steps ahead of the death at which it first fires.
    """
    at_death, false_pos, lead = [], [], []
    with torch.no_grad():
        for e in range(latents.n_episodes):
            ep = latents.episode(e)
            done = ep["done"].astype(bool)
            if not done.any():
                continue
            heads, _ = rnn(torch.from_numpy(ep["mu"])[None].float(), torch.from_numpy(ep["actions"])[None])
            p = torch.sigmoid(heads["done_logit"][0]).numpy()
            at_death.append(float(p[done].max()))
            false_pos.append(float((p[~done] > 0.5).mean()))
            fired = np.flatnonzero(p > 0.5)
            lead.append(float(len(p) - 1 - fired[0]) if len(fired) else -1.0)
    lead_arr = np.asarray(lead)
    return {
        "deaths": len(at_death),
        "fires_on_death_step": float(np.mean(np.asarray(at_death) > 0.5)) if at_death else float("nan"),
        "false_positive_rate": float(np.mean(false_pos)) if false_pos else float("nan"),
        "median_steps_ahead": float(np.median(lead_arr[lead_arr >= 0])) if (lead_arr >= 0).any() else float("nan"),
    }


def _play(
    settings: GolemSettings, vae: Any, rnn: MDNRNN, policy: Any, scenario: str, preset: Preset, episodes: int
) -> list[int]:
    """Real survival (tics) of ``policy`` (``None``: random) over ``episodes`` episodes from :data:`REAL_SEED`,
    rendered as the run's data were."""
    return play_real(
        settings,
        vae,
        rnn,
        policy,
        episodes,
        scenario,
        seed=REAL_SEED,
        max_steps=preset.max_steps,
        screen_flashes=preset.screen_flashes,
    )["survival"]


def _real_fixed(
    settings: GolemSettings,
    vae: Any,
    rnn: MDNRNN,
    action: int,
    scenario: str,
    preset: Preset,
    episodes: int,
    cache: Path | None,
) -> list[int]:
    """Real survival of one held action (cached in ``cache`` by scenario, action, episodes, seed and rendering)."""
    key = f"{scenario}|{action}|{episodes}|{REAL_SEED}|{preset.max_steps}|{int(preset.screen_flashes)}"
    stored: dict[str, Any] = {}
    if cache is not None and cache.is_file():
        try:
            stored = json.loads(cache.read_text())
        except (OSError, ValueError):
            stored = {}
    if isinstance(stored.get(key), list):
        return [int(x) for x in stored[key]]
    survival = _play(
        settings,
        vae,
        rnn,
        lambda obs: torch.full((obs.shape[0],), action, dtype=torch.long),
        scenario,
        preset,
        episodes,
    )
    if cache is not None:
        stored[key] = [int(x) for x in survival]
        with atomic_write(cache) as fh:
            fh.write(json.dumps(stored, indent=1).encode())
    return survival


def calibrate(
    settings: GolemSettings,
    scenario: str,
    preset: Preset,
    vae: Any,
    rnn: MDNRNN,
    members: Sequence[MDNRNN],
    latents: Latents,
    controller: Any | None = None,
    *,
    dreams: int = 256,
    episodes: int = 10,
    real: bool = True,
    controller_real: Sequence[float] | None = None,
    random_policy: bool = True,
    cache: Path | None = None,
) -> dict[str, dict[str, Any]]:
    """Survival in tics of each policy, dreamt and (with ``real``) played: ``{policy: {dream, real, ratio}}``.

    ``dream``/``real`` are ``[mean, std]``; ``ratio`` is dream ÷ real. ``controller``: a callable on
    ``[n, Z + H]`` observations (a :class:`~golem_worldmodel.controller.LinearController`), added as the
    ``controller`` row; ``controller_real``: its real survivals when already measured (a round's check),
    else it plays ``episodes`` from :data:`REAL_SEED`. ``cache``: a JSON file for the held actions' real
    survival (it depends only on the engine).
    """
    pool = StartPool.from_latents(latents, preset.warmup)
    env = DreamEnv(
        rnn,
        pool,
        dreams,
        temperature=preset.temperature,
        reward_mode="survival",
        termination=preset.termination,
        max_steps=preset.dream_steps,
        autoreset=False,
        members=members,
        death=preset.ensemble_death,
    )
    starts_e, _ = pool.sample(dreams, np.random.default_rng(1))
    starts = (starts_e, np.full(dreams, preset.warmup))
    policies: dict[str, Any] = {
        name: lambda obs, rows, k=k: torch.full((len(rows),), k, dtype=torch.long) for name, k in FIXED.items()
    }
    if random_policy:
        policies["random"] = lambda obs, rows: torch.randint(0, 3, (len(rows),))
    if controller is not None:
        policies["controller"] = lambda obs, rows: controller(obs)
    rows: dict[str, dict[str, Any]] = {}
    for name, policy in policies.items():
        torch.manual_seed(0)
        dream = dream_returns(env, policy, starts, seed=0)["steps"] + preset.warmup
        survival: Sequence[float] = []
        if real:
            if name in FIXED:
                survival = _real_fixed(settings, vae, rnn, FIXED[name], scenario, preset, episodes, cache)
            elif name == "controller" and controller_real is not None:
                survival = controller_real
            else:
                real_policy = controller if name == "controller" else None
                survival = _play(settings, vae, rnn, real_policy, scenario, preset, episodes)
        r = np.asarray(survival, np.float64) if len(survival) else np.asarray([np.nan])
        rows[name] = {
            "dream": [float(dream.mean()), float(dream.std())],
            "real": [float(r.mean()), float(r.std())],
            "ratio": float(dream.mean() / r.mean()) if r.mean() > 0 else float("nan"),
        }
    return rows


def honest(rows: dict[str, dict[str, Any]], bound: float = 1.5) -> bool:
    """Every gated policy present in ``rows`` dreams within ``bound``× of its real survival (either way)."""
    ratios = [rows[name]["ratio"] for name in GATED if name in rows]
    return bool(ratios) and all(np.isfinite(r) and r > 0 and max(r, 1.0 / r) <= bound for r in ratios)
