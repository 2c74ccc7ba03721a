"""One update's rollout segments as tensors, rows in worker order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from golem.learning.modelspec import ModelSpec
from golem_rl.rollouts import Segment


@dataclass
class Batch:
    """``B`` segments of ``T`` decisions (row ``b`` is worker ``b``'s), as network tensors.

    Attributes:
        inputs: ``{sensor name: [B, T + 1, *shape]}`` float network inputs (the last step: the bootstrap state).
        actions: ``[B, T, A]`` 0./1. buttons executed.
        rewards: ``[B, T]`` the scenario's reward plus the shapers', per decision.
        dones: ``[B, T]`` 1. where the episode ended with the decision.
        starts: ``[B, T + 1]`` bool, decisions that begin an episode.
        timespans: ``[B, T + 1]`` engine tics since the row's previous decision.
        hx: ``[B, S]`` the policy's state before each segment.
        frames: engine tics the ``B·T`` decisions held.
        episodes: the episodes that ended in the segments (``EpisodeResult.as_dict()``).
    """

    inputs: dict[str, torch.Tensor]
    actions: torch.Tensor
    rewards: torch.Tensor
    dones: torch.Tensor
    starts: torch.Tensor
    timespans: torch.Tensor
    hx: torch.Tensor
    frames: int = 0
    episodes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return int(self.actions.shape[0])

    @property
    def steps(self) -> int:
        return int(self.actions.shape[1])

    def decisions(self, rows: torch.Tensor | slice, bootstrap: bool = False) -> dict[str, Any]:
        """``inputs``, ``starts``, ``timespans`` and ``hx`` of ``rows``, over the ``T`` decisions (``+ 1``: with the
        bootstrap state), as :func:`golem_rl.value.policy_and_value` takes them."""
        end = self.steps + 1 if bootstrap else self.steps
        return {
            "inputs": {name: x[rows, :end] for name, x in self.inputs.items()},
            "hx": self.hx[rows],
            "starts": self.starts[rows, :end],
            "timespans": self.timespans[rows, :end],
        }


def stack_segments(segments: Sequence[Segment], spec: ModelSpec) -> Batch:
    """Stack one segment per worker (in worker order) into a :class:`Batch`; stored arrays go through each
    sensor's ``to_network``."""
    inputs = {}
    for sensor in spec.sensors:
        stored = torch.from_numpy(np.stack([s.observations[sensor.name] for s in segments]))
        inputs[sensor.name] = sensor.to_network(stored).float()
    return Batch(
        inputs=inputs,
        actions=torch.from_numpy(np.stack([s.actions for s in segments])).float(),
        rewards=torch.from_numpy(np.stack([s.rewards for s in segments])).float(),
        dones=torch.from_numpy(np.stack([s.dones for s in segments])).float(),
        starts=torch.from_numpy(np.stack([s.starts for s in segments])),
        timespans=torch.from_numpy(np.stack([s.timespans for s in segments])).float(),
        hx=torch.from_numpy(np.stack([s.hx for s in segments])).float(),
        frames=sum(s.frames for s in segments),
        episodes=[e for s in segments for e in s.episodes],
    )


__all__ = ["Batch", "stack_segments"]
