"""`golem run match` with checkpoints trained at frame skip 4: lockstep one tic per barrier pass, whatever the skips.

The checkpoints are real: a basic expert recorded at ``game.frame_skip=4`` and
a tiny model trained one epoch on it (about 25 s), so the match reads the skip
from the checkpoint's ``data.frame_skip`` as it does for any trained model.
The host's time limit and port choice are pure logic, tested without an engine.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from golem.learning.checkpoints import read_metadata
from golem.runtime.agent import trained_frame_skip
from golem.runtime.netgame import DEFAULT_PORT, TICS_PER_MINUTE, free_port, host_port, time_limit_arg
from tests.conftest import GOLEM, _clean_env
from tests.helpers import json_out
from tests.test_match import _engines, _no_new_engines

SKIP = 4


def _engine_limit_tic(arg: str) -> int:
    """The tic at which the engine ends the map for ``+timelimit X``: ``(int)(timelimit * 35 * 60)`` in float32.

    The cvar is parsed with ``atof`` into a ``float``; ``p_spec.cpp`` multiplies it by ``TICRATE`` then ``60``.
    """
    flag, value = arg.split()
    assert flag == "+timelimit"
    limit = np.float32(float(value))
    return int(np.float32(np.float32(limit * np.float32(35)) * np.float32(60)))


def test_the_hosts_time_limit_ends_the_map_on_the_tic_asked_for():
    ends = [*range(1, 5000), 2101, 25201, 126001, 252001, 999999]
    assert [_engine_limit_tic(time_limit_arg(end)) for end in ends] == ends
    assert TICS_PER_MINUTE == 2100


def test_an_all_local_match_gets_a_free_port_and_a_hosted_one_doom_s_own():
    assert host_port(6000, all_local=True) == host_port(6000, all_local=False) == 6000
    assert host_port(None, all_local=False) == DEFAULT_PORT
    picked = host_port(None, all_local=True)
    assert picked != DEFAULT_PORT and 0 < picked < 65536


@pytest.fixture(scope="module")
def skip4_models(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two checkpoints (``alpha``, ``beta``) trained one epoch on basic expert episodes recorded at frame skip 4."""
    root = tmp_path_factory.mktemp("skip4")
    for args in (
        ["run", "record", "--expert", "basic", "-n", "2", "--set", f"game.frame_skip={SKIP}"],
        [
            "run",
            "train",
            "--epochs",
            "1",
            "--device",
            "cpu",
            "--set",
            "brain.working_memory=16",
            "--set",
            "training.min_updates=0",
            "--set",
            "training.sequence_length=8",
            "--set",
            "training.batch_size=4",
        ],
    ):
        proc = subprocess.run(
            [str(GOLEM), *args, "--set", f"data.root={root}"],
            capture_output=True,
            text=True,
            env=_clean_env(),
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr
    active = root / "models" / "basic" / "active.safetensors"
    assert trained_frame_skip(read_metadata(active)) == SKIP
    alpha, beta = root / "alpha.safetensors", root / "beta.safetensors"
    shutil.copyfile(active, alpha)
    shutil.copyfile(active, beta)
    return alpha, beta


def _play(golem_cli, tmp_path: Path, agents: list[str], tics: int) -> tuple[dict, dict]:
    """The match's JSON report and its per-player tic log."""
    proc = golem_cli(
        [
            "run",
            "match",
            "--agents",
            ",".join(agents),
            "--tics",
            str(tics),
            "--port",
            str(free_port()),
            "--stall-timeout",
            "10",
            "--tic-log",
            "tics.json",
            "--json",
        ],
        check=True,
    )
    return json_out(proc), json.loads((tmp_path / "tics.json").read_text())


def _assert_lockstep(report: dict, log: dict, tics: int) -> None:
    """Every engine advanced exactly ``tics`` tics, one per barrier pass, all on the same tic at each pass."""
    assert report["game_tics"] == tics
    assert report["lockstep"] == {"players": len(log), "advances": tics, "max_tic_spread": 0, "steps": [1]}
    columns = np.asarray([log[name]["tic"] for name in log])  # [P, tics]
    assert columns.shape == (len(log), tics)
    assert (columns == columns[0]).all() and (np.diff(columns[0]) == 1).all()


@pytest.mark.engine
@pytest.mark.slow
def test_a_skip_4_agent_plays_a_skip_1_player_in_lockstep(golem_cli, tmp_path: Path, skip4_models):
    alpha, _ = skip4_models
    tics = 202  # not a multiple of 4: the agent's last decision is cut short by the end of the match
    before = _engines()
    report, log = _play(golem_cli, tmp_path, [str(alpha), "random"], tics)
    _assert_lockstep(report, log, tics)
    agent, rnd = report["players"]
    assert (agent["name"], rnd["name"]) == ("alpha", "random")
    for player in (agent, rnd):
        if player["deaths"] == 0:  # alive throughout: it played every tic of the match
            assert player["tics"] == tics
    if agent["deaths"] == 0:
        assert agent["decisions"] == math.ceil(tics / SKIP)  # one decision per 4 tics …
    if rnd["deaths"] == 0:
        assert rnd["decisions"] == tics  # … against one per tic
    assert agent["decisions"] < rnd["decisions"]
    _no_new_engines(before)


@pytest.mark.engine
@pytest.mark.slow
def test_two_skip_4_agents_play_in_lockstep(golem_cli, tmp_path: Path, skip4_models):
    alpha, beta = skip4_models
    tics = 200
    before = _engines()
    report, log = _play(golem_cli, tmp_path, [str(alpha), str(beta)], tics)
    _assert_lockstep(report, log, tics)
    assert [p["name"] for p in report["players"]] == ["alpha", "beta"]
    for player in report["players"]:
        assert len(log[player["name"]]["decide_ns"]) == player["decisions"] > 0
        if player["deaths"] == 0:
            assert player["tics"] == tics and player["decisions"] == tics // SKIP
    _no_new_engines(before)
