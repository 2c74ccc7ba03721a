"""What a dataset holds: per-modality shapes and ranges, action balance, idle share, returns.

Statistics stream through the store one block of steps at a time, so a store
of any size is inspected in bounded memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from golem.data.store import EpisodeInfo, TrajectoryStore
from golem.errors import GolemError

#: An idle share above this earns a warning: the learner would mostly learn to stand still.
IDLE_WARNING = 0.5
BLOCK_STEPS = 512


@dataclass
class ModalityStats:
    """Running summary of one stored array across episodes."""

    key: str
    step_shape: tuple[int, ...]
    dtype: str
    steps: int = 0
    minimum: float = float("inf")
    maximum: float = float("-inf")
    total: float = 0.0

    def update(self, block: np.ndarray) -> None:
        """Fold ``block`` (``[n, *step_shape]``) into the summary."""
        values = block.astype(np.float64, copy=False)
        self.steps += block.shape[0]
        self.minimum = min(self.minimum, float(values.min()))
        self.maximum = max(self.maximum, float(values.max()))
        self.total += float(values.mean()) * block.shape[0]

    def to_dict(self) -> dict[str, Any]:
        return {
            "shape": list(self.step_shape),
            "dtype": self.dtype,
            "steps": self.steps,
            "min": self.minimum,
            "max": self.maximum,
            "mean": self.total / self.steps if self.steps else None,
        }


@dataclass
class Inspection:
    """The report ``golem run inspect`` prints."""

    action_names: list[str]
    modalities: dict[str, ModalityStats] = field(default_factory=dict)
    action_counts: list[int] = field(default_factory=list)
    idle_steps: int = 0
    steps: int = 0
    episodes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def idle_share(self) -> float:
        return self.idle_steps / self.steps if self.steps else 0.0

    @property
    def idle_warning(self) -> bool:
        return self.idle_share > IDLE_WARNING

    def to_dict(self) -> dict[str, Any]:
        return {
            "episodes": self.episodes,
            "steps": self.steps,
            "modalities": {k: m.to_dict() for k, m in self.modalities.items()},
            "actions": {
                name: {"count": count, "share": count / self.steps if self.steps else 0.0}
                for name, count in zip(self.action_names, self.action_counts)
            },
            "idle": {"steps": self.idle_steps, "share": self.idle_share, "warning": self.idle_warning},
            "returns": _summary([e["return"] for e in self.episodes]),
        }


def _summary(values: Sequence[float]) -> dict[str, float | None]:
    if not values:
        return {"mean": None, "std": None, "min": None, "max": None}
    arr = np.asarray(values, dtype=np.float64)
    return {"mean": float(arr.mean()), "std": float(arr.std()), "min": float(arr.min()), "max": float(arr.max())}


def inspect_episodes(store: TrajectoryStore, infos: Sequence[EpisodeInfo]) -> Inspection:
    """Summarise ``infos`` (episodes of one action profile) from ``store``.

    Raises:
        GolemError: no episodes, or episodes with different action names.
    """
    if not infos:
        raise GolemError(f"no episodes to inspect in {store.path}; record some with `golem run record`")
    names = infos[0].meta.action_names
    mixed = [i.id for i in infos if i.meta.action_names != names]
    if mixed:
        raise GolemError(
            f"episodes {mixed[:5]} use other action names than episode {infos[0].id}; filter with --profile"
        )
    report = Inspection(action_names=list(names), action_counts=[0] * len(names))
    with store.reader() as reader:
        for info in infos:
            for key, spec in info.arrays.items():
                stats = report.modalities.setdefault(key, ModalityStats(key, spec.step_shape, spec.dtype))
                for start in range(0, info.length, BLOCK_STEPS):
                    block = reader.view(info, key, start, min(info.length, start + BLOCK_STEPS))
                    stats.update(block)
                    if key == "actions":
                        pressed = block.astype(np.int64)
                        report.action_counts = [c + int(v) for c, v in zip(report.action_counts, pressed.sum(axis=0))]
                        report.idle_steps += int((pressed.sum(axis=1) == 0).sum())
            report.steps += info.length
            report.episodes.append(
                {
                    "id": info.id,
                    "source": info.meta.source,
                    "scenario": info.meta.scenario,
                    "seed": info.meta.seed,
                    "length": info.length,
                    "return": info.meta.total_return,
                }
            )
    return report
