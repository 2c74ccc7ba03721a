"""Audit: how well a trained model presses the right buttons on held-out episodes.

Episodes run as the agent lives them: each is one contiguous stream, cut into
windows of ``L`` steps (stride ``L``), the state ``hx`` carried from window to
window and zeroed where an episode starts. Every recorded step is scored
exactly once — the tail shorter than ``L`` runs as a shorter final window (the
seed scored each window from a zero state and dropped tails; this does not).

``B`` episodes run side by side as batch rows. When the rows of one round need
different lengths (one is on its tail), the shorter rows are padded at the end
and their padded outputs ignored: the core is causal and the state after a
tail is never used again, so a row's scores are exactly those of running its
episode alone.

Scores per action at the threshold ``brain.activation`` (pressed when
``sigmoid(logit) > threshold``) are those of :func:`golem.learning.validation.validate`
(:class:`golem.learning.validation.ActionScore`), plus exact-match accuracy (every action
of a step right).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import structlog
import torch
from torch import nn

from golem.data.dataset import check_compatible, select_episodes
from golem.data.store import EpisodeInfo, TrajectoryStore
from golem.errors import GolemError
from golem.learning.archives import load_model
from golem.learning.device import select_device
from golem.learning.validation import ActionScore, Tally
from golem.sensors import Sensor

if TYPE_CHECKING:
    from golem.learning.modelspec import ModelSpec
    from golem.registry import Registry
    from golem.settings import GolemSettings

log = structlog.get_logger("golem.diagnostics.audit")


# --- streams -----------------------------------------------------------------


@dataclass
class WindowResult:
    """The model's output on one window of one episode.

    Attributes:
        episode: store episode id.
        start: first step of the window.
        probabilities: float32 ``[T, A]``, ``sigmoid(logits)``; ``T <= L`` (shorter for the tail).
        targets: uint8 ``[T, A]``, the recorded button states.
    """

    episode: int
    start: int
    probabilities: np.ndarray
    targets: np.ndarray


def read_windows(
    store: TrajectoryStore,
    infos: Sequence[EpisodeInfo | None],
    starts: Sequence[int],
    lengths: Sequence[int],
    sensors: Sequence[Sensor],
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Row ``b``: steps ``[starts[b], starts[b] + lengths[b])`` of ``infos[b]``, zero-padded to ``T = max(lengths)``.

    Returns:
        ``(raw, actions)``: ``raw[name]`` in the stored dtype ``[B, T, *sensor.shape]``,
        ``actions`` uint8 ``[B, T, A]``. Rows with no episode or length 0 stay zero.
    """
    B, T = len(infos), max(lengths, default=0)
    first = next((i for i, n in zip(infos, lengths) if i is not None and n), None)
    A = len(first.meta.action_names) if first is not None else 0
    raw = {s.name: np.zeros((B, T, *s.shape), dtype=s.dtype) for s in sensors}
    actions = np.zeros((B, T, A), dtype=np.uint8)
    with store.reader() as reader:
        for b, (info, start, n) in enumerate(zip(infos, starts, lengths)):
            if info is None or n == 0:
                continue
            reader.read_into(actions[b, :n], info, "actions", start)
            for s in sensors:
                reader.read_into(raw[s.name][b, :n], info, s.key, start)
    return raw, actions


def to_inputs(raw: dict[str, np.ndarray], sensors: Sequence[Sensor], device: torch.device) -> dict[str, torch.Tensor]:
    """Stored arrays ``[B, T, *shape]`` → the model's float inputs on ``device`` (bytes move, then ``to_network``)."""
    return {s.name: s.to_network(torch.from_numpy(raw[s.name]).to(device)) for s in sensors}


@torch.no_grad()
def stream_episodes(
    model: nn.Module,
    store: TrajectoryStore,
    episodes: Sequence[EpisodeInfo],
    sensors: Sequence[Sensor],
    sequence_length: int,
    *,
    device: torch.device | str = "cpu",
    batch_size: int = 8,
) -> Iterator[WindowResult]:
    """Run ``episodes`` through ``model`` as contiguous streams with carried state; yield every window.

    Args:
        model: a Golem model (``forward(inputs, hx) -> (logits[B, T, A], hx[B, S])``,
            ``initial_state``, ``reset_rows``), in eval mode on ``device``.
        episodes: what to run; each becomes one stream, rows take the next episode when theirs ends.
        sensors: the model's sensors; each reads its ``key`` array.
        sequence_length: window length ``L`` (stride ``L``).
        batch_size: episodes run side by side (``B``).

    Yields:
        :class:`WindowResult` per window, each episode's windows in step order; together
        they cover every step of every episode exactly once.
    """
    L = int(sequence_length)
    if L < 1:
        raise GolemError(f"sequence_length must be positive, got {L}")
    device = torch.device(device)
    pending = deque(info for info in episodes if info.length > 0)
    B = max(1, min(int(batch_size), len(pending)))
    current: list[EpisodeInfo | None] = [None] * B
    pos = [0] * B
    hx = model.initial_state(B, device)
    while True:
        reset = torch.zeros(B, dtype=torch.bool)
        for b in range(B):
            info = current[b]
            if (info is None or pos[b] >= info.length) and pending:
                current[b], pos[b], reset[b] = pending.popleft(), 0, True
            elif info is not None and pos[b] >= info.length:
                current[b] = None
        lengths = [min(L, info.length - pos[b]) if info is not None else 0 for b, info in enumerate(current)]
        T = max(lengths)
        if T == 0:
            return
        raw, actions = read_windows(store, current, pos, lengths, sensors)
        inputs = to_inputs(raw, sensors, device)
        hx = model.reset_rows(hx, reset.to(device))
        logits, hx = model(inputs, hx)
        probs = torch.sigmoid(logits).float().cpu().numpy()
        for b, info in enumerate(current):
            n = lengths[b]
            if info is None or n == 0:
                continue
            yield WindowResult(info.id, pos[b], probs[b, :n], actions[b, :n])
            pos[b] += n


# --- scores ------------------------------------------------------------------


# --- the report --------------------------------------------------------------


@dataclass
class AuditReport:
    """What :func:`audit` measured.

    Attributes:
        model: checkpoint path.
        store: trajectory store path.
        selection: how the episodes were chosen: ``validation`` (the checkpoint's
            held-out episodes), ``episodes`` (given ids), ``module`` or ``all``.
        episodes: audited episode ids.
        steps: steps scored (the sum of the episodes' lengths).
        windows: windows run.
        sequence_length: window length ``L``.
        threshold: probability above which an action counts as pressed.
        exact_match: share of steps whose every action is right.
        actions: per action name, :class:`golem.learning.validation.ActionScore`.
        chart: the PNG written, if any.
    """

    model: str
    store: str
    selection: str
    episodes: list[int]
    steps: int
    windows: int
    sequence_length: int
    threshold: float
    exact_match: float
    actions: dict[str, ActionScore]
    chart: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "store": self.store,
            "selection": self.selection,
            "episodes": self.episodes,
            "steps": self.steps,
            "windows": self.windows,
            "sequence_length": self.sequence_length,
            "threshold": self.threshold,
            "exact_match": None if math.isnan(self.exact_match) else self.exact_match,
            "actions": {
                name: {
                    "precision": s.precision,
                    "recall": s.recall,
                    "f1": s.f1,
                    "support": s.support,
                    "predicted": s.predicted,
                }
                for name, s in self.actions.items()
            },
            "chart": self.chart,
        }


@dataclass
class AuditPlan:
    """Which model and episodes to audit; every field defaults to the settings.

    Attributes:
        model: checkpoint path (default: the profile's active model).
        store: store directory (default: ``settings.store_path()``).
        episodes: episode ids to audit.
        module: audit episodes of this scenario or tag (recovery episodes excluded).
        sequence_length: window length ``L`` (default: the checkpoint's training
            ``sequence_length``, else ``training.sequence_length``).
        chart: where to write the PNG (``None``: no chart).
    """

    model: Path | None = None
    store: Path | None = None
    episodes: list[int] | None = None
    module: str | None = None
    sequence_length: int | None = None
    chart: Path | None = None


def check_store_has_sensors(episodes: Sequence[EpisodeInfo], spec: ModelSpec) -> None:
    """Each episode must hold every array the model reads, with the sensor's shape; actions must match.

    Raises:
        GolemError: one line naming the episode, the missing sensor and how to fix it.
    """
    wanted = list(spec.action_names)
    for info in episodes:
        if wanted and list(info.meta.action_names) != wanted:
            raise GolemError(
                f"episode {info.id} was recorded with profile {info.meta.profile} but the model plays "
                f"{spec.profile}; audit episodes of profile {spec.profile} (--episodes or --module)"
            )
        for sensor in spec.sensors:
            if sensor.key not in info.arrays:
                raise GolemError(
                    f"the model reads sensor {sensor.name!r} but episode {info.id} has no {sensor.key!r} array "
                    f"(it was recorded with {', '.join(info.meta.sensors) or 'no sensors'}); "
                    f"use a store recorded with --plugin {sensor.name}"
                )
    check_compatible(episodes, spec.sensors, spec.action_names, spec.profile)


def choose_episodes(
    store: TrajectoryStore, metadata: dict[str, Any], store_path: Path, plan: AuditPlan
) -> tuple[str, list[EpisodeInfo]]:
    """``(selection, episodes)`` to audit: given ids, else module, else the checkpoint's validation episodes.

    The validation episodes of the checkpoint's data fingerprint are used only when
    the fingerprint names this store; ids no longer in it are skipped. Without them,
    every non-recovery episode of the model's profile is audited (the caller warns:
    training data scores high). ``--module`` also keeps only the model's profile.

    Raises:
        GolemError: an id not in the store, or nothing to audit.
    """
    if plan.episodes:
        return "episodes", [store.get(i) for i in plan.episodes]
    actions = list((metadata.get("spec") or {}).get("action_names") or [])

    def playable(infos: list[EpisodeInfo]) -> list[EpisodeInfo]:  # episodes of the model's profile
        return [i for i in infos if not actions or list(i.meta.action_names) == actions]

    profile = (metadata.get("spec") or {}).get("profile", "?")
    if plan.module is not None:
        chosen = playable(select_episodes(store, module=plan.module, include_recovery=False))
        if not chosen:
            raise GolemError(f"no episodes of profile {profile} for module {plan.module!r} in {store_path}")
        return "module", chosen
    data = metadata.get("data") or {}
    held_out = data.get("validation_episodes") or []
    same_store = data.get("store") is not None and Path(data["store"]).resolve() == store_path.resolve()
    if held_out and same_store:
        present = {info.id: info for info in store.episodes()}
        chosen = [present[i] for i in held_out if i in present]
        if chosen:
            return "validation", chosen
    chosen = playable(select_episodes(store, include_recovery=False))
    if not chosen:
        raise GolemError(f"no episodes of profile {profile} in {store_path}; record some with `golem run record`")
    return "all", chosen


def audit(
    settings: GolemSettings,
    registry: Registry,
    plan: AuditPlan | None = None,
    *,
    on_start: Callable[[int], None] | None = None,
    on_window: Callable[[WindowResult], None] | None = None,
) -> AuditReport:
    """Score a checkpoint on held-out episodes run as contiguous streams with carried state.

    Args:
        settings: ``brain.activation`` (threshold), ``training.batch_size`` (streams side by side),
            ``training.device``, ``data`` (store, models, reports).
        registry: where the model builder and sensors are looked up.
        plan: model, store, episodes, ``L`` and chart path.
        on_start: called once with the number of steps to score (progress total).
        on_window: called after each window (progress).

    Raises:
        GolemError: missing or corrupt checkpoint, no store, unknown episode ids,
            a store lacking the model's sensors or actions, a chart with no drawer installed.
    """
    plan = plan or AuditPlan()
    draw = registry.get("charts", "audit").obj if plan.chart is not None else None  # golem-explain draws it
    path, restored = load_model(settings, registry, plan.model)
    spec = restored.spec
    store_path = Path(plan.store) if plan.store is not None else settings.store_path()
    if not TrajectoryStore.exists(store_path):
        raise GolemError(f"no trajectory store at {store_path}; record one with `golem run record`")
    trained_L = (restored.metadata.get("training") or {}).get("sequence_length")
    L = int(plan.sequence_length or trained_L or settings.training.window)
    threshold = float(settings.brain.activation)
    device = select_device(settings.training.device)
    model = restored.model.to(device).eval()
    with TrajectoryStore.open(store_path) as store:
        selection, episodes = choose_episodes(store, restored.metadata, store_path, plan)
        check_store_has_sensors(episodes, spec)
        held_out = (restored.metadata.get("data") or {}).get("validation_episodes") or []
        if selection == "validation" and len(episodes) < len(held_out):
            log.warning("audit.validation_missing", missing=len(held_out) - len(episodes), kept=len(episodes))
        if selection == "all":
            log.warning(
                "audit.no_validation_episodes",
                detail="the checkpoint names no held-out episodes of this store; auditing all of them "
                "(pass --episodes or --module to choose)",
            )
        log.info(
            "audit.start",
            model=str(path),
            selection=selection,
            episodes=len(episodes),
            steps=sum(i.length for i in episodes),
            sequence_length=L,
            threshold=threshold,
            device=str(device),
        )
        if on_start is not None:
            on_start(sum(i.length for i in episodes))
        tally = Tally(spec.n_actions)
        windows = 0
        for window in stream_episodes(
            model, store, episodes, spec.sensors, L, device=device, batch_size=settings.training.batch_size
        ):
            tally.add(window.probabilities, window.targets, threshold)
            windows += 1
            if on_window is not None:
                on_window(window)
    names = list(spec.action_names) or [f"ACTION_{i}" for i in range(spec.n_actions)]
    report = AuditReport(
        model=str(path),
        store=str(store_path),
        selection=selection,
        episodes=[i.id for i in episodes],
        steps=tally.steps,
        windows=windows,
        sequence_length=L,
        threshold=threshold,
        exact_match=tally.exact_match,
        actions=tally.scores(names),
    )
    if draw is not None:
        report.chart = str(draw(report, Path(plan.chart)))
    log.info("audit.done", steps=report.steps, windows=windows, exact_match=round(report.exact_match, 4))
    return report


__all__ = [
    "AuditPlan",
    "AuditReport",
    "WindowResult",
    "audit",
    "check_store_has_sensors",
    "choose_episodes",
    "read_windows",
    "stream_episodes",
    "to_inputs",
]
