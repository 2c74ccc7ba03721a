"""The scoreboard: the model, the random policy and the scripted expert play the same seeds.

Every later change is judged on this. Three policies play the same ``N``
episodes (same engine seeds, so the same episode starts):

* ``model`` — the checkpoint, through :class:`golem.runtime.agent.Agent`;
* ``random`` — :class:`golem.runtime.random_policy.RandomPolicy` (each button with
  p = 0.5), seeded by the episode seed;
* ``expert`` — the registered expert whose ``scenarios`` include the
  scenario (the one named like the scenario first); left out, with a note,
  when there is none.

Seeds start at :data:`EVAL_START_SEED` (10 000), far from the recording
seeds (``game.seed + i``, from 0), so the model is judged on episode starts it
did not see. With ``workers > 1`` the episodes run in forked engine
processes, each restoring the model itself, like :mod:`golem.workflows.recording`.

Two shares of the expert's score are reported:

* ``normalised`` = (model − random) / (expert − random): 0 is no better than
  random, 1 is as good as the expert; robust to scenarios whose returns are
  negative or offset (``basic`` starts every tic at −1). ``None`` when expert
  and random score the same.
* ``raw`` = model / expert, the plain ratio of mean returns. ``None`` when the
  expert's mean is 0.
"""

from __future__ import annotations

import csv
import json
import math
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import structlog

from golem.errors import GolemError
from golem.experts import expert_plays
from golem.learning.checkpoints import load_checkpoint
from golem.learning.modelspec import ModelSpec
from golem.logs import configure_logging
from golem.plugins import load_plugins
from golem.profiles import PROFILES
from golem.registry import Registry
from golem.runtime.agent import Agent, check_compatible, latency_summary, load_agent
from golem.runtime.bots import AddBots, solo_game_args
from golem.runtime.rollout import EpisodeResult, run_episode
from golem.runtime.session import Session
from golem.runtime.workers import WorkerPool, run_pool, serve
from golem.scenarios import resolve_scenario, step_limit, variant_of
from golem.sensors import build_sensors
from golem.settings import GolemSettings

log = structlog.get_logger(__name__)

#: First evaluation seed; episode i plays seed ``EVAL_START_SEED + i``.
EVAL_START_SEED = 10_000
#: The policies of a scoreboard, in table order.
ROLES = ("model", "random", "expert")


def expert_for(registry: Registry, scenario: str) -> str | None:
    """The name of a registered reference expert that plays ``scenario`` (its own namesake first — for a
    look-alike variant, its shipped scenario's namesake), or ``None``.

    Experts with ``reference = False`` (the random one, collectors) are never a scenario's expert on a scoreboard.
    """
    names = [n for n in registry.names("experts") if getattr(registry.get("experts", n).obj, "reference", True)]
    for own in (scenario, variant_of(scenario)):
        if own in names and expert_plays(registry.get("experts", own).obj, scenario):
            return own
    for name in names:
        if expert_plays(registry.get("experts", name).obj, scenario):
            return name
    return None


@dataclass
class EvalPlan:
    """What to evaluate.

    Attributes:
        model_path: the checkpoint.
        scenario: scenario name (or ``.cfg``/``.wad`` path).
        episodes: episodes per policy.
        workers: parallel engine processes.
        start_seed: seed of the first episode; episode i uses ``start_seed + i``.
        max_steps: cut episodes after this many tics (``None``: the scenario's time-out, or its
            default limit when it has none: :func:`golem.scenarios.step_limit`).
        threshold: the model's button threshold (``brain.activation``), or one per action.
        expert: expert name (``None``: none plays).
        baselines: also play the random policy (and the expert); ``False``: the model alone.
        frame_skip: tics each decision of every policy holds (``game.frame_skip`` of the settings
            the episodes run with), reported with the results.
        bots: the engine's bots added to every episode; with bots (or on a multiplayer-only map) each
            engine hosts a deathmatch of one player (:mod:`golem.runtime.bots`).
        sample: the model draws each button from its probability (``True``, seeded by the episode's
            seed) or presses by its thresholds (``False``); ``None``: as its checkpoint says.
        temperature: a sampling model draws from ``sigmoid(logit / temperature)`` (1: its own probabilities).
    """

    model_path: Path
    scenario: str
    episodes: int
    workers: int = 1
    start_seed: int = EVAL_START_SEED
    max_steps: int | None = None
    threshold: float | list[float] = 0.5
    expert: str | None = None
    baselines: bool = True
    frame_skip: int = 1
    bots: int = 0
    sample: bool | None = None
    temperature: float = 1.0

    @property
    def seeds(self) -> list[int]:
        return [self.start_seed + i for i in range(self.episodes)]

    @property
    def roles(self) -> tuple[str, ...]:
        if not self.baselines:
            return ("model",)
        return tuple(r for r in ROLES if r != "expert" or self.expert is not None)


@dataclass
class Scoreboard:
    """The results of one evaluation: every episode, plus the model's decision latency."""

    plan: EvalPlan
    results: list[EpisodeResult]
    latency_ms: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    note: str | None = None

    def of(self, role: str) -> list[EpisodeResult]:
        """The episodes ``role`` played, by seed."""
        return sorted((r for r in self.results if r.policy == role), key=lambda r: r.seed)

    @property
    def has_kills(self) -> bool:
        """Any policy killed something: the scenario has monsters to count."""
        return any(r.kills > 0 for r in self.results)

    @property
    def has_survival(self) -> bool:
        """Any policy died: survival time (tics) means something in this scenario."""
        return any(r.dead for r in self.results)

    @property
    def has_exits(self) -> bool:
        """Any policy reached the goal before the time-out without dying (an exit, the last monster…)."""
        return any(r.exited for r in self.results)

    def summary(self) -> dict[str, Any]:
        """JSON-ready summary: per policy mean ± std of return, kills, tics, death and goal rates; the model's
        shares."""
        policies: dict[str, Any] = {}
        for role in self.plan.roles:
            rows = self.of(role)
            policies[role] = {
                "episodes": len(rows),
                "return": mean_std([r.episode_return for r in rows]),
                "kills": mean_std([r.kills for r in rows]),
                "frags": mean_std([r.frags for r in rows]),
                "tics": mean_std([r.tics for r in rows]),
                "death_rate": _mean([float(r.dead) for r in rows]),
                "goal_rate": _mean([float(r.exited) for r in rows]),
            }
        return {
            "scenario": self.plan.scenario,
            "model": str(self.plan.model_path),
            "expert": self.plan.expert,
            "note": self.note,
            "episodes": self.plan.episodes,
            "seeds": self.plan.seeds,
            "max_steps": self.plan.max_steps,
            "frame_skip": self.plan.frame_skip,
            "bots": self.plan.bots,
            "threshold": self.plan.threshold,
            "decisions": None if self.plan.sample is None else ("sample" if self.plan.sample else "threshold"),
            "temperature": self.plan.temperature,
            "policies": policies,
            "share": self.share(),
            "model_latency_ms": self.latency_ms,
            "seconds": round(self.seconds, 2),
        }

    def share(self) -> dict[str, float | None]:
        """``{"normalised": (model − random)/(expert − random), "raw": model/expert}`` of mean returns."""
        if self.plan.expert is None:
            return {"normalised": None, "raw": None}
        model, rand, expert = (_mean([r.episode_return for r in self.of(role)]) for role in ROLES)
        if model is None or rand is None or expert is None:
            return {"normalised": None, "raw": None}
        span = expert - rand
        return {
            "normalised": round((model - rand) / span, 4) if abs(span) > 1e-9 else None,
            "raw": round(model / expert, 4) if abs(expert) > 1e-9 else None,
        }

    def to_json(self) -> dict[str, Any]:
        """The summary plus one row per episode (``episodes_detail``)."""
        return {**self.summary(), "episodes_detail": [r.as_dict() for r in self.results]}

    def write(self, path: str | Path) -> Path:
        """Write the results: ``.json`` (summary + per-episode rows) or ``.csv`` (per-episode rows).

        Raises:
            GolemError: another suffix, or the file cannot be written.
        """
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix not in (".json", ".csv"):
            raise GolemError(f"results file must end in .json or .csv, got {path.name}")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if suffix == ".json":
                path.write_text(json.dumps(self.to_json(), indent=2) + "\n")
            else:
                fields = list(EpisodeResult.__dataclass_fields__)
                with path.open("w", newline="") as fh:
                    writer = csv.DictWriter(fh, fieldnames=["scenario", *fields])
                    writer.writeheader()
                    for r in self.results:
                        writer.writerow({"scenario": self.plan.scenario, **r.as_dict()})
        except OSError as exc:
            raise GolemError(f"cannot write results {path}: {exc.strerror or exc}") from None
        return path


def _mean(values: Sequence[float]) -> float | None:
    return round(float(np.mean(values)), 4) if values else None


def mean_std(values: Sequence[float]) -> dict[str, float | None]:
    """``{"mean", "std"}``; std is the sample standard deviation (0 for one value)."""
    if not values:
        return {"mean": None, "std": None}
    std = float(np.std(values, ddof=1)) if len(values) > 1 else 0.0
    return {"mean": round(float(np.mean(values)), 4), "std": round(std if math.isfinite(std) else 0.0, 4)}


# --- checks before any engine starts -------------------------------------------


def check_model(settings: GolemSettings, registry: Registry, path: Path) -> ModelSpec:
    """Read and verify the checkpoint (metadata, SHA-256) and check it fits ``settings``' session.

    Runs no tensor op, so the worker processes forked afterwards start clean.

    Raises:
        GolemError: a corrupt checkpoint, or a profile / sensors that do not match.
    """
    _, metadata = load_checkpoint(path)
    spec = ModelSpec.from_metadata(metadata["spec"], registry)
    profile = settings.brain.profile
    check_compatible(spec, profile, PROFILES[profile], build_sensors(settings, registry))
    return spec


# --- playing ------------------------------------------------------------------


def _play(
    settings: GolemSettings, registry: Registry, plan: EvalPlan, tasks: Iterable[tuple[Any, ...]]
) -> Iterator[EpisodeResult | Agent]:
    """Play ``(role, seed)`` tasks in one engine; yields each result, then the agent (for its timings).

    A task ``("model", seed, thresholds)`` plays the model with those press thresholds.
    """
    from golem.runtime.random_policy import RandomPolicy

    sensors = build_sensors(settings, registry)
    agent = load_agent(plan.model_path, registry, plan.threshold, sample=plan.sample, temperature=plan.temperature)
    expert = (
        registry.get("experts", plan.expert).obj(PROFILES[settings.brain.profile], settings) if plan.expert else None
    )
    configurers = [expert] if expert is not None else []
    scenario = resolve_scenario(plan.scenario, settings.game.doom_map)
    # The expert reads the engine's object lists, which only a game with cheats on exposes.
    network = solo_game_args(scenario, plan.bots, cheats_off=expert is None)
    observers = [AddBots(plan.bots)] if plan.bots else []
    with Session(settings, sensors, scenario=plan.scenario, configurers=configurers, extra_args=network) as session:
        agent.check_session(session)
        for role, seed, *threshold in tasks:
            if role == "model":
                if threshold:
                    agent.set_threshold(threshold[0])
                policy: Any = agent
            elif role == "random":
                policy = RandomPolicy(session.action_names, seed=seed)
            else:
                policy = expert
            result = run_episode(
                session, policy, seed, max_steps=step_limit(plan.scenario, plan.max_steps), observers=observers
            )
            yield replace(result, policy=role)
    yield agent


def _worker(settings_json: str, plan: EvalPlan, tasks: Any, results: Any) -> None:
    """Worker process (spawned): play the ``(role, seed)`` tasks it takes; results and latencies go back."""
    configure_logging(level="warning")  # a spawned process starts unconfigured; stdout stays the parent's
    settings = GolemSettings.model_validate_json(settings_json)

    def produce(pending: Iterator[tuple[str, int]]) -> Iterator[Any]:
        for item in _play(settings, load_plugins().registry, plan, pending):
            yield (item.sense_ns, item.decide_ns) if isinstance(item, Agent) else item

    serve(tasks, results, produce, "evaluation")


def evaluate(
    settings: GolemSettings,
    registry: Registry,
    plan: EvalPlan,
    on_episode: Callable[[EpisodeResult], None] | None = None,
) -> Scoreboard:
    """Play ``plan.episodes`` seeds with the model, the random policy and the expert; the scoreboard.

    The session is built from ``settings`` (``brain.profile``, ``brain.sensors``)
    with the expert's configuration switched on (it only adds privileged state
    the model never reads, as when the demonstrations were recorded).
    ``on_episode(result)`` is called as each episode finishes (progress).

    Raises:
        GolemError: a bad checkpoint, a model that does not fit the session, an
            unknown scenario or an engine failure — one line.
    """
    started = time.perf_counter()
    check_model(settings, registry, plan.model_path)
    tasks = [(role, seed) for seed in plan.seeds for role in plan.roles]
    results: list[EpisodeResult] = []
    sense: list[int] = []
    decide: list[int] = []
    if plan.workers > 1:
        # spawn, not fork: this process may have trained a model already (golem demo), and
        # torch's thread pool does not survive a fork — the child would hang.
        source: Iterator[Any] = run_pool(
            _worker, (settings.model_dump_json(), plan), tasks, plan.workers, start_method="spawn", what="evaluation"
        )
    else:
        source = _play(settings, registry, plan, tasks)
    try:
        for item in source:
            if isinstance(item, EpisodeResult):
                results.append(item)
                if on_episode is not None:
                    on_episode(item)
            elif isinstance(item, Agent):
                sense += item.sense_ns
                decide += item.decide_ns
            else:
                sense += item[0]
                decide += item[1]
    finally:
        source.close()  # stops workers and engines now, also on Ctrl-C
    note = None
    if plan.expert is None:
        note = f"no scripted expert plays {plan.scenario}: the expert column and shares are left out"
    board = Scoreboard(
        plan=plan,
        results=results,
        latency_ms=latency_summary(sense, decide),
        seconds=time.perf_counter() - started,
        note=note,
    )
    log.info(
        "evaluate.done",
        scenario=plan.scenario,
        episodes=len(results),
        share=board.share(),
        seconds=round(board.seconds, 2),
    )
    return board


class ModelPlayer:
    """The model alone on engines kept open across calls, each call at its own press thresholds.

    Tuning plays dozens of candidates on the same seeds; :func:`evaluate` would
    start (with ``workers > 1``: spawn) its engines for every one. Here they start
    once, on entry, and stop on exit. ``plan`` gives the model, scenario, workers
    and step limit; its roles and seeds are not used. The episodes are the ones
    :func:`evaluate` plays for the same seed and thresholds.
    """

    def __init__(self, settings: GolemSettings, registry: Registry, plan: EvalPlan) -> None:
        self._settings, self._registry, self._plan = settings, registry, plan
        self._pool: WorkerPool | None = None
        self._feed: deque[tuple[Any, ...]] = deque()
        self._local: Iterator[Any] | None = None

    def __enter__(self) -> ModelPlayer:
        check_model(self._settings, self._registry, self._plan.model_path)
        if self._plan.workers > 1:  # spawn: see evaluate
            self._pool = WorkerPool(
                _worker,
                (self._settings.model_dump_json(), self._plan),
                self._plan.workers,
                start_method="spawn",
                what="evaluation",
            ).__enter__()
        else:
            self._local = _play(self._settings, self._registry, self._plan, self._pending())
        return self

    def _pending(self) -> Iterator[tuple[Any, ...]]:
        while self._feed:
            yield self._feed.popleft()

    def play(
        self,
        threshold: Sequence[float],
        seeds: Sequence[int],
        on_episode: Callable[[EpisodeResult], None] | None = None,
    ) -> list[EpisodeResult]:
        """The model's episodes on ``seeds`` with press ``threshold`` (one per action), in seed order."""
        tasks = [("model", seed, list(threshold)) for seed in seeds]
        results: list[EpisodeResult] = []
        if self._pool is not None:
            items: Iterable[Any] = self._pool.map(tasks)
        else:
            assert self._local is not None, "ModelPlayer used outside its with-block"
            items = self._one_by_one(tasks)
        for item in items:
            results.append(item)
            if on_episode is not None:
                on_episode(item)
        return sorted(results, key=lambda r: r.seed)

    def _one_by_one(self, tasks: list[tuple[Any, ...]]) -> Iterator[EpisodeResult]:
        assert self._local is not None
        for task in tasks:  # the generator takes its next task only when asked for the next result
            self._feed.append(task)
            yield next(self._local)

    def __exit__(self, *exc: Any) -> None:
        if self._pool is not None:
            self._pool.__exit__(*exc)
        if self._local is not None:
            self._local.close()  # leaves the session: the engine stops


def evaluate_maps(
    settings: GolemSettings,
    registry: Registry,
    plan: EvalPlan,
    maps: Sequence[tuple[str, int]],
    label: str,
    on_episode: Callable[[EpisodeResult], None] | None = None,
) -> Scoreboard:
    """One episode per map for each policy: ``maps`` are ``(scenario, seed)`` pairs (generated maps).

    Each map is one :func:`evaluate` of one episode with the map's seed (so the
    policies meet the same start); the scoreboard holds every episode under
    the scenario name ``label``, and the model's decision times are the median
    over the maps of each map's figures.
    """
    started = time.perf_counter()
    results: list[EpisodeResult] = []
    latencies: list[dict[str, float]] = []
    for scenario, seed in maps:
        board = evaluate(
            settings,
            registry,
            replace(plan, scenario=scenario, episodes=1, start_seed=seed, workers=1),
            on_episode=on_episode,
        )
        results += board.results
        if board.latency_ms:
            latencies.append(board.latency_ms)
    latency = {k: float(np.median([m[k] for m in latencies])) for k in (latencies[0] if latencies else {})}
    whole = replace(plan, scenario=label, episodes=len(maps), start_seed=maps[0][1] if maps else plan.start_seed)
    note = (
        None
        if plan.expert is not None
        else f"no scripted expert plays {label}: the expert column and shares are left out"
    )
    return Scoreboard(plan=whole, results=results, latency_ms=latency, seconds=time.perf_counter() - started, note=note)


__all__ = [
    "EVAL_START_SEED",
    "ROLES",
    "EvalPlan",
    "Scoreboard",
    "check_model",
    "evaluate",
    "evaluate_maps",
    "expert_for",
]
