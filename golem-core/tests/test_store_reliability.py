"""A killed writer, damaged inputs and newer stores: the store stays whole and the CLI says one line."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from golem.data.store import SCHEMA_VERSION, TrajectoryStore
from golem.profiles import BASIC
from golem_cli.app import build_app

WRITER = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    from golem.data.store import EpisodeMeta, TrajectoryStore
    T = int(sys.argv[2])
    rng = np.random.default_rng(0)
    frames = rng.integers(0, 256, (T, 3, 64, 64), dtype=np.uint8)
    with TrajectoryStore.create(sys.argv[1], chunk_steps=64) as store:
        for n in range(10_000):
            meta = EpisodeMeta(profile="basic", action_names=[str(i) for i in range(8)], scenario="basic")
            actions = np.full((T, 8), n % 2, dtype=np.uint8)
            frames[:, 0, 0, 0] = n % 256
            print(f"begin {n} {time.monotonic()}", flush=True)
            eid = store.write_episode(meta, {"actions": actions, "frames": frames})
            print(f"done {eid} {time.monotonic()}", flush=True)
    """
)


def test_sigkill_mid_episode_keeps_every_completed_episode(tmp_path: Path) -> None:
    path = tmp_path / "demos"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), "3000"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    done: list[int] = []
    durations: list[float] = []
    began = 0.0
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if not line.startswith(("begin ", "done ")):
                continue  # log events
            word, n, stamp = line.split()
            if word == "begin":
                began = float(stamp)
                if len(done) >= 3:
                    # kill about halfway through this episode's write transaction
                    time.sleep(max(0.0, sorted(durations)[len(durations) // 2] / 2 - (time.monotonic() - began)))
                    os.kill(proc.pid, signal.SIGKILL)
                    break
            else:
                done.append(int(n))
                durations.append(float(stamp) - began)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    with TrajectoryStore.open(path) as store:
        report = store.verify()
        assert report.ok, report.to_dict()
        visible = [info.id for info in store.episodes()]
        # every completed episode is there; at most the one in progress committed before the kill landed
        assert visible[: len(done)] == done and len(visible) <= len(done) + 1
        for info in store.episodes():
            assert info.length == 3000
            assert int(store.read(info, "frames", 2999, 3000)[0, 0, 0, 0]) == info.id % 256
    with TrajectoryStore.open(path, readonly=False) as store:  # a new writer carries on after the crash
        assert store.write_episode(store.get(0).meta, store.read_episode(0)) == len(visible)


# --- bad inputs through the real CLI -------------------------------------------


def _snapshot(path: Path) -> tuple[bytes, list[int]]:
    with TrajectoryStore.open(path) as store:
        ids = [i.id for i in store.episodes()]
    return (path / "data.mdb").read_bytes(), ids


def _good(path: Path, T: int = 12, **extra: np.ndarray) -> Path:
    rng = np.random.default_rng(0)
    arrays = {
        "frames": rng.random((T, 64, 64, 3), dtype=np.float32),
        "actions": rng.integers(0, 2, (T, len(BASIC))).astype(np.float32),
        **extra,
    }
    np.savez_compressed(path, **arrays)
    return path


@pytest.fixture
def seeded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    store = tmp_path / "demos"
    result = CliRunner().invoke(build_app(), ["data", "import", str(_good(tmp_path / "ok.npz")), "--store", str(store)])
    assert result.exit_code == 0, result.output
    return store


def _truncated(tmp_path: Path) -> Path:
    good = _good(tmp_path / "whole.npz", T=50)
    bad = tmp_path / "truncated.npz"
    bad.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    return bad


def _corrupt_member(tmp_path: Path) -> Path:
    good = _good(tmp_path / "whole2.npz", T=50)
    raw = bytearray(good.read_bytes())
    with zipfile.ZipFile(good) as zf:
        info = zf.getinfo("frames.npy")
    middle = info.header_offset + 100 + info.compress_size // 2
    raw[middle : middle + 64] = bytes(64)
    bad = tmp_path / "corrupt.npz"
    bad.write_bytes(bytes(raw))
    return bad


def _write(path: Path, raw: bytes) -> Path:
    path.write_bytes(raw)
    return path


CASES = {
    "truncated": (_truncated, [], "not a readable .npz"),
    "corrupt member": (_corrupt_member, [], "not a readable .npz"),
    "not a zip": (lambda d: _write(d / "junk.npz", b"hello"), [], "not a readable .npz"),
    "mismatched lengths": (
        lambda d: _good(d / "len.npz", depths=np.zeros((11, 64, 64), np.uint8)),
        [],
        "different lengths",
    ),
    "action width": (
        lambda d: (
            np.savez(d / "w.npz", frames=np.zeros((4, 3, 64, 64), np.uint8), actions=np.zeros((4, 9))) or d / "w.npz"
        ),
        [],
        "'actions' has 9 columns but profile 'basic' has 8 actions",
    ),
    "missing modality": (
        lambda d: _good(d / "nodepth.npz"),
        ["--set", 'brain.sensors=["visual", "depth"]'],
        "settings enable sensor 'depth' but the file has no 'depths' array",
    ),
    "no frames": (
        lambda d: np.savez(d / "nf.npz", actions=np.zeros((4, 8))) or d / "nf.npz",
        [],
        "no 'frames' array",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_npz_is_one_line_and_store_unchanged(seeded: Path, tmp_path: Path, case: str) -> None:
    make, flags, message = CASES[case]
    bad = make(tmp_path)
    ok2 = _good(tmp_path / "second_good.npz")  # a good file in the same batch is not imported either
    before = _snapshot(seeded)
    result = CliRunner().invoke(build_app(), [*flags, "data", "import", str(ok2), str(bad), "--store", str(seeded)])
    assert result.exit_code != 0
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and message in errors[0], result.output
    assert "Traceback" not in result.output
    assert _snapshot(seeded) == before


@pytest.mark.slow
def test_newer_schema_via_console_script(seeded: Path, tmp_path: Path) -> None:
    # A separate process stamps the newer schema: LMDB forbids opening one environment
    # twice in a process, and earlier in-process CLI runs may still hold theirs.
    stamp = (
        "import lmdb, sys\n"
        "env = lmdb.open(sys.argv[1], max_dbs=4, map_size=1 << 30)\n"
        "meta = env.open_db(b'meta')\n"
        "with env.begin(write=True) as txn:\n"
        "    txn.put(b'schema_version', sys.argv[2].encode(), db=meta)\n"
        "env.close()\n"
    )
    subprocess.run([sys.executable, "-c", stamp, str(seeded), str(SCHEMA_VERSION + 5)], check=True, timeout=60)
    before = (seeded / "data.mdb").read_bytes()
    golem = Path(sys.executable).with_name("golem")
    for args in (["list"], ["import", str(_good(tmp_path / "x.npz"))], ["delete", "0", "--yes"]):
        proc = subprocess.run(
            [str(golem), "data", *args, "--store", str(seeded)], capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 2
        assert proc.stderr.strip().splitlines()[-1] == (
            f"error: store schema v{SCHEMA_VERSION + 5} is newer than this Golem (v{SCHEMA_VERSION}); "
            "upgrade golem-core"
        )
        assert "Traceback" not in proc.stderr
    assert (seeded / "data.mdb").read_bytes() == before


def test_missing_store_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(build_app(), ["data", "verify", "--store", str(tmp_path / "none")])
    assert result.exit_code == 2
    assert f"error: no trajectory store at {tmp_path / 'none'}" in result.output
    assert not (tmp_path / "none").exists()


FILLER = textwrap.dedent(
    """
    import sys
    import numpy as np
    from golem.data.store import EpisodeMeta, TrajectoryStore, lmdb_store
    from golem.errors import GolemError
    # The free-space check before a write is defeated, as when another program takes the space between the
    # check and the commit: LMDB's commit itself then fails (EIO).
    lmdb_store._WRITE_SLACK = -int(sys.argv[2])
    rng = np.random.default_rng(0)
    written = 0
    with TrajectoryStore.create(sys.argv[1]) as store:
        for n in range(1000):
            meta = EpisodeMeta(profile="basic", action_names=["a"], scenario="basic")
            try:
                store.write_episode(meta, {"actions": np.zeros((40, 1), np.uint8),
                                           "frames": rng.integers(0, 256, (40, 3, 64, 64), dtype=np.uint8)})
            except GolemError as exc:
                print("refused", exc, flush=True)
                break
            written += 1
    with TrajectoryStore.open(sys.argv[1]) as store:
        print("kept", written, len(store), store.verify().ok, flush=True)
    """
)


def _on_a_small_disk(tmp_path: Path, size: str, command: str) -> subprocess.CompletedProcess[str]:
    """Run ``command`` (sh) with a tmpfs of ``size`` mounted at ``tmp_path/disk``, in a private mount namespace."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("a real full disk needs a tmpfs mount (root and unshare)")
    disk = tmp_path / "disk"
    disk.mkdir()
    proc = subprocess.run(
        ["unshare", "--mount", "sh", "-c", f"mount -t tmpfs -o size={size} tmpfs {disk} || exit 77; {command}"],
        capture_output=True,
        text=True,
        timeout=180,
        env=_clean_env(),
    )
    if proc.returncode == 77:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
    return proc


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("GOLEM_")}


@pytest.mark.slow
def test_import_onto_a_full_disk_says_so_in_one_line(tmp_path: Path) -> None:
    big = _good(tmp_path / "big.npz", T=400)  # about 4.7 MiB stored
    small = _good(tmp_path / "small.npz", T=12)
    golem = Path(sys.executable).with_name("golem")
    store = tmp_path / "disk" / "demos"
    proc = _on_a_small_disk(
        tmp_path,
        "3m",
        f"{golem} data import {small} --store {store} >/dev/null && "
        f"{golem} data import {big} --store {store}; echo exit=$?; {golem} data list --store {store} --json",
    )
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1, proc.stderr
    assert err[0].startswith(f"error: the disk holding trajectory store {store} is full (") and "free" in err[0], err[0]
    assert "Input/output error" not in proc.stderr and "Traceback" not in proc.stderr
    assert "exit=2" in proc.stdout
    assert '"id": 0' in proc.stdout and '"id": 1' not in proc.stdout  # the store holds the first file alone


@pytest.mark.slow
def test_a_commit_that_fills_the_disk_says_the_disk_is_full(tmp_path: Path) -> None:
    frame_bytes = 40 * 3 * 64 * 64
    store = tmp_path / "disk" / "demos"
    script = tmp_path / "filler.py"
    script.write_text(FILLER)
    proc = _on_a_small_disk(tmp_path, "4000k", f"{sys.executable} {script} {store} {frame_bytes}")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    refused = [line for line in lines if line.startswith("refused ")]
    assert len(refused) == 1 and f"the disk holding trajectory store {store} is full" in refused[0], proc.stdout
    assert "Input/output error" not in proc.stdout
    kept = [line.split() for line in lines if line.startswith("kept ")]
    assert kept and kept[0][1] == kept[0][2] and int(kept[0][1]) >= 1 and kept[0][3] == "True"  # intact
