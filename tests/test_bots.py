"""A lone player against the engine's bots: the network game of one it hosts, and frags in evaluation (real engine)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import one_error_line
from tests.test_play_evaluate import _save

pytestmark = pytest.mark.engine


def test_a_lone_player_hosts_a_deathmatch_and_meets_the_bots_every_episode() -> None:
    from vizdoom import GameVariable

    from golem.runtime.bots import AddBots, solo_game_args
    from golem.runtime.session import Session
    from golem.scenarios import resolve_scenario
    from golem.settings import GolemSettings

    assert solo_game_args(resolve_scenario("basic", None), 0) == []  # single play stays single play
    cig = resolve_scenario("cig", None)
    args = solo_game_args(cig, 2)
    assert args[0] == "-host 1" and "-deathmatch" in args  # a multiplayer map runs only as a network game
    with Session(GolemSettings(), [], scenario="cig", extra_args=args) as session:
        for seed in (1, 2):  # the bots come back after new_episode, never more of them
            session.new_episode(seed)
            AddBots(2).begin(session, seed)
            session.act([0] * len(session.action_names), 4)
            assert session.game.get_game_variable(GameVariable.PLAYER_COUNT) == 3


def test_evaluate_against_bots_scores_frags(golem_cli, tmp_path: Path) -> None:
    model = _save(tmp_path / "m.safetensors")
    out = golem_cli(
        [
            "run",
            "evaluate",
            "--model",
            str(model),
            "--scenario",
            "cig",
            "--bots",
            "2",
            "--episodes",
            "2",
            "--max-steps",
            "140",
            "--no-baselines",
            "--json",
        ],
        check=True,
    )
    summary = json.loads(out.stdout)
    assert summary["bots"] == 2 and summary["scenario"] == "cig"
    model_row = summary["policies"]["model"]
    assert model_row["episodes"] == 2 and model_row["tics"]["mean"] == 140  # both played out, none refused
    assert set(model_row["frags"]) == {"mean", "std"}
    line = golem_cli(["run", "evaluate", "--model", str(model), "--bots", "1", "--procgen-phase", "1"])
    assert line.returncode != 0 and "leave out --procgen-phase" in line.stderr.strip().splitlines()[-1]


def test_a_deathmatch_on_a_map_without_deathmatch_starts_is_one_line(golem_cli, tmp_path: Path) -> None:
    """The engine dies (SIGSEGV) starting a deathmatch where no deathmatch start stands: refused before it starts."""
    model = _save(tmp_path / "m.safetensors")
    for args in (
        ["run", "evaluate", "--model", str(model), "--scenario", "basic", "--bots", "1", "--workers", "2"],
        ["run", "match", "--agents", "random", "--scenario", "deathmatch", "--tics", "35"],
    ):
        line = one_error_line(golem_cli(args))
        assert "has no deathmatch starts" in line and "cig" in line, line
    assert "--coop" in line  # a match may play the map cooperatively instead …
    coop = golem_cli(["run", "match", "--agents", "random", "--scenario", "deathmatch", "--coop", "--tics", "35"])
    assert coop.returncode == 0, coop.stderr  # … and does
