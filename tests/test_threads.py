"""CPU threads per process (golem.threads): OpenMP threads sleep while they wait, and each process takes its share."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from golem.learning.checkpoints import read_metadata
from golem.threads import available_cores, thread_share
from tests.conftest import GOLEM, _clean_env
from tests.helpers import recorded_store


def test_thread_share_prefers_the_setting_then_the_users_variable_then_the_cores(monkeypatch) -> None:
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    cores = available_cores()
    assert thread_share(1) == cores and thread_share(2) == max(1, cores // 2)
    assert thread_share(4 * cores) == 1  # never none
    assert thread_share(2, requested=3) == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert thread_share(1) == 1 and thread_share(1, requested=2) == 2
    monkeypatch.setenv("OMP_NUM_THREADS", "lots")  # not a number: ignored
    assert thread_share(1) == cores


def _import_golem(env: dict[str, str]) -> str:
    code = "import golem, os, sys; print(os.environ.get('OMP_WAIT_POLICY'), 'torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_importing_golem_makes_openmp_wait_passively_unless_the_user_chose() -> None:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    assert _import_golem(env) == "PASSIVE False"  # set before torch is imported, so libgomp reads it
    assert _import_golem(env | {"OMP_WAIT_POLICY": "ACTIVE"}) == "ACTIVE False"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return recorded_store(tmp_path_factory.mktemp("threads") / "store", 6)


@pytest.mark.engine
@pytest.mark.slow
@pytest.mark.parametrize(
    ("env", "args", "expected"),
    [
        ({}, [], None),
        ({"OMP_NUM_THREADS": "1"}, [], 1),
        ({"OMP_NUM_THREADS": "1"}, ["--set", "training.threads=2"], 2),
    ],
    ids=["cores", "user's OMP_NUM_THREADS", "training.threads"],
)
def test_training_sets_its_threads(
    store: Path, tmp_path: Path, env: dict[str, str], args: list[str], expected: int | None
) -> None:
    base = {k: v for k, v in _clean_env().items() if k != "OMP_NUM_THREADS"}
    done = subprocess.run(
        [
            str(GOLEM),
            "run",
            "train",
            "--store",
            str(store),
            "--set",
            f"data.root={tmp_path}",
            "--updates",
            "2",
            "--set",
            "brain.working_memory=8",
            "--no-tensorboard",
            *args,
        ],
        capture_output=True,
        text=True,
        env=base | env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    meta = read_metadata(tmp_path / "models" / "basic" / "active.safetensors")
    assert meta["data"]["threads"] == (available_cores() if expected is None else expected)
