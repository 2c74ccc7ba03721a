"""The `golem` app through typer's runner and as the installed console script."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import golem
from golem_cli.app import build_app

runner = CliRunner(env={"COLUMNS": "200"})


@pytest.mark.slow
def test_version_in_process_and_console_script(golem_cli):
    result = runner.invoke(build_app(), ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"golem {golem.__version__}"
    proc = golem_cli(["--version"], check=True)
    assert proc.stdout.strip() == f"golem {golem.__version__}"


def test_run_help_lists_pipeline_stages():
    result = runner.invoke(build_app(), ["run", "--help"])
    assert result.exit_code == 0
    assert "The pipeline, stage by stage" in result.output
    stages = ["record", "inspect", "train", "summary", "audit", "examine", "tune", "play", "evaluate"]
    positions = [result.output.index(f"│ {stage} ") for stage in stages]  # rows of the commands table
    assert positions == sorted(positions), "stages are listed in pipeline order"


def test_plugins_list_table_shows_core_and_installed_distributions():
    result = runner.invoke(build_app(), ["plugins", "list"])
    assert result.exit_code == 0, result.output
    for dist in ("golem-core", "golem-sensors-depth", "golem-sensors-thermal", "golem-sensors-audio"):
        assert dist in result.output


def test_config_show_table_and_flag_sources():
    result = runner.invoke(build_app(), ["config", "show", "--set", "training.epochs=3", "--plugin", "depth"])
    assert result.exit_code == 0, result.output
    assert "training.epochs" in result.output and "flag --set" in result.output
    assert "flag --plugin" in result.output


def test_bad_log_level_and_unknown_command_fail_cleanly():
    result = runner.invoke(build_app(), ["--log-level", "loud", "config", "show"])
    assert result.exit_code == 2
    result = runner.invoke(build_app(), ["no-such-command"])
    assert result.exit_code == 2


@pytest.mark.slow
def test_log_json_emits_json_events(golem_cli, tmp_path):
    proc = golem_cli(["--log-json", "--log-level", "debug", "plugins", "list", "--json"], check=True)
    import json

    events = [json.loads(line) for line in proc.stderr.splitlines()]
    loaded = [e for e in events if e["event"] == "plugins_loaded"]
    assert loaded and "core" in loaded[0]["loaded"] and loaded[0]["level"] == "debug"


@pytest.mark.slow
def test_using_the_library_prints_nothing_on_stdout():
    import subprocess
    import sys

    code = (
        "from golem.plugins import load_plugins; from golem.scenarios import known_scenarios; "
        "load_plugins(); known_scenarios()"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""


@pytest.mark.slow
def test_global_options_work_after_the_subcommand(golem_cli, tmp_path):
    from golem_cli.app import hoist_global_options

    assert hoist_global_options(["run", "train", "--log-level", "info", "--epochs", "2"]) == [
        "--log-level",
        "info",
        "run",
        "train",
        "--epochs",
        "2",
    ]
    assert hoist_global_options(["config", "show", "--config=x.toml", "--", "--log-json"]) == [
        "--config=x.toml",
        "config",
        "show",
        "--",
        "--log-json",
    ]
    (tmp_path / "mine.toml").write_text("[training]\nepochs = 7\n")
    shown = golem_cli(["config", "show", "--json", "--config", "mine.toml", "--log-level", "info"], check=True)
    import json as _json

    settings = _json.loads(shown.stdout)["settings"]
    assert settings["training.epochs"]["value"] == 7 and "mine.toml" in settings["training.epochs"]["source"]
