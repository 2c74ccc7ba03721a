"""`golem demo` end to end at small size, then the commands it says to run next, exactly as printed."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.conftest import GOLEM

pytestmark = [pytest.mark.engine, pytest.mark.slow]


def test_demo_runs_and_its_next_commands_work(golem_cli, tmp_path: Path):
    # as after `make demo`: .venv/bin is not on PATH, so the printed commands must name the program's path
    path = "/usr/local/bin:/usr/bin:/bin"
    proc = golem_cli(
        ["demo", "--episodes", "16", "--eval-episodes", "2", "--workers", "1", "--out", "demo"],
        env={"PATH": path, "COLUMNS": "200"},
        check=True,
    )
    assert "golem demo" in proc.stdout and "scores" in proc.stdout
    # the header states the budget training keeps (epochs, and more until the minimum of updates); the result what
    # it did
    assert "6 epochs, more if needed for 500 updates" in proc.stdout
    trained = re.search(r"trained (\d+) epochs \((\d+) updates\)", proc.stdout)
    assert trained and int(trained.group(2)) >= 500 and int(trained.group(1)) > 6
    lines = proc.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("next, with the demo's files:"))
    commands = [shlex.split(line.strip()) for line in lines[start + 1 :] if line.strip()]
    assert all(c[0] == str(GOLEM) for c in commands), commands
    assert [c[1:3] for c in commands] == [["run", "play"], ["run", "evaluate"], ["run", "examine"], ["run", "inspect"]]
    for command in commands:
        if command[2] == "play":
            command += ["--max-steps", "30"]
        if command[2] == "evaluate":  # as printed, but 2 episodes instead of 100
            command[command.index("--episodes") + 1] = "2"
        done = subprocess.run(
            command, capture_output=True, text=True, cwd=tmp_path, timeout=300, env={**os.environ, "PATH": path}
        )
        assert done.returncode == 0, done.stderr
    assert (tmp_path / "play.gif").is_file()
