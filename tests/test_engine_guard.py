"""The suite's engine guard (the root conftest.py): a test not marked ``engine`` cannot start ViZDoom."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import vizdoom

from conftest import ENGINE_MESSAGE, EngineGuard

ROOT = Path(__file__).resolve().parents[1]


def test_an_unmarked_test_calling_init_is_refused_and_recorded(engine_guard: EngineGuard) -> None:
    with pytest.raises(RuntimeError, match="mark it engine"):
        vizdoom.DoomGame().init()
    assert len(engine_guard.attempts()) == 1  # so the test fails at teardown even if the error was caught
    engine_guard.forget()


def test_a_child_python_of_an_unmarked_test_is_refused_too(engine_guard: EngineGuard) -> None:
    code = "import vizdoom\nvizdoom.DoomGame().init()"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and ENGINE_MESSAGE in done.stderr
    assert len(engine_guard.attempts()) == 1
    engine_guard.forget()


@pytest.mark.engine
def test_a_test_marked_engine_is_not_guarded(engine_guard: EngineGuard | None) -> None:
    assert engine_guard is None
    assert vizdoom.DoomGame.init.__module__ != "conftest"  # the engine's own method (nothing is started here)


def test_an_unmarked_test_that_swallows_the_refusal_still_fails(tmp_path: Path) -> None:
    """A pytest run of its own over the root conftest: the unmarked test fails, the marked one passes."""
    shutil.copy(ROOT / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    engine: runs the real ViZDoom engine\n")
    (tmp_path / "test_probe.py").write_text(
        "import pytest, vizdoom\n\n"
        "def test_unmarked():\n"
        "    try:\n"
        "        vizdoom.DoomGame().init()\n"
        "    except RuntimeError:\n"
        "        pass  # code under test that reports a failed start instead of raising\n\n"
        "@pytest.mark.engine\n"
        "def test_marked():\n"
        "    assert vizdoom.DoomGame.init.__module__ != 'conftest'\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q", "-rA", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "ERROR test_probe.py::test_unmarked" in done.stdout and ENGINE_MESSAGE in done.stdout
    assert "PASSED test_probe.py::test_marked" in done.stdout
