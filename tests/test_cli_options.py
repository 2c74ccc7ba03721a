"""Options shared by many commands are defined once (golem_cli.options) and read the same everywhere."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from golem.data.store import TrajectoryStore
from golem.scenarios import SCENARIO_SPECS, scenario_spec
from golem_cli.app import build_app
from golem_cli.commands.record import HUMAN_EPISODES, default_episodes

runner = CliRunner(env={"COLUMNS": "200"})


#: Command groups of plugins that keep their own option texts (golem-procgen, golem-worldmodel).
OWN_OPTIONS = ("procgen", "dream")


def _commands() -> dict[str, object]:
    """Every leaf command of the core and golem-match, by path (``run record``)."""
    out: dict[str, object] = {}

    def walk(cmd: object, path: list[str]) -> None:
        subs = getattr(cmd, "commands", None)
        if subs is not None:
            for name, sub in subs.items():
                walk(sub, [*path, name])
        else:
            if path[0] not in OWN_OPTIONS:
                out[" ".join(path)] = cmd

    walk(typer.main.get_command(build_app()), [])
    return out


def _option(cmd: object, flag: str) -> object | None:
    return next((p for p in cmd.params if flag in p.opts), None)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "flag", ["--store", "--plugin", "--set", "--max-steps", "--device", "--procgen-phase", "--maps", "--generator"]
)
def test_a_shared_option_reads_the_same_in_every_command(flag: str):
    found = {path: p for path, cmd in _commands().items() if (p := _option(cmd, flag)) is not None}
    assert len(found) >= 2, found
    shapes = {(tuple(p.opts), p.help, p.metavar) for p in found.values()}  # type: ignore[attr-defined]
    assert len(shapes) == 1, {path: (p.opts, p.help) for path, p in found.items()}  # type: ignore[attr-defined]


def test_pipeline_options_keep_their_short_flags():
    commands = _commands()
    for path in ("run record", "run play", "run evaluate", "run tune", "run intervene", "run dagger"):
        assert _option(commands[path], "-s").name == "scenario", path  # type: ignore[union-attr]
    for path in ("run play", "run evaluate", "run tune", "run intervene"):
        assert _option(commands[path], "-m").name == "model", path  # type: ignore[union-attr]
        assert _option(commands[path], "-n").name == "episodes", path  # type: ignore[union-attr]
    for path in ("run train", "run audit"):  # -m is --module there
        assert _option(commands[path], "-m").name == "module", path  # type: ignore[union-attr]
    checkpoint = {
        path: _option(commands[path], "--model").help
        for path in ("run play", "run evaluate", "run tune", "run intervene", "run audit", "run examine")  # type: ignore[union-attr]
    }
    assert all(
        h.startswith("Checkpoint") and h.endswith("(default: the profile's active model).") for h in checkpoint.values()
    ), checkpoint


def test_record_without_episodes_records_the_scenario_specs_number():
    assert default_episodes("basic", human=False) == SCENARIO_SPECS["basic"].episodes
    assert default_episodes("my_way_home", human=False) == SCENARIO_SPECS["my_way_home"].episodes
    assert default_episodes("some/map.wad", human=False) == scenario_spec(None).episodes
    assert default_episodes("basic", human=True) == HUMAN_EPISODES
    result = runner.invoke(build_app(), ["run", "record", "--help"])
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    counts = sorted(s.episodes for s in SCENARIO_SPECS.values())
    assert "the scenario's with --expert" in text and f"{counts[0]:,}–{counts[-1]:,}" in text, text


def test_zoo_help_and_bad_input_are_one_line(tmp_path: Path):
    app = build_app()
    assert runner.invoke(app, ["--help"]).output.count("zoo") >= 1
    help_ = runner.invoke(app, ["zoo", "--help"])
    assert help_.exit_code == 0 and "--dir" in help_.output and "--tune" in help_.output
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    for args, needle in (
        [["no_such_scenario"], "unknown scenario"],
        [["basic_audio"], "no scripted expert"],
        [["basic", "--model", "no_such_model"], "unknown model"],
        [["basic", "--dir", str(blocker / "work")], "cannot create the work folder"],
    ):
        result = runner.invoke(app, ["zoo", *args])
        assert result.exit_code != 0, (args, result.output)
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert len(lines) == 1 and needle in lines[0], (args, result.output)


@pytest.mark.engine
@pytest.mark.slow
def test_record_an_expert_without_episodes_records_its_spec(golem_cli, tmp_path: Path):
    proc = golem_cli(["run", "record", "--expert", "basic"], check=True)
    wanted = scenario_spec("basic").episodes
    assert f"recorded {wanted} episode(s)" in proc.stdout
    with TrajectoryStore.open(tmp_path / "golem-data" / "stores" / "demos") as store:
        assert len(store.episodes()) == wanted
