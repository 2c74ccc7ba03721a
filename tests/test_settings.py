"""Settings precedence (defaults < golem.toml < GOLEM_* env < flags) and one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from golem.errors import SettingsError
from golem.profiles import PROFILES, mirror_permutation
from golem.settings import GolemSettings, load_settings, parse_assignment
from tests.helpers import json_out

TOML = """
[training]
epochs = 5
batch_size = 7
learning_rate = 0.01

[brain]
sensors = ["visual", "depth"]

[brain.dsp]
n_mels = 48
"""


def test_precedence_default_file_env_flag(tmp_path: Path):
    (tmp_path / "golem.toml").write_text(TOML)
    env = {"GOLEM_TRAINING__BATCH_SIZE": "9", "GOLEM_BRAIN__DSP__N_FFT": "1024", "PATH": "/bin"}
    resolved = load_settings(overrides=[("flag --set", {"training.learning_rate": 0.5})], environ=env, cwd=tmp_path)
    s = resolved.settings
    assert s.training.epochs == 5  # file
    assert s.training.batch_size == 9  # env beats file
    assert s.training.learning_rate == 0.5  # flag beats file
    assert s.brain.dsp.n_mels == 48 and s.brain.dsp.n_fft == 1024  # nested, file and env
    assert s.training.sequence_length == "auto"  # default
    sources = resolved.sources
    assert sources["training.epochs"] == f"file {tmp_path / 'golem.toml'}"
    assert sources["training.batch_size"] == "env GOLEM_TRAINING__BATCH_SIZE"
    assert sources["training.learning_rate"] == "flag --set"
    assert dict((k, src) for k, _, src in resolved.rows())["training.sequence_length"] == "default"


def test_an_empty_table_given_has_a_source(tmp_path: Path):
    """``--set 'rl.shapers={}'`` sets no leaf; a command that fills in a table unless given must still see it."""
    resolved = load_settings(overrides=[("flag --set", {"intervene.bindings": {}})], environ={}, cwd=tmp_path)
    assert resolved.sources["intervene.bindings"] == "flag --set"
    assert "intervene.bindings" not in load_settings(environ={}, cwd=tmp_path).sources


def test_explicit_config_path_and_missing_file(tmp_path: Path):
    cfg = tmp_path / "elsewhere.toml"
    cfg.write_text("[brain]\nprofile = 'classic'\n")
    assert load_settings(config=cfg, environ={}, cwd=tmp_path).settings.brain.profile == "classic"
    with pytest.raises(SettingsError, match="config file not found"):
        load_settings(config=tmp_path / "nope.toml", environ={}, cwd=tmp_path)


@pytest.mark.parametrize(
    ("layer", "needles"),
    [
        ({"brain.profile": "turbo"}, ["brain.profile", "'turbo'", "'basic'", "'fluid'", "'classic'"]),
        ({"training.batch_size": 0}, ["training.batch_size", "0", "greater than or equal to 1"]),
        ({"loss.asymmetric.clip": 1.5}, ["loss.asymmetric.clip", "1.5", "less than 1"]),
        ({"brain.dsp.sample_rate": 12345}, ["brain.dsp.sample_rate", "12345", "11025", "22050", "44100"]),
        ({"training.epocs": 3}, ["unknown setting", "training.epocs"]),
    ],
)
def test_invalid_values_are_one_line_naming_key_value_and_allowed(layer, needles):
    with pytest.raises(SettingsError) as info:
        load_settings(overrides=[("flag --set", layer)], environ={})
    message = str(info.value)
    assert "\n" not in message
    for needle in needles:
        assert needle in message, message


def test_env_lists_and_bad_env(tmp_path: Path):
    env = {"GOLEM_BRAIN__SENSORS": '["visual","thermal"]'}
    assert load_settings(environ=env, cwd=tmp_path).settings.brain.sensors == ["visual", "thermal"]
    with pytest.raises(SettingsError, match="GOLEM_TRAINING__EPOCHS"):
        load_settings(environ={"GOLEM_TRAINING__EPOCHS": "many"}, cwd=tmp_path)


def test_malformed_toml_is_one_line(tmp_path: Path):
    (tmp_path / "golem.toml").write_text("[training\nepochs = ")
    with pytest.raises(SettingsError, match="not valid TOML"):
        load_settings(environ={}, cwd=tmp_path)


def test_toml_with_a_byte_order_mark_is_read(tmp_path: Path):
    (tmp_path / "golem.toml").write_bytes(b"\xef\xbb\xbf[training]\nepochs = 7\n")
    resolved = load_settings(environ={}, cwd=tmp_path)
    assert resolved.settings.training.epochs == 7 and resolved.sources["training.epochs"].startswith("file ")


@pytest.mark.slow
def test_toml_not_in_utf8_is_one_line(golem_cli, tmp_path: Path):
    (tmp_path / "golem.toml").write_bytes('[data]\nstore = "café"\n'.encode("latin-1"))
    with pytest.raises(SettingsError, match="is not UTF-8 text"):
        load_settings(environ={}, cwd=tmp_path)
    proc = golem_cli(["config", "show"], cwd=tmp_path)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "not UTF-8" in lines[0], proc.stderr


def test_parse_assignment():
    assert parse_assignment("training.epochs=3") == ("training.epochs", 3)
    assert parse_assignment("brain.sensors=['visual']") == ("brain.sensors", ["visual"])
    assert parse_assignment("data.store=my-store") == ("data.store", "my-store")
    with pytest.raises(SettingsError):
        parse_assignment("no-equals-sign")


def test_profiles_exactly_as_the_seeds_define_them():
    basic = ["MOVE_FORWARD", "MOVE_BACKWARD", "MOVE_LEFT", "MOVE_RIGHT", "TURN_LEFT", "TURN_RIGHT", "ATTACK", "USE"]
    assert list(PROFILES["basic"]) == basic
    assert list(PROFILES["fluid"]) == basic + ["SELECT_NEXT_WEAPON"]
    assert list(PROFILES["classic"]) == basic + ["SELECT_WEAPON2", "SELECT_WEAPON3"]
    assert len(PROFILES["classic"]) == 10


def test_mirror_permutation_swaps_left_right_only_and_is_an_involution():
    actions = PROFILES["classic"]
    perm = mirror_permutation(actions)
    mirrored = [actions[i] for i in perm]
    assert mirrored[:8] == [
        "MOVE_FORWARD",
        "MOVE_BACKWARD",
        "MOVE_RIGHT",
        "MOVE_LEFT",
        "TURN_RIGHT",
        "TURN_LEFT",
        "ATTACK",
        "USE",
    ]
    assert mirrored[8:] == list(actions[8:])
    assert [perm[i] for i in perm] == list(range(len(actions)))


@pytest.mark.slow
def test_config_show_through_the_console_script(golem_cli, tmp_path: Path):
    (tmp_path / "golem.toml").write_text(TOML)
    proc = golem_cli(
        ["config", "show", "--json", "--set", "training.learning_rate=0.5"],
        env={"GOLEM_TRAINING__BATCH_SIZE": "9"},
        cwd=tmp_path,
        check=True,
    )
    rows = json_out(proc)["settings"]
    assert rows["training.epochs"]["value"] == 5 and rows["training.epochs"]["source"].startswith("file ")
    assert rows["training.batch_size"] == {"value": 9, "source": "env GOLEM_TRAINING__BATCH_SIZE"}
    assert rows["training.learning_rate"] == {"value": 0.5, "source": "flag --set"}
    assert rows["training.sequence_length"]["source"] == "default"


@pytest.mark.slow
def test_invalid_setting_via_cli_is_one_line_nonzero(golem_cli, tmp_path: Path):
    proc = golem_cli(["config", "show"], env={"GOLEM_BRAIN__PROFILE": "turbo"}, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0, proc.stderr
    assert "brain.profile" in proc.stderr and "turbo" in proc.stderr and "classic" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_misspelled_section_in_the_file_names_the_file(tmp_path: Path):
    (tmp_path / "golem.toml").write_text("[trainig]\nepochs = 3\n")
    with pytest.raises(SettingsError) as info:
        load_settings(environ={}, cwd=tmp_path)
    message = str(info.value)
    assert "unknown setting 'trainig'" in message and f"file {tmp_path / 'golem.toml'}" in message


def test_with_section_replaces_a_top_level_component_section_in_a_copy():
    from golem.settings import section, with_section
    from golem_rl.settings import RLSettings

    settings = GolemSettings()
    changed = with_section(settings, RLSettings(decisions="sample"))
    assert section(changed, RLSettings).decisions == "sample"
    assert section(settings, RLSettings).decisions == "threshold"  # the original is untouched
