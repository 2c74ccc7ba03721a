"""Commands whose output cannot be written, or whose input folder is missing, fail in one line and create nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import one_error_line

# Each test runs the console script a few times (seconds each).
pytestmark = pytest.mark.slow


def test_procgen_build_into_a_path_through_a_file_is_one_line(golem_cli, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    line = one_error_line(golem_cli(["procgen", "build", "--phase", "1", "--seed", "0", "-o", str(blocker / "m.wad")]))
    assert f"cannot write {blocker / 'm.wad'}" in line
    assert blocker.read_text() == "not a folder"


def test_dream_evaluate_on_a_file_is_one_line(golem_cli, tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    run.write_text("x")
    assert "is a file, not a run folder" in one_error_line(golem_cli(["dream", "evaluate", "--run", str(run)]))
    assert run.read_text() == "x"


def test_dream_stages_on_a_missing_run_create_nothing(golem_cli, tmp_path: Path) -> None:
    run = tmp_path / "missing" / "run"
    for stage, needs in (
        ("evaluate", "train-vae"),
        ("train-controller", "train-vae"),
        ("render", "train-vae"),
        ("train-rnn", "train-vae"),
    ):
        line = one_error_line(golem_cli(["dream", stage, "--run", str(run)]))
        assert f"golem dream {needs} --run {run}" in line
        assert not (tmp_path / "missing").exists(), stage
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    line = one_error_line(golem_cli(["dream", "collect", "--run", str(blocker / "sub"), "-n", "1"]))
    assert "cannot write the run folder" in line
