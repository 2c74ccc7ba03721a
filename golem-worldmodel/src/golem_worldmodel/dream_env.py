"""The MDN-RNN as a batched environment: the *dream*.

Three design decisions, kept exactly as the specification states them.

1. Timing. M was trained as ``h_{t+1} = LSTM(h_t, [z_t, a_t])`` with its heads
   reading ``h_{t+1}``. The hidden state that has consumed ``z_t`` needs
   ``a_t``, so the controller acts on::

       obs_t = [ z_t , h_pre_t ]     h_pre_t = LSTM output after (z_{t-1}, a_{t-1})

   then ``(z_t, a_t)`` is fed to M, which returns ``z_{t+1}`` (sampled),
   ``h_{t+1}`` (the next ``h_pre``), the reward of step ``t`` and the
   probability that the player dies during ``t → t+1``. The real-engine runner
   (:mod:`golem_worldmodel.real_runner`) uses the identical recurrence with
   ``z_t = encode(frame_t).mu``; ``test_dream_and_real_timing_agree`` pins it.

2. Where a dream starts. At a real ``(episode, t0)`` of the collected data,
   never at ``h = 0``: M is warm-started by teacher-forcing the ``warmup``
   true latents (posterior means) and true actions at steps
   ``t0 - warmup .. t0 - 1``, and the first observation is ``z_t0 = mu[t0]``.
   Nothing at or after ``t0`` is read.

3. The reward is predicted. ``predicted``: M's reward head; ``survival``: +1
   for every step the dream is alive (the step it dies in included, as the
   engine's living reward counts); ``mix``: ``survival + λ · predicted``.
   Termination comes from the death head: ``threshold`` (dies when
   ``p_done > 0.5``) or ``sample`` (Bernoulli). ``truncated`` after ``max_steps``.

Temperature ``τ`` is the paper's: mixture logits / τ, standard deviations · √τ.

4. (Beyond the specification.) An ensemble (``members``): M trained several times on
   the same latents from different seeds. Each member keeps its own state, fed the same ``(z_t, a_t)``;
   every step and every dream draws one member, whose mixture gives ``z_{t+1}``
   (trajectory sampling, as PETS does), and the death comes from ``death``:
   ``max`` (the most pessimistic member: a dream ends when any member sees the
   death) or ``drawn`` (the drawn member's). One member's mistaken dynamics —
   a held action whose dream outlives the engine 3–10×, a different action per
   training seed (``bench/bench_dream_calibration.py``) — then no longer holds for
   a whole dream. The controller reads member 0's ``h``, as in the real engine.
   A mistake every member shares stays: that one is in the data, and the probe
   episodes of :mod:`golem_worldmodel.collect` are what remove it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np
import torch
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from golem.errors import GolemError
from golem_worldmodel.actions import N_ACTIONS
from golem_worldmodel.latents import Latents
from golem_worldmodel.mdnrnn import MDNRNN, sample_next

REWARD_MODES = ("predicted", "survival", "mix")
TERMINATIONS = ("threshold", "sample")
#: How an ensemble's members decide a death: the most pessimistic one, or the member drawn for the step.
ENSEMBLE_DEATHS = ("max", "drawn")


@dataclass
class StartPool:
    """Real latent trajectories to warm-start dreams from.

    Attributes:
        mu: ``[N, Z]`` posterior means of all frames (episodes concatenated).
        actions: ``[N]`` int64 discrete actions.
        offsets: ``[E + 1]`` episode boundaries.
        warmup: teacher-forced steps before ``t0``.
    """

    mu: np.ndarray
    actions: np.ndarray
    offsets: np.ndarray
    warmup: int

    @classmethod
    def from_latents(cls, latents: Latents, warmup: int) -> StartPool:
        pool = cls(
            latents.mu.astype(np.float32),
            latents.actions.astype(np.int64),
            latents.offsets.astype(np.int64),
            int(warmup),
        )
        if not len(pool.eligible()):
            raise GolemError(f"no episode is longer than the warm-up ({warmup} steps); collect longer episodes")
        return pool

    def eligible(self) -> np.ndarray:
        """Episode indices with at least one ``t0`` in ``[warmup, T - 1]``."""
        return np.flatnonzero(np.diff(self.offsets) > self.warmup)

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``n`` ``(episode, t0)`` pairs with ``warmup <= t0 <= T_e - 1`` (a full warm-up window behind each)."""
        ok = self.eligible()
        e = ok[rng.integers(0, len(ok), size=n)]
        T = np.diff(self.offsets)[e]
        t0 = self.warmup + np.floor(rng.random(n) * (T - self.warmup)).astype(np.int64)
        return e, t0

    def window(self, e: np.ndarray, t0: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Warm-up inputs and first latent: ``(z [B, W, Z], a [B, W], z_t0 [B, Z])`` from rows strictly before
        ``t0``."""
        rows = self.offsets[e][:, None] + t0[:, None] - self.warmup + np.arange(self.warmup)[None, :]
        return self.mu[rows], self.actions[rows], self.mu[self.offsets[e] + t0]


class DreamEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` dreams of M rolled in lockstep, with the Gymnasium vector-env API.

    Observation ``[B, Z + H]`` float32 (``[z_t, h_pre_t]``), action ``[B]`` in
    ``{0, 1, 2}``. With ``autoreset=True`` (``AutoresetMode.SAME_STEP``) a
    finished dream restarts at a fresh real start within the same ``step``,
    its last observation in ``info["final_obs"]``; with ``autoreset=False``
    (``DISABLED``) finished dreams stay finished until ``reset``.

    Args:
        rnn: a trained :class:`MDNRNN` (put in eval mode).
        pool: the start states.
        num_envs: ``B``.
        temperature: ``τ``.
        reward_mode: ``predicted``, ``survival`` or ``mix``.
        reward_lambda: ``λ`` of ``mix``.
        termination: ``threshold`` or ``sample``.
        max_steps: steps before ``truncated``.
        noise_period: when set to ``R``, rows ``r, r + R, r + 2R, …`` draw the same
            random numbers (CMA-ES: candidate ``p``'s ``r``-th dream and candidate
            ``q``'s ``r``-th dream share start *and* noise).
        members: further MDN-RNNs trained on the same latents (an ensemble with ``rnn``
            as member 0; see the module docstring, point 4). Empty: ``rnn`` alone.
        death: ``max`` or ``drawn``: how the members' death probabilities become one.
    """

    def __init__(
        self,
        rnn: MDNRNN,
        pool: StartPool,
        num_envs: int = 64,
        *,
        temperature: float = 1.0,
        reward_mode: str = "survival",
        reward_lambda: float = 1.0,
        termination: str = "threshold",
        max_steps: int = 2100,
        autoreset: bool = True,
        noise_period: int | None = None,
        device: str = "cpu",
        members: Sequence[MDNRNN] = (),
        death: str = "max",
    ) -> None:
        if reward_mode not in REWARD_MODES:
            raise GolemError(f"reward mode must be one of {', '.join(REWARD_MODES)}, got {reward_mode!r}")
        if termination not in TERMINATIONS:
            raise GolemError(f"termination must be one of {', '.join(TERMINATIONS)}, got {termination!r}")
        if pool.mu.shape[1] != rnn.z_dim:
            raise GolemError(f"start pool latents have {pool.mu.shape[1]} dims, the MDN-RNN expects {rnn.z_dim}")
        if death not in ENSEMBLE_DEATHS:
            raise GolemError(f"ensemble death must be one of {', '.join(ENSEMBLE_DEATHS)}, got {death!r}")
        for i, m in enumerate(members, start=1):
            if (m.z_dim, m.n_actions, m.gaussians) != (rnn.z_dim, rnn.n_actions, rnn.gaussians):
                raise GolemError(
                    f"ensemble member {i} has z {m.z_dim}, {m.n_actions} actions, {m.gaussians} Gaussians; "
                    f"member 0 has {rnn.z_dim}, {rnn.n_actions}, {rnn.gaussians}"
                )
        self.rnn = rnn.eval()
        self.members = [m.eval() for m in members]
        self.death = death
        self.pool = pool
        self.num_envs = int(num_envs)
        self.temperature = float(temperature)
        self.reward_mode = reward_mode
        self.reward_lambda = float(reward_lambda)
        self.termination = termination
        self.max_steps = int(max_steps)
        self.autoreset = bool(autoreset)
        self.noise_period = int(noise_period) if noise_period else None
        if self.noise_period and self.num_envs % self.noise_period:
            raise GolemError(f"noise_period {noise_period} does not divide num_envs {num_envs}")
        self.device = torch.device(device)
        self.z_dim, self.hidden = rnn.z_dim, rnn.hidden
        self.metadata = {"autoreset_mode": AutoresetMode.SAME_STEP if autoreset else AutoresetMode.DISABLED}
        self.single_observation_space = spaces.Box(-np.inf, np.inf, (self.z_dim + self.hidden,), np.float32)
        self.single_action_space = spaces.Discrete(N_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._z = torch.zeros(self.num_envs, self.z_dim, device=self.device)
        self._state = rnn.initial_state(self.num_envs, self.device)
        self._member_states = [m.initial_state(self.num_envs, self.device) for m in self.members]
        self._t = torch.zeros(self.num_envs, dtype=torch.long, device=self.device)
        self._finished = torch.zeros(self.num_envs, dtype=torch.bool, device=self.device)
        self._rng = np.random.default_rng()
        self._gen = torch.Generator(device=self.device)
        self.start_e = np.zeros(self.num_envs, np.int64)
        self.start_t0 = np.zeros(self.num_envs, np.int64)

    # --- the recurrence, on tensors (CMA-ES uses these directly) -------------

    @torch.no_grad()
    def warm_start(self, rows: torch.Tensor | np.ndarray | None, e: np.ndarray, t0: np.ndarray) -> None:
        """Start dreams ``rows`` (all when ``None``) at real ``(e, t0)``: teacher-force the warm-up window, set
        ``z_t0``."""
        rows_t = (
            torch.arange(self.num_envs, device=self.device)
            if rows is None
            else torch.as_tensor(rows, device=self.device).long()
        )
        e, t0 = np.asarray(e, np.int64), np.asarray(t0, np.int64)
        z_w, a_w, z0 = self.pool.window(e, t0)
        for rnn, state in zip([self.rnn, *self.members], [self._state, *self._member_states]):
            if self.pool.warmup > 0:
                _, (h, c) = rnn(torch.from_numpy(z_w).to(self.device), torch.from_numpy(a_w).to(self.device))
            else:
                h, c = rnn.initial_state(len(e), self.device)
            state[0][:, rows_t] = h
            state[1][:, rows_t] = c
        self._z[rows_t] = torch.from_numpy(z0).to(self.device)
        self._t[rows_t] = 0
        self._finished[rows_t] = False
        idx = rows_t.cpu().numpy()
        self.start_e[idx], self.start_t0[idx] = e, t0

    def obs_tensor(self, rows: torch.Tensor | None = None) -> torch.Tensor:
        """``[B, Z + H]`` controller inputs ``[z_t, h_pre_t]`` (only ``rows`` when given)."""
        if rows is None:
            return torch.cat([self._z, self._state[0][0]], dim=-1)
        return torch.cat([self._z[rows], self._state[0][0, rows]], dim=-1)

    @torch.no_grad()
    def step_tensor(
        self, actions: torch.Tensor, z_next: torch.Tensor | None = None, rows: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Feed ``(z_t, a_t)`` to M; no autoreset.

        Args:
            actions: ``[n]`` int64, one per stepped dream.
            z_next: teacher-forced ``z_{t+1} [n, Z]`` instead of a sample (tests, diagnostics).
            rows: step only these dreams (int64 ``[n]``); the others are left as they are.
                A dream's random numbers do not depend on which other rows are stepped.

        Returns:
            ``(reward [n], p_done [n], terminated [n] bool, truncated [n] bool)`` of step ``t``;
            afterwards :meth:`obs_tensor` is ``[z_{t+1}, h_{t+1}]``.
        """
        states = [self._state, *self._member_states]
        if rows is None:
            z = self._z
        else:
            z = self._z[rows]
            states = [(s[0][:, rows], s[1][:, rows]) for s in states]
        a = actions.to(self.device).long()
        models = [self.rnn, *self.members]
        stepped = [rnn.advance(z, a, state) for rnn, state in zip(models, states)]
        new_states = [state for _, state in stepped]
        noise = self._noise(rows)
        if self.members:
            pick = (noise[3] * len(models)).long().clamp_(max=len(models) - 1)  # [n] the drawn member
            heads = _drawn_heads(models, [out for out, _ in stepped], pick)
        else:
            heads = self.rnn.heads(stepped[0][0])
        if self.members and self.death == "max":
            done_logits = torch.stack([m.done(out)[:, 0] for m, (out, _) in zip(models, stepped)])
            p_done = torch.sigmoid(done_logits).max(0).values  # [n] the most pessimistic
        else:
            p_done = torch.sigmoid(heads["done_logit"])
        if self.termination == "threshold":
            terminated = p_done > 0.5
        else:
            terminated = noise[2] < p_done
        survival = torch.ones_like(p_done)
        if self.reward_mode == "survival":
            reward = survival
        elif self.reward_mode == "predicted":
            reward = heads["reward"]
        else:
            reward = survival + self.reward_lambda * heads["reward"]
        z_new = (
            sample_next(heads, self.temperature, noise=noise[:2]) if z_next is None else z_next.to(self.device).float()
        )
        if rows is None:
            self._z = z_new
            self._state, *self._member_states = new_states
            self._t += 1
            t = self._t
        else:
            self._z[rows] = z_new
            for target, value in zip([self._state, *self._member_states], new_states):
                target[0][:, rows] = value[0]
                target[1][:, rows] = value[1]
            self._t[rows] += 1
            t = self._t[rows]
        truncated = (t >= self.max_steps) & ~terminated
        return reward, p_done, terminated, truncated

    def _noise(self, rows: torch.Tensor | None = None) -> tuple[torch.Tensor, ...]:
        """``(u [n, Z], eps [n, Z], u_done [n])`` for ``rows`` (all when ``None``), and ``u_member [n]`` with members.

        One draw per row of the whole batch (or per row of one period, tiled,
        when ``noise_period`` is set), then indexed, so a row's numbers do not
        depend on which rows are stepped. A lone M draws no member numbers, so
        its dreams are those it dreamt before ensembles existed.
        """
        n = self.noise_period or self.num_envs
        g, dev = self._gen, self.device
        draws = [
            torch.rand((n, self.z_dim), generator=g, device=dev),
            torch.randn((n, self.z_dim), generator=g, device=dev),
            torch.rand((n,), generator=g, device=dev),
        ]
        if self.members:
            draws.append(torch.rand((n,), generator=g, device=dev))
        if rows is None and n == self.num_envs:
            return tuple(draws)
        idx = torch.arange(self.num_envs, device=dev) if rows is None else rows
        idx = idx % n
        return tuple(d[idx] for d in draws)

    # --- Gymnasium VectorEnv API ---------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Warm-start dreams. ``options``: ``starts=(e, t0)`` pins the starts; ``reset_mask`` restarts only those rows.

        Returns ``(obs [B, Z + H], info)`` with ``info["start_episode"]``, ``info["start_t0"]``.
        """
        if seed is not None:
            self._rng = np.random.default_rng(seed)
            self._gen.manual_seed(int(seed) + 1)
        options = dict(options or {})
        mask = options.get("reset_mask")
        rows = np.arange(self.num_envs) if mask is None else np.flatnonzero(np.asarray(mask))
        starts = options.get("starts")
        e, t0 = (
            self.pool.sample(len(rows), self._rng) if starts is None else (np.asarray(starts[0]), np.asarray(starts[1]))
        )
        if len(e) != len(rows):
            raise ValueError(f"starts give {len(e)} dreams, {len(rows)} are being reset")
        self.warm_start(rows, e, t0)
        return self.obs_tensor().cpu().numpy(), {"start_episode": self.start_e.copy(), "start_t0": self.start_t0.copy()}

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Advance every dream one step. Returns ``(obs, reward, terminated, truncated, info)``; ``info["p_done"]``.

        With autoreset, dreams that ended this step also report ``info["final_obs"]`` and
        ``info["final_info"]`` (masked by ``_final_obs`` / ``_final_info``), as Gymnasium's vector envs do.

        Raises:
            GolemError: ``actions`` is not ``num_envs`` integers in the action space ``{0, …, N−1}``.
        """
        raw = np.asarray(actions)
        if (
            raw.size != self.num_envs
            or raw.dtype.kind not in "iub"
            or (raw.size and (raw.min() < 0 or raw.max() >= N_ACTIONS))
        ):
            raise GolemError(
                f"dream actions must be {self.num_envs} integers in 0..{N_ACTIONS - 1}, "
                f"got {raw.dtype} {list(raw.shape)}"
                + (f" in {raw.min()}..{raw.max()}" if raw.size and raw.dtype.kind in "iufb" else "")
            )
        a = torch.as_tensor(raw, dtype=torch.long, device=self.device).reshape(self.num_envs)
        frozen = self._finished.clone()
        reward, p_done, terminated, truncated = self.step_tensor(a)
        reward = torch.where(frozen, torch.zeros_like(reward), reward)
        terminated &= ~frozen
        truncated &= ~frozen
        ended = terminated | truncated
        info: dict[str, Any] = {"p_done": p_done.cpu().numpy()}
        obs = self.obs_tensor()
        if self.autoreset and bool(ended.any()):
            rows = torch.nonzero(ended).flatten()
            mask = ended.cpu().numpy()
            info["final_obs"] = obs.cpu().numpy()
            info["_final_obs"] = mask
            info["final_info"] = {"p_done": info["p_done"].copy(), "_p_done": mask.copy()}
            info["_final_info"] = mask.copy()
            e, t0 = self.pool.sample(len(rows), self._rng)
            self.warm_start(rows, e, t0)
            obs = self.obs_tensor()
        elif not self.autoreset:
            self._finished |= ended
        return (
            obs.cpu().numpy(),
            reward.cpu().numpy().astype(np.float32),
            terminated.cpu().numpy(),
            truncated.cpu().numpy(),
            info,
        )


def _drawn_heads(models: Sequence[MDNRNN], outs: Sequence[torch.Tensor], pick: torch.Tensor) -> dict[str, torch.Tensor]:
    """Each dream's heads from its drawn member: ``outs[i] [n, H]`` member ``i``'s LSTM outputs, ``pick [n]``.

    Only the drawn member's heads are computed for a row (the members' mixture heads were most of a step's
    work after the LSTMs); the values are those of :meth:`MDNRNN.heads` of that member.
    """
    n = pick.shape[0]
    first = models[0]
    p = outs[0].new_empty((n, first.mdn.out_features))
    reward, done = outs[0].new_empty(n), outs[0].new_empty(n)
    for i, (m, out) in enumerate(zip(models, outs, strict=True)):
        rows = (pick == i).nonzero(as_tuple=True)[0]
        if len(rows) == 0:
            continue
        mine = out[rows]
        p[rows] = m.mdn(mine)
        reward[rows] = m.reward(mine)[:, 0]
        done[rows] = m.done(mine)[:, 0]
    return {**first.mixture(p), "reward": reward, "done_logit": done}


def dream_returns(
    env: DreamEnv,
    policy: Any,
    starts: tuple[np.ndarray, np.ndarray],
    seed: int,
    record: bool = False,
) -> dict[str, Any]:
    """Run every dream of ``env`` from ``starts`` until all are finished; the per-dream return.

    ``policy(obs [n, Z + H], rows [n]) -> actions [n]`` (tensors; ``rows`` are
    the indices of the dreams still running, which are the only ones stepped).
    Returns ``return [B]`` and ``steps [B]`` (numpy), plus ``z [T+1, B, Z]``
    and ``actions [T, B]`` (finished dreams repeat their last latent, action -1)
    when ``record``.
    """
    env._gen.manual_seed(int(seed))
    env.warm_start(None, starts[0], starts[1])
    B = env.num_envs
    rows = torch.arange(B)
    total = torch.zeros(B, dtype=torch.float64)
    steps = torch.zeros(B, dtype=torch.long)
    zs, acts = [env._z.clone()], []
    with torch.no_grad():
        for _ in range(env.max_steps):
            a = policy(env.obs_tensor(rows), rows)
            reward, _, terminated, truncated = env.step_tensor(a, rows=rows)
            total[rows] += reward.double()
            steps[rows] += 1
            if record:
                full = torch.full((B,), -1, dtype=torch.long)
                full[rows] = a
                acts.append(full)
                zs.append(env._z.clone())
            rows = rows[~(terminated | truncated)]
            if len(rows) == 0:
                break
    out: dict[str, Any] = {"return": total.numpy(), "steps": steps.numpy()}
    if record:
        out["z"] = torch.stack(zs).numpy()
        out["actions"] = torch.stack(acts).numpy()
    return out
