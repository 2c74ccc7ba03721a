"""Small helpers shared by the cross-package tests."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any


def json_out(proc: subprocess.CompletedProcess[str]) -> Any:
    """Parse a command's ``--json`` stdout."""
    return json.loads(proc.stdout)


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The single ``error:`` line of a command that failed cleanly (non-zero exit, no traceback)."""
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr
    return errors[0]


def recorded_store(path: Path, episodes: int = 12, expert: str = "basic") -> Path:
    """A store at ``path`` with ``episodes`` episodes of ``expert``, recorded by the real ``golem`` console script."""
    from tests.conftest import GOLEM, _clean_env

    proc = subprocess.run(
        [str(GOLEM), "run", "record", "--expert", expert, "-n", str(episodes), "--store", str(path)],
        capture_output=True,
        text=True,
        env=_clean_env(),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return path


def tiny_model_root(root: Path, episodes: int, sequence_length: int, record: list[str] | None = None) -> Path:
    """``root`` with ``episodes`` ``basic`` expert episodes (or what ``record``'s ``golem run record`` arguments
    record) and a tiny model trained on them (16 units, 1 epoch).

    Recorded and trained through the real ``golem`` console script; returns ``root``.
    """
    from tests.conftest import GOLEM, _clean_env

    for args in (
        ["run", "record", *(record or ["--expert", "basic", "-n", str(episodes)])],
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
            f"training.sequence_length={sequence_length}",
            "--set",
            "training.batch_size=4",
        ],
    ):
        proc = subprocess.run(
            [str(GOLEM), *args, "--set", f"data.root={root}"],
            capture_output=True,
            text=True,
            env=_clean_env(),
            timeout=600,
        )
        assert proc.returncode == 0, proc.stderr
    return root
