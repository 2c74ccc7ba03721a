"""The LMDB trajectory store: round trips, zero-copy windows, filters, delete, verify, schema, concurrency."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import lmdb
import numpy as np
import pytest

from golem.data.arrays import array_rules
from golem.data.store import SCHEMA_VERSION, EpisodeMeta, TrajectoryStore
from golem.data.store.lmdb_store import chunk_key, episode_key
from golem.errors import GolemError
from golem.plugins import load_plugins
from golem.profiles import BASIC

RULES = array_rules(load_plugins().registry)


def make_episode(T: int, seed: int = 0, audio_n: int = 16) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "actions": rng.integers(0, 2, (T, len(BASIC)), dtype=np.uint8),
        "rewards": rng.standard_normal(T).astype(np.float32),
        "frames": rng.integers(0, 256, (T, 3, 64, 64), dtype=np.uint8),
        "depths": rng.integers(0, 256, (T, 1, 64, 64), dtype=np.uint8),
        "thermals": rng.integers(0, 256, (T, 1, 64, 64), dtype=np.uint8),
        "audios": rng.standard_normal((T, 2, audio_n)).astype(np.float16),
    }


def make_meta(source: str = "human", scenario: str = "basic", tags: list[str] | None = None) -> EpisodeMeta:
    return EpisodeMeta(
        profile="basic",
        action_names=list(BASIC),
        scenario=scenario,
        source=source,  # type: ignore[arg-type]
        sensors=["visual", "depth", "thermal", "audio"],
        seed=7,
        tags=tags or [],
    )


@pytest.fixture
def store(tmp_path: Path):
    with TrajectoryStore.create(tmp_path / "demos", chunk_steps=8) as s:
        yield s


def test_round_trip_every_array_and_meta(store: TrajectoryStore) -> None:
    arrays = make_episode(21)
    eid = store.write_episode(make_meta(tags=["a"]), arrays)
    info = store.get(eid)
    assert info.length == 21 and info.n_chunks == 3
    assert info.meta.total_return == pytest.approx(float(arrays["rewards"].sum(dtype=np.float64)))
    assert info.arrays["audios"].dtype == "float16" and info.arrays["frames"].step_shape == (3, 64, 64)
    back = store.read_episode(eid)
    for key, value in arrays.items():
        assert back[key].dtype == value.dtype
        np.testing.assert_array_equal(back[key], value)


@pytest.mark.parametrize(("start", "stop"), [(0, 8), (3, 5), (5, 19), (7, 9), (16, 21), (0, 21)])
def test_windows_within_and_across_chunks(store: TrajectoryStore, start: int, stop: int) -> None:
    arrays = make_episode(21, seed=1)
    eid = store.write_episode(make_meta(), arrays)
    for key in arrays:
        np.testing.assert_array_equal(store.read(eid, key, start, stop), arrays[key][start:stop])


def test_read_into_batch_rows(store: TrajectoryStore) -> None:
    arrays = make_episode(30, seed=2)
    eid = store.write_episode(make_meta(), arrays)
    batch = np.zeros((3, 6, 3, 64, 64), dtype=np.uint8)
    with store.reader() as r:
        for b, start in enumerate((0, 6, 20)):
            r.read_into(batch[b], eid, "frames", start)
    for b, start in enumerate((0, 6, 20)):
        np.testing.assert_array_equal(batch[b], arrays["frames"][start : start + 6])
    with pytest.raises(GolemError, match="outside episode"):
        store.read_into(np.zeros((6, 3, 64, 64), np.uint8), eid, "frames", 27)
    with pytest.raises(GolemError, match="must be"):
        store.read_into(np.zeros((6, 3, 64, 64), np.float32), eid, "frames", 0)


def test_read_batch_fills_every_row_in_one_call(store: TrajectoryStore) -> None:
    """Windows inside a chunk, across chunks, whole short episodes and padded tails: as read_into row by row."""
    episodes = [make_episode(T, seed=T) for T in (30, 5, 17)]
    infos = [store.get(store.write_episode(make_meta(), arrays)) for arrays in episodes]
    # (episode, start, length) with chunk_steps = 8 and L = 6
    windows = [(0, 0, 6), (0, 5, 6), (0, 14, 6), (1, 0, 5), (2, 12, 5), (0, 24, 6), (2, 16, 1), (0, 6, 6)]
    L = 6
    for key in ("frames", "audios", "actions", "rewards"):
        arrays = [e[key] for e in episodes]
        out = np.full((len(windows), L, *arrays[0].shape[1:]), 7, dtype=arrays[0].dtype)
        with store.reader() as r:
            r.read_batch(
                out, [infos[e] for e, _, _ in windows], [s for _, s, _ in windows], [n for _, _, n in windows], key
            )
        for b, (e, s, n) in enumerate(windows):
            np.testing.assert_array_equal(out[b, :n], arrays[e][s : s + n], err_msg=f"{key} window {b}")
            np.testing.assert_array_equal(out[b, n:], np.repeat(arrays[e][s + n - 1 : s + n], L - n, axis=0))
    with store.reader() as r:
        with pytest.raises(GolemError, match="outside episode"):
            r.read_batch(np.zeros((1, 6, 3, 64, 64), np.uint8), [infos[1]], [2], [6], "frames")
        with pytest.raises(GolemError, match="must be"):
            r.read_batch(np.zeros((1, 6, 3, 64, 64), np.float32), [infos[0]], [0], [6], "frames")
        with pytest.raises(GolemError, match="no 'tic' array"):
            r.read_batch(np.zeros((1, 6), np.int32), [infos[0]], [0], [6], "tic")
        with pytest.raises(GolemError, match="C-contiguous"):
            r.read_batch(np.zeros((6, 2, 3, 64, 64), np.uint8).swapaxes(0, 1), [infos[0]] * 2, [0, 0], [6, 6], "frames")


def test_view_in_one_chunk_is_zero_copy(store: TrajectoryStore) -> None:
    arrays = make_episode(20, seed=3)
    eid = store.write_episode(make_meta(), arrays)
    with store.reader() as r:
        view = r.view(eid, "frames", 9, 15)  # inside chunk 1 (steps 8..15)
        assert not view.flags.owndata and not view.flags.writeable  # a view of the memory map
        assert isinstance(view.base, memoryview) or view.base is not None
        np.testing.assert_array_equal(view, arrays["frames"][9:15])
        spanning = r.view(eid, "frames", 6, 10)  # crosses a chunk boundary: a copy
        assert spanning.flags.owndata
        np.testing.assert_array_equal(spanning, arrays["frames"][6:10])


def test_ids_increase_and_filters(store: TrajectoryStore) -> None:
    ids = [
        store.write_episode(make_meta("human", "basic", ["x"]), make_episode(3)),
        store.write_episode(make_meta("recovery", "basic", ["x", "y"]), make_episode(4)),
        store.write_episode(make_meta("expert", "deathmatch"), make_episode(5)),
    ]
    assert ids == [0, 1, 2]
    assert [i.id for i in store.episodes(source="recovery")] == [1]
    assert [i.id for i in store.episodes(scenario="basic")] == [0, 1]
    assert [i.id for i in store.episodes(tags=["x", "y"])] == [1]
    stats = store.stats()
    assert (stats.episodes, stats.steps, stats.by_source["expert"]) == (3, 12, 1)
    assert stats.bytes == sum(i.nbytes for i in store.episodes()) > 0


def test_delete_removes_records_and_chunks(store: TrajectoryStore) -> None:
    for seed in range(3):
        store.write_episode(make_meta(), make_episode(10, seed=seed))
    assert store.delete([1]) == [1]
    assert [i.id for i in store.episodes()] == [0, 2]
    with pytest.raises(GolemError, match="no episode 1"):
        store.get(1)
    with pytest.raises(GolemError, match="no episode 9"):
        store.delete([0, 9])
    assert len(store) == 2  # nothing deleted by the failed call
    assert store.verify().ok  # no orphan chunks left behind
    assert store.write_episode(make_meta(), make_episode(2)) == 3  # ids never reused


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda a: a.update(actions=a["actions"][:, :5]), "5 columns"),
        (lambda a: a.update(frames=a["frames"][:3]), "different lengths"),
        (lambda a: a.update(frames=a["frames"].astype(np.float32)), "must be uint8"),
        (lambda a: a.update(actions=a["actions"] * 3), "0/1"),
        (lambda a: a.pop("depths"), "no 'depths'"),
        (lambda a: a.update(frames=a["frames"][:, :1]), "must be \\[T, 3"),
    ],
)
def test_bad_input_writes_nothing(store: TrajectoryStore, change, message: str) -> None:
    arrays = make_episode(6)
    change(arrays)
    with pytest.raises(GolemError, match=message):
        store.write_episode(make_meta(), arrays, RULES)  # the installed sensors' array rules
    assert len(store) == 0 and store.verify().chunks_checked == 0


def test_empty_episode_rejected(store: TrajectoryStore) -> None:
    with pytest.raises(GolemError, match="empty"):
        store.write_episode(make_meta(), {k: v[:0] for k, v in make_episode(4).items()})


def test_verify_detects_missing_and_corrupted_chunks(store: TrajectoryStore, tmp_path: Path) -> None:
    for seed in range(3):
        store.write_episode(make_meta(), make_episode(20, seed=seed))
    assert store.verify().ok
    store.close()
    env = lmdb.open(str(tmp_path / "demos"), max_dbs=4, map_size=1 << 30)
    chunks = env.open_db(b"chunks")
    with env.begin(write=True) as txn:
        txn.delete(chunk_key(0, "frames", 1), db=chunks)
        raw = bytearray(txn.get(chunk_key(1, "audios", 2), db=chunks))
        raw[3] ^= 0xFF
        txn.put(chunk_key(1, "audios", 2), bytes(raw), db=chunks)
        txn.put(chunk_key(2, "depths", 0), b"short", db=chunks)
    env.close()
    with TrajectoryStore.open(tmp_path / "demos") as reopened:
        report = reopened.verify()
        assert not report.ok
        assert any("missing chunk(s) 1" in p for p in report.problems[0])
        assert any("checksum mismatch" in p for p in report.problems[1])
        assert any("has 5 bytes" in p for p in report.problems[2])
        assert reopened.verify(checksums=False).problems.keys() == {0, 2}
        with pytest.raises(GolemError, match="missing chunk 1"):
            reopened.read(0, "frames", 0, 20)
        # a damaged chunk is refused when a reader first touches it, by every read path
        with pytest.raises(GolemError, match=r"episode 1: chunk 2 of 'audios' is damaged .*golem data verify"):
            reopened.read(1, "audios")
        with pytest.raises(GolemError, match="is damaged"), reopened.reader() as r:
            r.view(1, "audios", 2 * reopened.chunk_steps, 2 * reopened.chunk_steps + 1)
        with pytest.raises(GolemError, match="is damaged"):
            reopened.read_into(np.zeros((1, 2, 16), np.float16), 1, "audios", 2 * reopened.chunk_steps)
        with pytest.raises(GolemError, match="is damaged"), reopened.reader() as r:
            r.read_batch(
                np.zeros((1, 4, 2, 16), np.float16), [reopened.get(1)], [2 * reopened.chunk_steps - 2], [4], "audios"
            )
        with pytest.raises(GolemError, match="missing chunk 1"), reopened.reader() as r:
            r.read_batch(np.zeros((1, 4, 3, 64, 64), np.uint8), [reopened.get(0)], [6], [4], "frames")
        assert (
            reopened.read(1, "audios", 0, 2 * reopened.chunk_steps).shape[0] == 2 * reopened.chunk_steps
        )  # whole chunks read


def test_open_missing_store(tmp_path: Path) -> None:
    with pytest.raises(GolemError, match="no trajectory store at"):
        TrajectoryStore.open(tmp_path / "nowhere")
    assert not (tmp_path / "nowhere").exists()


def test_create_twice_refused(store: TrajectoryStore) -> None:
    with pytest.raises(GolemError, match="already exists"):
        TrajectoryStore.create(store.path)


def test_newer_schema_refused_and_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "demos"
    with TrajectoryStore.create(path) as s:
        s.write_episode(make_meta(), make_episode(3))
    env = lmdb.open(str(path), max_dbs=4, map_size=1 << 30)
    meta = env.open_db(b"meta")
    with env.begin(write=True) as txn:
        txn.put(b"schema_version", str(SCHEMA_VERSION + 1).encode(), db=meta)
    env.close()
    before = (path / "data.mdb").read_bytes()
    for readonly in (True, False):
        with pytest.raises(GolemError) as exc:
            TrajectoryStore.open(path, readonly=readonly)
        assert str(exc.value) == (
            f"store schema v{SCHEMA_VERSION + 1} is newer than this Golem (v{SCHEMA_VERSION}); upgrade golem-core"
        )
    assert (path / "data.mdb").read_bytes() == before


def test_readonly_store_refuses_writes(store: TrajectoryStore) -> None:
    store.write_episode(make_meta(), make_episode(2))
    store.close()  # LMDB allows one handle per environment per process
    with TrajectoryStore.open(store.path) as ro, pytest.raises(GolemError, match="read-only"):
        ro.write_episode(make_meta(), make_episode(2))


READER = textwrap.dedent(
    """
    import json, sys, time
    import numpy as np
    from golem.data.store import TrajectoryStore
    want, seen, reads = int(sys.argv[2]), set(), 0
    deadline = time.monotonic() + 60
    with TrajectoryStore.open(sys.argv[1]) as store:
        print("ready", flush=True)
        while len(seen) < want and time.monotonic() < deadline:
            for info in store.episodes():
                a = store.read(info, "actions")
                f = store.read(info, "frames", 0, info.length)
                assert a.shape[0] == f.shape[0] == info.length  # never a partial episode
                assert int(f[0, 0, 0, 0]) == info.id            # the writer tags frame 0 with the id
                seen.add(info.id); reads += 1
    print(json.dumps({"seen": sorted(seen), "reads": reads}), flush=True)
    """
)


def test_readers_run_alongside_a_writer(store: TrajectoryStore) -> None:
    store.write_episode(make_meta(), {**make_episode(5), "frames": np.zeros((5, 3, 64, 64), np.uint8)})
    procs = [
        subprocess.Popen([sys.executable, "-c", READER, str(store.path), "6"], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        for eid in range(1, 6):
            arrays = make_episode(40, seed=eid)
            arrays["frames"][0, 0, 0, 0] = eid
            assert store.write_episode(make_meta(), arrays) == eid
        for proc in procs:
            out, _ = proc.communicate(timeout=90)
            assert proc.returncode == 0
            assert json.loads(out.strip().splitlines()[-1])["seen"] == list(range(6))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()


def test_nan_or_inf_rewards_write_nothing(store: TrajectoryStore) -> None:
    for bad in (np.nan, np.inf, -np.inf):
        arrays = make_episode(6)
        arrays["rewards"][3] = bad
        with pytest.raises(GolemError, match="'rewards' holds NaN or Inf \\(first at step 3\\)"):
            store.write_episode(make_meta(), arrays, RULES)
    assert len(store) == 0 and store.verify().chunks_checked == 0


def test_metadata_json_cannot_hold_writes_nothing(store: TrajectoryStore) -> None:
    meta = make_meta()
    meta.extra["when"] = object()
    with pytest.raises(GolemError, match="cannot be stored as JSON"):
        store.write_episode(meta, make_episode(6), RULES)
    assert len(store) == 0 and store.verify().chunks_checked == 0
    assert store.write_episode(make_meta(), make_episode(6), RULES) == 0  # the id was not used up


def test_a_short_chunk_names_its_episode(tmp_path: Path) -> None:
    path = tmp_path / "demos"
    with TrajectoryStore.create(path, chunk_steps=8) as store:
        store.write_episode(make_meta(), make_episode(5, seed=1), RULES)
        store.write_episode(make_meta(), make_episode(21, seed=2), RULES)
    # Episode 1 as a store written without checksums would hold it after a torn chunk: 3 steps of chunk 1.
    env = lmdb.open(str(path), max_dbs=4, map_size=1 << 30)
    episodes, chunks = env.open_db(b"episodes"), env.open_db(b"chunks")
    with env.begin(write=True) as txn:
        record = json.loads(txn.get(episode_key(1), db=episodes))
        record["checksums"] = {}
        txn.put(episode_key(1), json.dumps(record).encode(), db=episodes)
        whole = txn.get(chunk_key(1, "frames", 1), db=chunks)
        txn.put(chunk_key(1, "frames", 1), whole[: 3 * 3 * 64 * 64], db=chunks)
    env.close()
    with TrajectoryStore.open(path) as store:
        assert store.read(0, "frames").shape == (5, 3, 64, 64)  # the other episode reads
        for read in (
            lambda: store.read(1, "frames", 9, 12),  # inside the short chunk
            lambda: store.read(1, "frames", 4, 12),  # across into it
            lambda: store.read(1, "frames"),
        ):
            with pytest.raises(GolemError, match="episode 1: chunk 1 of 'frames' is shorter .*golem data verify"):
                read()
        with store.reader() as r:
            with pytest.raises(GolemError, match="episode 1: chunk 1 of 'frames' is shorter"):
                r.view(1, "frames", 9, 12)
            out = np.empty((2, 6, 3, 64, 64), np.uint8)
            with pytest.raises(GolemError, match="episode 1: chunk 1 of 'frames' is shorter"):
                r.read_batch(out, [store.get(0), store.get(1)], [0, 8], [5, 6], "frames")
        report = store.verify()
        assert list(report.problems) == [1] and "chunk 1 has 36864 bytes, expected 98304" in report.problems[1][0]


def test_seeds_continue_after_stored_and_reserved_ones(store: TrajectoryStore) -> None:
    assert store.reserve_seeds("basic", 0, 3) == [0, 1, 2]
    assert store.reserve_seeds("basic", 0, 2) == [3, 4]  # reserved, not yet stored: still taken
    assert store.reserve_seeds("basic", 10, 1) == [10]  # a later first seed is kept
    assert store.reserve_seeds("other", 0, 2) == [0, 1]  # per scenario
    assert store.reserve_seeds("basic", 2, 2, exact=True) == [2, 3]  # asked for: exactly those
    assert store.reserve_seeds("basic", 20, 3, exact=True) == [20, 21, 22]
    assert store.reserve_seeds("basic", 0, 1) == [23]  # continuing passes the asked-for ones by
    meta = make_meta()
    meta.seed = 40
    store.write_episode(meta, make_episode(3), RULES)  # imported or recorded elsewhere with a seed
    assert store.reserve_seeds("basic", 0, 1) == [41]
    with pytest.raises(GolemError, match="largest, 4294967295"):
        store.reserve_seeds("basic", 2**32 - 2, 3, exact=True)


def test_reserved_seeds_outlive_the_store_object(tmp_path: Path) -> None:
    with TrajectoryStore.create(tmp_path / "demos") as store:
        assert store.reserve_seeds("basic", 5, 4) == [5, 6, 7, 8]
    with TrajectoryStore.open(tmp_path / "demos", readonly=True) as store:
        with pytest.raises(GolemError, match="read-only"):
            store.reserve_seeds("basic", 0, 1)
    with TrajectoryStore.open(tmp_path / "demos", readonly=False) as store:
        assert store.reserve_seeds("basic", 0, 2) == [9, 10]


RESERVER = textwrap.dedent(
    """
    import json, sys, time
    from golem.data.store import TrajectoryStore
    path, rounds, go = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    got = []
    with TrajectoryStore.open(path, readonly=False) as store:
        while time.time() < go:  # both processes start reserving at the same moment
            time.sleep(0.001)
        for _ in range(rounds):
            got += store.reserve_seeds("basic", 0, 3)
    print(json.dumps(got), flush=True)
    """
)


@pytest.mark.slow
def test_two_processes_reserving_seeds_never_share_one(tmp_path: Path) -> None:
    path = tmp_path / "demos"
    TrajectoryStore.create(path).close()
    go = time.time() + 3.0
    procs = [
        subprocess.Popen([sys.executable, "-c", RESERVER, str(path), "60", str(go)], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    try:
        got = [json.loads(proc.communicate(timeout=120)[0].strip().splitlines()[-1]) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    assert all(proc.returncode == 0 for proc in procs)
    assert len(got[0]) == len(got[1]) == 180
    assert not set(got[0]) & set(got[1])
    assert sorted(got[0] + got[1]) == list(range(360))  # nothing skipped either
