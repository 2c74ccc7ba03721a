"""Suite-wide rules for every test folder under this root (tests/, golem-*/tests/, golem-sensors/*/tests/).

* The engine guard: a test not marked ``engine`` may not start the ViZDoom engine. For such a test
  ``vizdoom.DoomGame.init`` raises ``RuntimeError("this test starts the engine: mark it engine")`` — in
  this process, and in every Python child it starts (the installed ``golem`` command, a ``python -c``
  probe, a spawned worker), through a ``sitecustomize`` put first on ``PYTHONPATH``. Each refused start
  is also written down, so the test fails at teardown even when the code under test catches the error
  (a session reports a failed engine start as a ``GolemError``) or a child process swallows it.
  A test that replaces ``PYTHONPATH`` in a child's environment leaves that child unguarded.
* Engine tests run in a scratch working folder of their test process, where the engine writes its
  ``_vizdoom/`` and ``_vizdoom.ini`` (not the repository, not a folder another worker shares).
* CPU threads: under pytest-xdist every worker runs with one intra-op thread, so that two workers do
  not oversubscribe two cores (a variable the user set is kept).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

#: What an unmarked test that starts the engine is told.
ENGINE_MESSAGE = "this test starts the engine: mark it engine"
#: Where refused engine starts are written down (one file each), for this process and its children.
GUARD_DIR_ENV = "PYTEST_ENGINE_GUARD_DIR"

if os.environ.get("PYTEST_XDIST_WORKER"):
    # Before torch is imported by any test module: each worker gets one core's worth of threads.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")


def refuse_engine(*_args: object, **_kwargs: object) -> None:
    """The guard's ``DoomGame.init``: write the attempt down, then refuse."""
    record = os.environ.get(GUARD_DIR_ENV)
    if record and os.path.isdir(record):
        with open(os.path.join(record, f"init-{os.getpid()}-{id(_args)}"), "w") as out:
            out.write(ENGINE_MESSAGE + "\n")
    raise RuntimeError(ENGINE_MESSAGE)


# Imported by Python in a guarded test's child processes: patches vizdoom when (if ever) it is imported.
_SITECUSTOMIZE = f"""
import importlib.abc, importlib.machinery, os, sys

ENGINE_MESSAGE = {ENGINE_MESSAGE!r}
GUARD_DIR_ENV = {GUARD_DIR_ENV!r}


def refuse_engine(*_args, **_kwargs):
    record = os.environ.get(GUARD_DIR_ENV)
    if record and os.path.isdir(record):
        with open(os.path.join(record, "init-%d-%d" % (os.getpid(), id(_args))), "w") as out:
            out.write(ENGINE_MESSAGE + "\\n")
    raise RuntimeError(ENGINE_MESSAGE)


class _EngineGuard(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "vizdoom":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            module.DoomGame.init = refuse_engine

        spec.loader.exec_module = exec_module
        return spec


if os.environ.get(GUARD_DIR_ENV):
    sys.meta_path.insert(0, _EngineGuard())
"""


class EngineGuard:
    """The refused engine starts of one test (its record folder)."""

    def __init__(self, record: Path) -> None:
        self.record = record

    def attempts(self) -> list[str]:
        """One entry per refused ``DoomGame.init``, in this process or a child."""
        return sorted(p.name for p in self.record.iterdir()) if self.record.is_dir() else []

    def forget(self) -> None:
        """Drop the attempts so far (for a test that checks the guard itself)."""
        for path in self.record.iterdir():
            path.unlink()


_GUARD = pytest.StashKey["tuple[EngineGuard | None, pytest.MonkeyPatch]"]()
_site: Path | None = None
_engine_cwd: Path | None = None


def _guard_site() -> Path:
    """A folder holding the children's ``sitecustomize`` (one per test process, removed at exit)."""
    global _site
    if _site is None:
        _site = Path(tempfile.mkdtemp(prefix="engine-guard-site-"))
        (_site / "sitecustomize.py").write_text(_SITECUSTOMIZE)
    return _site


def _engine_folder() -> Path:
    """The working folder of engine tests in this test process (one per pytest-xdist worker).

    An engine writes ``./_vizdoom/`` and ``./_vizdoom.ini`` into its working folder: not into the
    repository, and not into a folder another worker's engines write at the same time.
    """
    global _engine_cwd
    if _engine_cwd is None:
        _engine_cwd = Path(tempfile.mkdtemp(prefix="engine-cwd-"))
    return _engine_cwd


def pytest_unconfigure(config: pytest.Config) -> None:
    for folder in (_site, _engine_cwd):
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    """Guard a test not marked ``engine`` from its setup on, so fixtures it is first to build are guarded too.

    A test marked ``engine`` runs in this process's engine folder instead (:func:`_engine_folder`).
    """
    patch = pytest.MonkeyPatch()
    if item.get_closest_marker("engine") is not None:
        patch.chdir(_engine_folder())
        item.stash[_GUARD] = (None, patch)
    else:
        import vizdoom

        record = Path(tempfile.mkdtemp(prefix="engine-guard-"))
        patch.setattr(vizdoom.DoomGame, "init", refuse_engine)
        patch.setenv(GUARD_DIR_ENV, str(record))
        patch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(_guard_site()), os.environ.get("PYTHONPATH")])))
        item.stash[_GUARD] = (EngineGuard(record), patch)
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    """After its teardown: lift the test's guard (or leave the engine folder); fail it if it started the engine."""
    try:
        return (yield)
    finally:
        guarded = item.stash.get(_GUARD, None)
        if guarded is not None:
            del item.stash[_GUARD]
            guard, patch = guarded
            attempts = [] if guard is None else guard.attempts()
            patch.undo()
            if guard is not None:
                shutil.rmtree(guard.record, ignore_errors=True)
            if attempts:
                pytest.fail(f"{ENGINE_MESSAGE} ({len(attempts)} refused DoomGame.init call(s))", pytrace=False)


@pytest.fixture
def engine_guard(request: pytest.FixtureRequest) -> EngineGuard | None:
    """This test's guard (``None`` for a test marked ``engine``), for tests that check the guard itself."""
    guarded = request.node.stash.get(_GUARD, None)
    return None if guarded is None else guarded[0]
