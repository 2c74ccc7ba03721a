"""`golem demo` end to end at small size, then the commands it says to run next, exactly as printed."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

pytestmark = [pytest.mark.engine, pytest.mark.slow]


def test_demo_runs_and_its_next_commands_work(golem_cli, tmp_path: Path):
    proc = golem_cli(["demo", "--episodes", "16", "--eval-episodes", "2", "--workers", "1", "--out", "demo"], check=True)
    assert "golem demo" in proc.stdout and "scores" in proc.stdout
    lines = proc.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("next, with the demo's files:"))
    commands = [shlex.split(line.strip()) for line in lines[start + 1 :] if line.strip().startswith("golem ")]
    assert [c[1:3] for c in commands] == [["run", "play"], ["run", "evaluate"], ["run", "examine"], ["run", "inspect"]]
    for command in commands:
        args = command[1:]
        if args[1] == "play":
            args += ["--max-steps", "30"]
        if args[1] == "evaluate":  # as printed, but 2 episodes instead of 100
            args[args.index("--episodes") + 1] = "2"
        golem_cli(args, check=True)
    assert (tmp_path / "play.gif").is_file()
