"""The code is lint-clean and formatted (ruff, configured in the root pyproject.toml)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.fail("ruff is not installed (it is in requirements-test.txt)")
    return subprocess.run([ruff, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff_check_passes() -> None:
    run = _ruff("check", "--no-cache", ".")
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]


def test_ruff_format_check_passes() -> None:
    run = _ruff("format", "--check", "--no-cache", ".")
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
