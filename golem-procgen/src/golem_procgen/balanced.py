"""The ``balanced`` sampler: the stateful sampler with every stratum of worlds read equally often.

Episodes recorded on generated maps store their world (``extra.world``: the
generator, the curriculum phase, the map seed). A store that holds 500
phase-1 maps and 50 phase-3 maps trains ten times as much on phase 1 with
the ``stateful`` sampler; ``balanced`` groups the base streams (an episode,
or its mirrored twin) by ``training.balanced.by`` and draws each epoch's
pool so that every group gives as many streams as the largest one: a
smaller group's streams are repeated, reshuffled at every pass. Everything
else — continuous rows for stateful truncated BPTT, the recovery rows, the
determinism from ``training.seed`` — is the stateful sampler's
(:class:`golem.data.sampling.StatefulStratifiedSampler`).

Select it like any sampler: ``golem run train --plugin balanced`` (or
``training.sampler = "balanced"``), grouping with ``--set
training.balanced.by=generator``.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import structlog
from pydantic import Field

from golem.data.sampling import StatefulStratifiedSampler
from golem.settings import ComponentSettings, section

log = structlog.get_logger(__name__)

#: The group of an episode without a world (recorded on a fixed scenario), by ``scenario`` otherwise.
NO_WORLD = "-"


class BalancedSettings(ComponentSettings):
    """``training.balanced``: what the ``balanced`` sampler reads equally often."""

    key = "training.balanced"
    by: Literal["phase", "generator", "world", "scenario"] = Field(
        "phase",
        description="group episodes by their world's curriculum phase, its generator, both (world), or the "
        "scenario they were recorded on; episodes on a fixed scenario form one group of their own",
    )


def stratum(meta: Any, by: str) -> str:
    """The group of an episode (its :class:`golem.data.store.EpisodeMeta`) when grouping ``by``."""
    if by == "scenario":
        return str(meta.scenario)
    world = (meta.extra or {}).get("world") or {}
    if not world:
        return NO_WORLD
    phase, generator = world.get("phase"), world.get("generator")
    if by == "phase":
        return f"phase {phase}" if phase is not None else NO_WORLD
    if by == "generator":
        return str(generator)
    return f"{generator} phase {phase}"


class BalancedSampler(StatefulStratifiedSampler):
    """Stateful streams, each group of episodes (:func:`stratum`) read as often as the largest group per epoch.

    Args:
        pointers: a :class:`golem.data.dataset.SequenceDataset` (its ``episodes`` give the groups); a bare
            pointer map has one group, and the sampler is then the stateful one.
        settings: :class:`GolemSettings`; ``training.balanced.by`` and the stateful sampler's settings.
    """

    def __init__(self, pointers: Any, settings: Any) -> None:
        super().__init__(pointers, settings)
        by = section(settings, BalancedSettings).by if hasattr(settings, "training") else "phase"
        infos = getattr(pointers, "episodes", {}) or {}
        keys = [
            stratum(infos[int(s[0])].meta, by) if int(s[0]) in infos else NO_WORLD
            for s in (self.pointers["episode"][stream[:1]] for stream in self.base_streams)
        ]
        self.groups: dict[str, list[int]] = {}
        for i, key in enumerate(keys):
            self.groups.setdefault(key, []).append(i)
        log.info("sampler.balanced", by=by, groups={k: len(v) for k, v in sorted(self.groups.items())})

    def _base_pool(self, epoch: int) -> list[np.ndarray]:
        """Every group filled up to the largest group's stream count (repeats reshuffled), then shuffled
        together."""
        rng = self._rng(epoch, 0)
        most = max(len(v) for v in self.groups.values())
        chosen: list[int] = []
        for key in sorted(self.groups):
            members = np.asarray(self.groups[key])
            passes = [members[rng.permutation(len(members))] for _ in range(-(-most // len(members)))]
            chosen.extend(np.concatenate(passes)[:most].tolist())
        return [self.base_streams[chosen[i]] for i in rng.permutation(len(chosen))]
