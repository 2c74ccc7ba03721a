"""``golem data …`` end to end: CliRunner on the real app, and once through the installed console script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from golem.data.store import TrajectoryStore
from golem.profiles import BASIC
from golem_cli.app import build_app


def _npz(path: Path, T: int, seed: int, **extra: np.ndarray) -> Path:
    rng = np.random.default_rng(seed)
    np.savez_compressed(
        path,
        frames=rng.integers(0, 256, (T, 64, 64, 3), dtype=np.uint8),
        actions=rng.integers(0, 2, (T, len(BASIC))).astype(np.float32),
        **extra,
    )
    return path


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[CliRunner, Path]:
    monkeypatch.chdir(tmp_path)
    recordings = tmp_path / "recordings"
    recordings.mkdir()
    _npz(recordings / "run1.npz", 70, 1)
    _npz(recordings / "run2.npz", 5, 2, depths=np.zeros((5, 64, 64), np.float32))
    _npz(recordings / "golem_basic_recovery_1.npz", 9, 3)
    return CliRunner(), tmp_path


def invoke(runner: CliRunner, *args: str, input: str | None = None):
    return runner.invoke(build_app(), list(args), input=input)


def data_json(runner: CliRunner, *args: str) -> dict:
    result = invoke(runner, "data", *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_import_list_info_verify(env: tuple[CliRunner, Path]) -> None:
    runner, root = env
    store = str(root / "demos")
    imported = data_json(runner, "import", str(root / "recordings"), "--store", store, "--tag", "seed")
    assert [row["steps"] for row in imported["imported"]] == [9, 70, 5]  # sorted file names
    assert [row["source"] for row in imported["imported"]] == ["recovery", "human", "human"]

    listing = data_json(runner, "list", "--store", store)
    assert [e["id"] for e in listing["episodes"]] == [0, 1, 2]
    assert all(e["tags"] == ["seed"] for e in listing["episodes"])
    assert [e["id"] for e in data_json(runner, "list", "--store", store, "--source", "recovery")["episodes"]] == [0]

    stats = data_json(runner, "info", "--store", store)
    assert (stats["episodes"], stats["steps"], stats["by_source"]) == (3, 84, {"human": 2, "recovery": 1})
    episode = data_json(runner, "info", "2", "--store", store)
    assert episode["arrays"]["depths"] == {"dtype": "uint8", "step_shape": [1, 64, 64]}
    assert episode["meta"]["sensors"] == ["visual", "depth"]

    assert data_json(runner, "verify", "--store", store)["ok"] is True
    table = invoke(runner, "data", "list", "--store", store)
    assert table.exit_code == 0 and "3 episode(s)" in table.stdout


def test_store_from_settings(env: tuple[CliRunner, Path]) -> None:
    runner, root = env
    (root / "golem.toml").write_text('[data]\nroot = "gd"\nstore = "mine"\n')
    result = invoke(runner, "data", "import", str(root / "recordings" / "run1.npz"))
    assert result.exit_code == 0, result.output
    assert TrajectoryStore.exists(root / "gd" / "stores" / "mine")
    assert len(data_json(runner, "list")["episodes"]) == 1


def test_export_round_trip(env: tuple[CliRunner, Path]) -> None:
    runner, root = env
    store, again = str(root / "demos"), str(root / "again")
    data_json(runner, "import", str(root / "recordings"), "--store", store)
    out = data_json(runner, "export", str(root / "out"), "--store", store)
    names = sorted(Path(row["file"]).name for row in out["exported"])
    assert names == ["episode-000000-recovery.npz", "episode-000001.npz", "episode-000002.npz"]
    with np.load(root / "out" / "episode-000001.npz", allow_pickle=False) as npz:
        assert npz["frames"].shape == (70, 3, 64, 64) and npz["frames"].dtype == np.uint8
    data_json(runner, "import", str(root / "out"), "--store", again)
    with TrajectoryStore.open(store) as a, TrajectoryStore.open(again) as b:
        for x, y in zip(a.episodes(), b.episodes(), strict=True):
            assert x.meta.source == y.meta.source and x.meta.created == y.meta.created
            for key in x.arrays:
                np.testing.assert_array_equal(a.read(x, key), b.read(y, key))


def test_delete_confirms(env: tuple[CliRunner, Path]) -> None:
    runner, root = env
    store = str(root / "demos")
    data_json(runner, "import", str(root / "recordings"), "--store", store)
    refused = invoke(runner, "data", "delete", "1", "--store", store, input="n\n")
    assert refused.exit_code != 0
    assert len(data_json(runner, "list", "--store", store)["episodes"]) == 3
    confirmed = invoke(runner, "data", "delete", "1", "--store", store, input="y\n")
    assert confirmed.exit_code == 0, confirmed.output
    assert data_json(runner, "delete", "0", "--store", store, "--yes") == {"deleted": [0]}
    assert [e["id"] for e in data_json(runner, "list", "--store", store)["episodes"]] == [2]
    missing = invoke(runner, "data", "delete", "7", "--store", store, "--yes")
    assert missing.exit_code == 2 and "error: no episode 7" in missing.output


def test_bad_source_is_one_line(env: tuple[CliRunner, Path]) -> None:
    runner, root = env
    result = invoke(runner, "data", "import", str(root / "recordings"), "--source", "alien", "--store", "s")
    assert result.exit_code == 2
    assert "error: --source 'alien' is not one of human, expert, recovery, agent" in result.output


@pytest.mark.slow
def test_console_script(env: tuple[CliRunner, Path]) -> None:
    _, root = env
    golem = Path(sys.executable).with_name("golem")
    store = str(root / "demos")
    run = lambda *a: subprocess.run([str(golem), "data", *a], capture_output=True, text=True, timeout=120, cwd=root)  # noqa: E731
    imported = run("import", str(root / "recordings"), "--store", store)
    assert imported.returncode == 0, imported.stderr
    listed = run("list", "--store", store, "--json")
    assert listed.returncode == 0, listed.stderr
    assert len(json.loads(listed.stdout)["episodes"]) == 3
    bad = run("info", "42", "--store", store)
    assert bad.returncode == 2 and bad.stderr.strip().splitlines()[-1] == f"error: no episode 42 in {store}"


def test_imported_modalities_match_what_the_sensors_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each sensor converts its seed-layout array: thermal masks stay {0, 1}, other resolutions are resized."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    T = 6
    mask = (rng.random((T, 64, 64)) > 0.8).astype(np.float32)  # the seed's float {0, 1} thermal masks
    big = tmp_path / "big.npz"
    np.savez_compressed(
        big,
        frames=rng.random((T, 120, 160, 3)).astype(np.float32),
        actions=rng.integers(0, 2, (T, len(BASIC))),
        thermals=mask,
    )
    runner = CliRunner()
    store = str(tmp_path / "imported")
    result = invoke(runner, "data", "import", str(big), "--store", store, "--json")
    assert result.exit_code == 0, result.output
    with TrajectoryStore.open(Path(store)) as opened:
        arrays = opened.read_episode(0)
    assert arrays["frames"].shape == (T, 3, 64, 64) and arrays["frames"].dtype == np.uint8
    assert arrays["thermals"].shape == (T, 1, 64, 64)
    assert set(np.unique(arrays["thermals"])) <= {0, 1}  # as recorded: {0, 1}, not {0, 255}
    np.testing.assert_array_equal(arrays["thermals"][:, 0], mask.astype(np.uint8))
    export = tmp_path / "out"
    assert invoke(runner, "data", "export", str(export), "--store", store).exit_code == 0
    (exported,) = export.glob("*.npz")
    with np.load(exported) as data:
        assert data["thermals"].max() == 1 and data["frames"].shape == (T, 3, 64, 64)

    not_a_mask = tmp_path / "noise.npz"
    np.savez_compressed(
        not_a_mask,
        frames=np.zeros((T, 64, 64, 3), np.uint8),
        actions=np.zeros((T, len(BASIC)), np.uint8),
        thermals=rng.random((T, 64, 64)).astype(np.float32),
    )
    refused = invoke(runner, "data", "import", str(not_a_mask), "--store", store)
    assert refused.exit_code != 0 and "0/1 mask" in refused.output


def test_a_text_file_named_npz_is_not_called_pickled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    fake = tmp_path / "notes.npz"
    fake.write_text("these are my notes, not a recording\n")
    result = invoke(CliRunner(), "data", "import", str(fake), "--store", str(tmp_path / "s"))
    assert result.exit_code != 0
    assert (
        "not a readable .npz" in result.output and "no zip archive" in result.output and "pickle" not in result.output
    )


def test_commands_refuse_a_damaged_chunk_in_one_line(env: tuple[CliRunner, Path]) -> None:
    import lmdb

    from golem.data.store.lmdb_store import chunk_key

    runner, root = env
    store = root / "demos"
    data_json(runner, "import", str(root / "recordings" / "run1.npz"), "--store", str(store))
    lmdb_env = lmdb.open(str(store), max_dbs=4, map_size=1 << 30)
    chunks = lmdb_env.open_db(b"chunks")
    with lmdb_env.begin(write=True) as txn:
        raw = bytearray(txn.get(chunk_key(0, "frames", 1), db=chunks))
        raw[100] ^= 0xFF
        txn.put(chunk_key(0, "frames", 1), bytes(raw), db=chunks)
    lmdb_env.close()
    for args in (
        ["data", "export", str(root / "out"), "--store", str(store)],
        ["run", "inspect", "--store", str(store)],
    ):
        result = invoke(runner, *args)
        assert result.exit_code != 0, args
        errors = [line for line in result.output.splitlines() if line.startswith("error:")]
        assert (
            len(errors) == 1 and "chunk 1 of 'frames' is damaged" in errors[0] and "golem data verify" in errors[0]
        ), result.output


@pytest.mark.slow
def test_seed_layout_audio_imports_at_the_default_rate_and_trains(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The seed's audio (one tic at 44,100 Hz: [T, 2, 1260]) is stored as the sensor records it at 22,050 Hz."""
    pytest.importorskip("golem_sensors_audio")
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(5)
    T = 12
    recordings = tmp_path / "seed"
    recordings.mkdir()
    for i in range(3):
        t = np.arange(T * 1260) / 44100
        tone = np.stack([np.sin(2 * np.pi * 440 * t), 0.5 * np.sin(2 * np.pi * 660 * t)]).astype(np.float32)
        audios = tone.reshape(2, T, 1260).transpose(1, 0, 2) + 0.01 * rng.standard_normal((T, 2, 1260), np.float32)
        _npz(recordings / f"run{i}.npz", T, i, audios=audios)
    runner = CliRunner()
    store = tmp_path / "store"
    result = invoke(runner, "--plugin", "audio", "data", "import", str(recordings), "--store", str(store), "--json")
    assert result.exit_code == 0, result.output
    with TrajectoryStore.open(store) as opened:
        info = opened.get(0)
        stored = opened.read(0, "audios")
    assert stored.shape == (T, 2, 2520) and stored.dtype == np.float16  # 4 tics at 22050 Hz
    assert info.meta.sensor_settings["brain.dsp"]["sample_rate"] == 22050
    loud = stored[4].astype(np.float32)
    assert abs(loud.mean()) < 1e-2 and abs(loud.std() - 1.0) < 1e-2  # normalised per step as recorded
    train = [
        "run",
        "train",
        "--store",
        str(store),
        "--plugin",
        "audio",
        "--set",
        f"data.root={tmp_path / 'root'}",
        "--set",
        "training.sequence_length=4",
        "--set",
        "brain.working_memory=8",
        "--epochs",
        "1",
        "--set",
        "training.min_updates=0",
        "--device",
        "cpu",
        "--json",
    ]
    trained = invoke(runner, *train)
    assert trained.exit_code == 0, trained.output
    # a store recorded at another rate names the setting that reads it
    other = tmp_path / "store11k"
    assert (
        invoke(
            runner,
            "--plugin",
            "audio",
            "--set",
            "brain.dsp.sample_rate=11025",
            "data",
            "import",
            str(recordings),
            "--store",
            str(other),
        ).exit_code
        == 0
    )
    refused = invoke(runner, *[str(other) if a == str(store) else a for a in train])
    assert refused.exit_code != 0
    errors = [line for line in refused.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "--set brain.dsp.sample_rate=11025" in errors[0], refused.output
