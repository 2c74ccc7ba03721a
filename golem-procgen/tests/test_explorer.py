"""The explorer expert on generated maps in the real engine: exits, stairs, doors, teleporters, monsters."""

from __future__ import annotations

from pathlib import Path

import pytest

from golem.errors import GolemError
from golem.profiles import PROFILES
from golem.runtime.rollout import run_episode
from golem.runtime.session import Session
from golem.settings import GolemSettings
from golem_procgen.builtin import BuiltinGenerator
from golem_procgen.explorer import ExplorerExpert
from golem_procgen.layout import generate_layout
from golem_procgen.navigation import NavMap, layout_to_nav
from golem_procgen.space import sample_configuration

pytestmark = pytest.mark.engine


def _play(info, seed: int):
    settings = GolemSettings()
    expert = ExplorerExpert(PROFILES["basic"], settings)
    with Session(settings, scenario=str(info.config), configurers=[expert]) as session:
        assert not session.game.is_labels_buffer_enabled()  # the builtin maps' sidecar sees all (labels cost)
        return run_episode(session, expert, seed)


def test_finishes_phase_one_maps(tmp_path: Path) -> None:
    gen = BuiltinGenerator()
    results = []
    for seed in range(6):
        config = sample_configuration(1, seed)
        results.append(_play(gen.build(config.as_dict(), seed, tmp_path / f"m{seed}.wad"), seed))
    assert sum(r.exited for r in results) >= 5, [(r.exited, r.dead, r.tics) for r in results]
    assert all(r.episode_return >= 1.0 for r in results if r.exited)  # the map's exit reward


def test_takes_a_teleporter_and_climbs_stairs_through_doors(tmp_path: Path) -> None:
    params = {
        "size": "large",
        "theme": "mixed",
        "outdoors": "mixed",
        "steepness": "plenty",
        "liquids": "mixed",
        "teleporters": "plenty",
        "mons": "none",
        "strength": "normal",
    }
    for seed in range(40):  # a map whose shortest way out jumps through a pad and passes a door
        layout = generate_layout(params, seed)
        nav = NavMap(layout_to_nav(layout, "builtin", "MAP01"))
        path = nav.path(layout.start[:2], nav.cell_of(*nav.exit))
        jumps = any(abs(a[0] - b[0]) + abs(a[1] - b[1]) > 1 for a, b in zip(path, path[1:]))
        if jumps and any(nav.kind(c) == "door" for c in path):
            break
    else:
        pytest.fail("no map with a teleporter and a door on the way out in 40 seeds")
    info = BuiltinGenerator().build(params, seed, tmp_path / "tele.wad")
    result = _play(info, seed)
    assert result.exited, result


def test_fights_its_way_through_a_phase_two_map(tmp_path: Path) -> None:
    gen = BuiltinGenerator()
    seed = 0  # phase 2, seed 0: regular, normal monsters (measured: exit with kills)
    config = sample_configuration(2, seed)
    result = _play(gen.build(config.as_dict(), seed, tmp_path / "p2.wad"), seed)
    assert result.kills >= 2 and result.exited, result


def test_refuses_a_map_without_a_sidecar(tmp_path: Path) -> None:
    info = BuiltinGenerator().build(sample_configuration(1, 0).as_dict(), 0, tmp_path / "m.wad")
    info.nav.unlink()
    assert not ExplorerExpert.plays(str(info.config))
    with pytest.raises(GolemError, match="no navigation sidecar"):
        _play(info, 0)
