"""What a scenario file may ask of the engine: known config keys, game-rule engine arguments, maps that exist."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from golem.errors import GolemError
from golem.scenarios import (
    check_config,
    check_game_args,
    checkpoint_scenario,
    known_scenarios,
    read_config,
    resolve_scenario,
    scenarios_dir,
)
from golem.settings import GolemSettings


def one_line(info: pytest.ExceptionInfo) -> str:
    text = str(info.value)
    assert "\n" not in text
    return text


def basic_cfg(folder: Path, *lines: str) -> Path:
    """A copy of the shipped ``basic.cfg`` (its WAD by absolute path) with ``lines`` appended."""
    text = (scenarios_dir() / "basic.cfg").read_text().replace("basic.wad", str(scenarios_dir() / "basic.wad"))
    path = folder / "x.cfg"
    path.write_text(text + "\n" + "\n".join(lines) + "\n")
    return path


# --- reading a config as the engine does -------------------------------------------


def test_every_shipped_config_is_accepted():
    for name in known_scenarios():
        entries = check_config(scenarios_dir() / f"{name}.cfg")
        assert entries, name


def test_list_values_span_lines_and_keys_take_any_spelling(tmp_path):
    path = tmp_path / "c.cfg"
    path.write_text(
        "# comment = ignored\nDoomMap = MAP02\navailable_buttons =\n  {\n    ATTACK\n  # no\n    USE\n  }\n"
        "game_args += +sv_noautoaim 1\n"
    )
    entries = read_config(path)
    assert [(e.key, e.value, e.append, e.line) for e in entries] == [
        ("doom_map", "MAP02", False, 2),
        ("available_buttons", "{ ATTACK USE }", False, 3),
        ("game_args", "+sv_noautoaim 1", True, 9),
    ]


# --- keys and engine arguments ------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    ["vizdoom_path = /bin/sh", "ViZDoomPath = /bin/sh", "doom_config_path = ~/.bashrc", "doomconfigpath = /tmp/x.ini"],
)
def test_keys_that_run_or_write_files_are_refused(tmp_path, line):
    with pytest.raises(GolemError, match="is not allowed") as info:
        resolve_scenario(str(basic_cfg(tmp_path, line)))
    assert "x.cfg line" in one_line(info)


def test_an_unknown_key_is_refused(tmp_path):
    with pytest.raises(GolemError, match="unknown key 'record_path'"):
        resolve_scenario(str(basic_cfg(tmp_path, "record_path = demo.lmp")))


@pytest.mark.parametrize(
    "args",
    [
        "+logfile /tmp/out.txt +echo hi",
        "+exec autoexec.cfg",
        "-file extra.wad",
        "-config /tmp/zdoom.ini",
        "+sv_noautoaim 1;logfile x",
        "+sv_noautoaim",
        "1 +sv_noautoaim 1",
        "-host 2",
    ],
)
def test_engine_arguments_outside_the_allowed_set_are_refused(args):
    with pytest.raises(GolemError, match="engine argument") as info:
        check_game_args(args, "x.cfg")
    assert one_line(info).startswith("x.cfg: ")


def test_game_rule_arguments_are_allowed():
    check_game_args("+sv_noautoaim 1 +timelimit 10.5 -deathmatch -skill 3 +viz_respawn_delay -1", "x.cfg")


def test_a_config_that_writes_a_log_file_is_refused_before_the_engine(tmp_path):
    target = tmp_path / "written.txt"
    config = basic_cfg(tmp_path, f"game_args += +logfile {target} +echo hello")
    with pytest.raises(GolemError, match="'\\+logfile' is not allowed"):
        resolve_scenario(str(config))
    assert not target.exists()


@pytest.mark.engine
def test_a_session_refuses_a_config_that_writes_a_log_file(tmp_path, monkeypatch):
    from golem.runtime.session import Session

    monkeypatch.chdir(tmp_path)
    target = tmp_path / "written.txt"
    config = basic_cfg(tmp_path, f"game_args = +logfile {target} +echo hello")
    settings = GolemSettings.model_validate({"game": {"scenario": str(config)}})
    with pytest.raises(GolemError, match="not allowed"):
        Session(settings).close()
    assert not target.exists()


# --- scenarios named by checkpoints ----------------------------------------------------


def test_a_checkpoint_may_name_a_shipped_scenario_only(tmp_path):
    assert checkpoint_scenario("basic", "m.safetensors") == "basic"
    for value in ("x.cfg", "../evil/x.cfg", str(tmp_path / "x.cfg"), "maps/m.wad", "no_such_scenario"):
        with pytest.raises(GolemError, match="pass --scenario") as info:
            checkpoint_scenario(value, "m.safetensors")
        assert "m.safetensors" in one_line(info)


# --- maps a config names ------------------------------------------------------------


def test_a_config_naming_a_map_its_wads_lack_is_refused(tmp_path):
    config = basic_cfg(tmp_path, "doom_map = MAP99")
    with pytest.raises(GolemError, match="map MAP99 not found for scenario x") as info:
        resolve_scenario(str(config))
    one_line(info)


def test_a_config_without_a_map_starts_the_first_map_its_iwad_has():
    # freedoom1.cfg names no map, and its IWAD has no MAP01 (the engine's default).
    assert resolve_scenario("freedoom1").doom_map == "E1M1"


@pytest.mark.engine
@pytest.mark.slow
def test_a_session_on_a_missing_map_fails_at_once(tmp_path, monkeypatch):
    from golem.runtime.session import Session

    monkeypatch.chdir(tmp_path)
    settings = GolemSettings.model_validate(
        {"game": {"scenario": str(basic_cfg(tmp_path, "doom_map = MAP99")), "start_timeout": 10}}
    )
    started = time.monotonic()
    with pytest.raises(GolemError, match="MAP99 not found"):
        with Session(settings) as session:
            session.new_episode()  # the engine waits here forever for the missing map
    assert time.monotonic() - started < 10
