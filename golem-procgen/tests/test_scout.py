"""The scout expert on generated maps in the real engine: it finds the exit by looking, never by the map's plan."""

from __future__ import annotations

from pathlib import Path

import pytest

from golem.profiles import PROFILES
from golem.runtime.rollout import run_episode
from golem.runtime.session import Session
from golem.settings import GolemSettings
from golem_procgen.builtin import BuiltinGenerator
from golem_procgen.navigation import NavMap, sidecar_path
from golem_procgen.scout import ScoutExpert
from golem_procgen.space import sample_configuration

pytestmark = pytest.mark.engine


class _Watched(ScoutExpert):
    """The scout, noting per tic whether it had seen the exit and which goal it walked to."""

    def reset(self, game) -> None:
        super().reset(game)
        self.goals: list[tuple[bool, object]] = []

    def _goal(self, game, state, x, y, tokens):
        goal, task = super()._goal(game, state, x, y, tokens)
        self.goals.append((self.nav.cell_of(*self.nav.exit) in self._seen, goal))
        return goal, task


def test_it_heads_for_the_exit_only_once_seen_and_finishes_most_phase_one_maps(tmp_path: Path) -> None:
    gen, settings = BuiltinGenerator(), GolemSettings()
    exited, looked_first = 0, 0
    for seed in range(6):
        info = gen.build(sample_configuration(1, seed).as_dict(), seed, tmp_path / f"m{seed}.wad")
        scout = _Watched(PROFILES["basic"], settings)
        with Session(settings, scenario=str(info.config), configurers=[scout]) as session:
            result = run_episode(session, scout, seed)
        exit_cell = NavMap.load(sidecar_path(info.path)).cell_of(*scout.nav.exit)
        assert all(goal != exit_cell for seen, goal in scout.goals if not seen)  # never the plan's exit unseen
        looked_first += any(not seen for seen, _ in scout.goals)  # the exit was out of sight at the start
        exited += int(result.exited)
    assert looked_first >= 3  # most maps hide the exit from the start: the scout had to search
    assert exited >= 4
