"""Data-parallel training on this machine: two gloo ranks over loopback, real store, real model.

The two-rank run and a one-rank run on the same global batch end with the same
weights (float32, 1e-5 after 4 Adam steps: the all-reduce sums in another order);
a rank killed mid-run makes rank 0 stop with one line, and the stored model stays.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from tests.conftest import GOLEM, _clean_env

pytestmark = pytest.mark.engine

TINY = [
    "--set",
    "brain.working_memory=16",
    "--set",
    "training.batch_size=4",
    "--set",
    "training.sequence_length=4",
    "--set",
    "brain.feature_norm=none",
    "--set",
    "training.keep_best=false",
    "--set",
    "training.precision=fp32",
    "--no-tensorboard",
    "--device",
    "cpu",
]


def _golem(args: list[str], root: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(GOLEM), *args, "--set", f"data.root={root}"],
        capture_output=True,
        text=True,
        env=_clean_env(),
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ddp") / "data"
    proc = _golem(["run", "record", "--expert", "basic", "-n", "8"], root)
    assert proc.returncode == 0, proc.stderr
    return root


def _trained_weights(root: Path, launcher: str) -> dict[str, torch.Tensor]:
    args = ["run", "train", "--updates", "4", *TINY, "--set", f"data.root={root}"]
    if launcher == "torchrun":  # what the README shows for several machines, here on one
        cmd = [str(GOLEM.with_name("torchrun")), "--standalone", "--nproc-per-node", "2", "-m", "golem_cli", *args]
    else:
        cmd = [str(GOLEM), *args, "--nproc", launcher]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_clean_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr
    return load_file(root / "models" / "basic" / "active.safetensors")


@pytest.mark.parametrize("launcher", ["2", "torchrun"], ids=["nproc-2", "torchrun-2"])
def test_two_ranks_end_with_the_weights_of_one_on_the_same_global_batch(
    recorded: Path, tmp_path: Path, launcher: str
) -> None:
    import shutil

    one, two = tmp_path / "one", tmp_path / "two"
    shutil.copytree(recorded, one)
    shutil.copytree(recorded, two)
    a = _trained_weights(one, "1")
    b = _trained_weights(two, launcher)
    assert a.keys() == b.keys()
    moved = 0
    for name in a:
        torch.testing.assert_close(b[name], a[name], rtol=1e-5, atol=1e-5, msg=lambda m, n=name: f"{n}: {m}")
        moved += 1
    assert moved > 10


def test_batch_size_that_does_not_split_is_one_line(recorded: Path) -> None:
    proc = _golem(["run", "train", "--updates", "1", "--nproc", "3", *TINY], recorded)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "does not split over 3 processes" in errors[0], proc.stderr


def _children(pid: int) -> list[int]:
    """Spawned rank processes of ``pid`` (not multiprocessing's resource tracker)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid and "--multiprocessing-fork" in cmdline and "resource_tracker" not in cmdline:
            found.append(int(entry.name))
    return found


def test_a_rank_killed_mid_run_stops_rank_zero_with_one_line_and_keeps_the_model(
    recorded: Path, tmp_path: Path
) -> None:
    import shutil

    root = tmp_path / "data"
    shutil.copytree(recorded, root)
    before = _golem(["run", "train", "--updates", "1", *TINY], root)
    assert before.returncode == 0, before.stderr
    active = root / "models" / "basic" / "active.safetensors"
    stored = active.read_bytes()
    proc = subprocess.Popen(
        [
            str(GOLEM),
            "--log-level",
            "info",
            "run",
            "train",
            "--updates",
            "100000",
            "--nproc",
            "2",
            *TINY,
            "--set",
            "training.peer_timeout=60",
            "--set",
            f"data.root={root}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_clean_env(),
    )
    try:
        deadline = time.monotonic() + 120
        child: list[int] = []
        while time.monotonic() < deadline and not child:
            time.sleep(0.5)
            child = _children(proc.pid)
        assert child, "rank 1 never started"
        time.sleep(12)  # past start-up: the ranks are exchanging gradients
        assert proc.poll() is None, proc.communicate()[1]
        os.kill(child[0], signal.SIGKILL)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode not in (0, None), err
    assert "Traceback" not in err, err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "another training process stopped" in errors[0], err
    assert active.read_bytes() == stored, err  # nothing stored was lost or overwritten
    assert not _children(proc.pid), err
