"""Poisoned input: metadata of the wrong type, NaN/Inf arrays and corrupted records are one line, never a store.

Every case goes through the real ``golem data`` commands (CliRunner on the real app, and once the
installed console script), on a real LMDB store.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import lmdb
import numpy as np
import pytest
from typer.testing import CliRunner

from golem.data.store import TrajectoryStore
from golem.data.store.lmdb_store import episode_key
from golem.profiles import BASIC
from golem_cli.app import build_app

GOLEM = Path(sys.executable).with_name("golem")


def _npz(path: Path, T: int = 6, meta: object = None, **arrays: np.ndarray) -> Path:
    rng = np.random.default_rng(0)
    content: dict[str, np.ndarray] = {
        "frames": rng.integers(0, 256, (T, 64, 64, 3), dtype=np.uint8),
        "actions": rng.integers(0, 2, (T, len(BASIC))).astype(np.float32),
    }
    if meta is not None:
        content["meta"] = np.array(json.dumps(meta))
    content.update(arrays)
    np.savez_compressed(path, **content)
    return path


def _invoke(*args: str):
    return CliRunner().invoke(build_app(), list(args))


def _errors(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error:")]


def _snapshot(path: Path) -> tuple[bytes, list[dict]]:
    with TrajectoryStore.open(path) as store:
        infos = [i.to_dict() for i in store.episodes()]
    return (path / "data.mdb").read_bytes(), infos


@pytest.fixture
def seeded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store holding two good imported episodes (ids 0 and 1)."""
    monkeypatch.chdir(tmp_path)
    store = tmp_path / "demos"
    for name in ("a.npz", "b.npz"):
        result = _invoke("data", "import", str(_npz(tmp_path / name, meta={"seed": 3})), "--store", str(store))
        assert result.exit_code == 0, result.output
    return store


T = 6
POISONED_META = {
    "scenario is a list": ({"scenario": ["x"]}, "scenario=['x']"),
    "created is a number": ({"created": 5}, "created=5"),
    "created is no time": ({"created": "last tuesday"}, "ISO-8601"),
    "seed is text": ({"seed": "abc"}, "seed='abc'"),
    "seed is a huge float": ({"seed": 1e30}, "seed=1e+30"),
    "seed is negative": ({"seed": -4}, "seed=-4"),
    "seed passes 32 bits": ({"seed": 2**32}, "seed=4294967296"),
    "tags is a number": ({"tags": 5}, "tags=5"),
    "a tag is a number": ({"tags": ["ok", 7]}, "tags.1=7"),
    "extra is a list": ({"extra": [1]}, "extra=[1]"),
    "map is a number": ({"map": 1}, "map=1"),
    "source is a number": ({"source": 5}, "episode source 5 is not one of"),
    "sensor_settings is a list": ({"sensor_settings": [1]}, "sensor_settings"),
}
POISONED_ARRAYS = {
    "NaN action": (
        {"actions": np.where(np.eye(T, len(BASIC)) > 0, np.nan, 0.0).astype(np.float32)},
        "'actions' holds NaN or Inf",
    ),
    "Inf action": ({"actions": np.full((T, len(BASIC)), np.inf, np.float32)}, "'actions' holds NaN or Inf"),
    "NaN reward": ({"rewards": np.array([0, 1, np.nan, 0, 0, 0], np.float32)}, "'rewards' holds NaN or Inf"),
    "Inf reward": ({"rewards": np.array([0, -np.inf, 0, 0, 0, 0], np.float64)}, "'rewards' holds NaN or Inf"),
    "reward beyond float32": ({"rewards": np.full(T, 1e39, np.float64)}, "'rewards' holds NaN or Inf"),
}


@pytest.mark.parametrize("case", list(POISONED_META))
def test_poisoned_meta_is_refused_in_one_line_and_the_store_is_unchanged(
    seeded: Path, tmp_path: Path, case: str
) -> None:
    meta, needle = POISONED_META[case]
    bad = _npz(tmp_path / "poisoned.npz", meta=meta)
    good = _npz(tmp_path / "good.npz")  # a good file in the same batch is not imported either
    before = _snapshot(seeded)
    result = _invoke("data", "import", str(good), str(bad), "--store", str(seeded))
    assert result.exit_code != 0, result.output
    errors = _errors(result.output)
    assert len(errors) == 1, result.output
    assert errors[0].startswith("error: poisoned.npz: 'meta'") and needle in errors[0], errors[0]
    assert "Traceback" not in result.output
    assert _snapshot(seeded) == before
    listing = _invoke("data", "list", "--store", str(seeded), "--json")  # the store still lists
    assert listing.exit_code == 0 and len(json.loads(listing.stdout)["episodes"]) == 2


@pytest.mark.parametrize("case", list(POISONED_ARRAYS))
def test_nan_or_inf_actions_and_rewards_are_refused(seeded: Path, tmp_path: Path, case: str) -> None:
    arrays, needle = POISONED_ARRAYS[case]
    bad = _npz(tmp_path / "nan.npz", **arrays)
    before = _snapshot(seeded)
    result = _invoke("data", "import", str(bad), "--store", str(seeded))
    assert result.exit_code != 0, result.output
    errors = _errors(result.output)
    assert len(errors) == 1 and "nan.npz" in errors[0] and needle in errors[0], result.output
    assert _snapshot(seeded) == before


@pytest.mark.slow
def test_poisoned_meta_via_the_console_script_is_one_line_on_stderr(seeded: Path, tmp_path: Path) -> None:
    bad = _npz(tmp_path / "poisoned.npz", meta={"seed": "abc"})
    before = _snapshot(seeded)
    proc = subprocess.run(
        [str(GOLEM), "data", "import", str(bad), "--store", str(seeded)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "error: poisoned.npz: 'meta' episode metadata seed='abc': must be a whole number (an integer, not a float, "
        "bool or string)"
    ]
    assert _snapshot(seeded) == before


def _overwrite_record(store: Path, episode_id: int, raw: bytes) -> None:
    """Put ``raw`` as the LMDB record of an episode, as a damaged disk or an older writer could have left it."""
    env = lmdb.open(str(store), max_dbs=4, map_size=1 << 30)
    try:
        episodes = env.open_db(b"episodes")
        with env.begin(write=True) as txn:
            assert txn.get(episode_key(episode_id), db=episodes) is not None
            txn.put(episode_key(episode_id), raw, db=episodes)
    finally:
        env.close()


def _record(store: Path, episode_id: int) -> dict:
    with TrajectoryStore.open(store) as opened:
        return opened.get(episode_id).to_dict()


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda good: b"\x8f\x00garbage\xff{", "unreadable metadata"),
        (lambda good: b'{"id": 1, "meta": {"profile": "basic"', "unreadable metadata"),
        (lambda good: b"[1, 2, 3]", "unreadable metadata"),
        (lambda good: json.dumps({**good, "meta": {**good["meta"], "seed": "abc"}}).encode(), "seed='abc'"),
        (lambda good: json.dumps({**good, "meta": {**good["meta"], "created": 5}}).encode(), "created=5"),
        (lambda good: json.dumps({**good, "meta": {**good["meta"], "scenario": ["x"]}}).encode(), "scenario=['x']"),
    ],
    ids=["garbage bytes", "truncated JSON", "not an object", "seed text", "created number", "scenario list"],
)
def test_a_corrupted_record_is_one_line_naming_its_episode(seeded: Path, make, needle: str) -> None:
    _overwrite_record(seeded, 1, make(_record(seeded, 1)))
    for args in (["data", "list"], ["data", "info", "1"], ["data", "export", "out"], ["run", "inspect"]):
        result = _invoke(*args, "--store", str(seeded))
        assert result.exit_code == 2, (args, result.output)
        errors = _errors(result.output)
        assert len(errors) == 1, (args, result.output)
        assert "episode 1 has unreadable metadata" in errors[0] and needle in errors[0], errors[0]
        assert "golem data verify" in errors[0] and "Traceback" not in result.output
    verify = _invoke("data", "verify", "--store", str(seeded), "--json")
    assert verify.exit_code == 1, verify.output
    report = json.loads(verify.stdout)
    assert report["ok"] is False and list(report["problems"]) == ["1"]
    assert needle in report["problems"]["1"][0]
    assert len(report["store_problems"]) == 1 and "belong to no episode" in report["store_problems"][0]
    assert _invoke("data", "info", "0", "--store", str(seeded)).exit_code == 0  # the other episode still reads


def test_an_episode_with_a_corrupted_record_can_be_deleted(seeded: Path) -> None:
    _overwrite_record(seeded, 1, b"\x8f\x00garbage")
    result = _invoke("data", "delete", "1", "--yes", "--store", str(seeded))
    assert result.exit_code == 0, result.output
    assert _invoke("data", "verify", "--store", str(seeded)).exit_code == 0  # its chunks went with it
    listed = _invoke("data", "list", "--store", str(seeded), "--json")
    assert listed.exit_code == 0 and [e["id"] for e in json.loads(listed.stdout)["episodes"]] == [0]
    missing = _invoke("data", "delete", "7", "--yes", "--store", str(seeded))
    assert missing.exit_code != 0 and "no episode 7" in _errors(missing.output)[0]
