"""Sequence dataset and stateful stratified sampler over a real LMDB store.

Frames encode their origin: channel 0 = episode id, channel 1 = step, channel 2
= column index (so a mirrored frame is recognisable). Actions press MOVE_LEFT
and TURN_LEFT on a step pattern and never their right partners, so mirroring
shows in the targets.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from golem.builtin.visual import VisualSensor
from golem.data.dataset import (
    POINTER_DTYPE,
    SequenceDataset,
    bench_batches,
    build_pointers,
    check_compatible,
    mirror_actions,
    select_episodes,
    split_episodes,
)
from golem.data.sampling import StatefulStratifiedSampler
from golem.data.store import EpisodeMeta, TrajectoryStore
from golem.errors import GolemError
from golem.profiles import BASIC, PROFILES
from golem.settings import GolemSettings, TrainingSettings

L = 4
A = len(BASIC)
IDX = {name: i for i, name in enumerate(BASIC)}

try:
    from golem_sensors_thermal import ThermalSensor
except Exception:  # plugin not installed
    ThermalSensor = None  # type: ignore[assignment,misc]
try:
    from golem_sensors_depth import DepthSensor
except Exception:
    DepthSensor = None  # type: ignore[assignment,misc]
try:
    from golem_sensors_audio import AudioSensor
except Exception:
    AudioSensor = None  # type: ignore[assignment,misc]


def episode_arrays(eid: int, T: int, actions: tuple[str, ...] = BASIC, audio_n: int = 8) -> dict[str, np.ndarray]:
    t = np.arange(T)
    frames = np.empty((T, 3, 64, 64), dtype=np.uint8)
    frames[:, 0] = eid
    frames[:, 1] = t[:, None, None]
    frames[:, 2] = np.arange(64, dtype=np.uint8)[None, None, :]
    act = np.zeros((T, len(actions)), dtype=np.uint8)
    act[:, actions.index("MOVE_LEFT")] = t % 2 == 0
    act[:, actions.index("TURN_LEFT")] = t % 3 == 0
    act[:, actions.index("ATTACK")] = 1
    thermals = np.zeros((T, 1, 64, 64), dtype=np.uint8)
    thermals[:, 0, :, :8] = 1  # hot on the left edge
    depths = np.broadcast_to(np.arange(64, dtype=np.uint8)[None, None, None, :] * 2, (T, 1, 64, 64)).copy()
    audios = np.empty((T, 2, audio_n), dtype=np.float16)
    audios[:, 0] = 1.0  # left channel loud
    audios[:, 1] = -0.5
    return {"actions": act, "frames": frames, "thermals": thermals, "depths": depths, "audios": audios}


def write(
    store: TrajectoryStore,
    T: int,
    *,
    source: str = "human",
    scenario: str = "basic",
    tags: list[str] | None = None,
    profile: str = "basic",
    keys: tuple[str, ...] | None = None,
) -> int:
    actions = PROFILES[profile]
    eid = len(store)  # ids are allocated in order in a fresh store
    arrays = episode_arrays(eid, T, actions)
    if keys is not None:
        arrays = {k: v for k, v in arrays.items() if k in keys or k == "actions"}
    sensors = [
        s
        for s, k in (("visual", "frames"), ("thermal", "thermals"), ("depth", "depths"), ("audio", "audios"))
        if k in arrays
    ]
    meta = EpisodeMeta(
        profile=profile,
        action_names=list(actions),
        scenario=scenario,
        source=source,  # type: ignore[arg-type]
        sensors=sensors,
        tags=tags or [],
    )
    got = store.write_episode(meta, arrays)
    assert got == eid
    return got


#: (length, source): 8 base episodes of assorted lengths (one too short, tails to drop), 2 recovery ones.
LAYOUT = [
    (21, "human"),
    (12, "expert"),
    (3, "human"),
    (30, "human"),
    (17, "expert"),
    (8, "human"),
    (25, "human"),
    (13, "human"),
    (9, "recovery"),
    (6, "recovery"),
]


@pytest.fixture
def store(tmp_path: Path):
    with TrajectoryStore.create(tmp_path / "demos", chunk_steps=5) as s:
        for T, source in LAYOUT:
            write(s, T, source=source)
        yield s


@pytest.fixture
def gsettings() -> GolemSettings:
    return GolemSettings.model_construct()


def training(**kw) -> TrainingSettings:
    base = dict(sequence_length=L, batch_size=4, mirror=True, recovery_ratio=0.25, seed=3)
    return TrainingSettings(**{**base, **kw})


def dataset(store: TrajectoryStore, gsettings: GolemSettings, **kw) -> SequenceDataset:
    return SequenceDataset.from_store(store, [VisualSensor(gsettings)], BASIC, training(**kw), profile="basic")


def origin(batch_frames) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(episode [B], steps [B, L], mirrored [B]) read back from loaded visual inputs (float in [0, 1])."""
    raw = np.rint(batch_frames.numpy() * 255).astype(np.int64)
    episode = raw[:, 0, 0, 0, 0]
    steps = raw[:, :, 1, 0, 0]
    mirrored = raw[:, 0, 2, 0, 0] == 63
    return episode, steps, mirrored


# --- pointer map -------------------------------------------------------------


def test_pointer_map_stride_tail_short_and_mirror(store: TrajectoryStore, gsettings: GolemSettings) -> None:
    ds = dataset(store, gsettings, mirror=False)
    p = ds.pointers
    assert p.dtype == POINTER_DTYPE and len(ds) == sum(-(-T // L) for T, _ in LAYOUT)
    for eid, (T, source) in enumerate(LAYOUT):
        mine = p[p["episode"] == eid]
        assert mine["start"].tolist() == list(range(0, T, L))  # stride L, the tail kept
        assert mine["length"].tolist() == [min(L, T - s) for s in range(0, T, L)]
        assert int(mine["length"].sum()) == T  # every step in exactly one window
        assert (mine["is_first"] == (mine["start"] == 0)).all()
        assert (mine["recovery"] == (source == "recovery")).all()
    short = p[p["episode"] == 2]  # 3 steps < L: one window of 3 real steps
    assert short["start"].tolist() == [0] and short["length"].tolist() == [3]
    assert ds.steps == sum(T for T, _ in LAYOUT)
    m = dataset(store, gsettings, mirror=True).pointers
    assert len(m) == 2 * len(p) and m["mirrored"].sum() == len(p)
    assert dataset(store, gsettings, mirror=True).steps == 2 * ds.steps  # mirrored twins count too
    plain = {(int(r["episode"]), int(r["start"])) for r in m[~m["mirrored"]]}
    twins = {(int(r["episode"]), int(r["start"])) for r in m[m["mirrored"]]}
    assert plain == twins


# --- sampler: continuity, is_first, stratification, epochs ------------------------


def test_rows_continue_through_loaded_frames(store: TrajectoryStore, gsettings: GolemSettings) -> None:
    ds = dataset(store, gsettings)
    sampler = StatefulStratifiedSampler(ds, training())
    prev = None
    n = 0
    padded = 0
    for indices in sampler:
        inputs, targets, is_first, mask, _ = ds.load_batch(indices)
        assert inputs["visual"].shape == (4, L, 3, 64, 64) and targets.shape == (4, L, A)
        episode, steps, mirrored = origin(inputs["visual"])
        real = mask.numpy()
        rows = ds.pointers[np.asarray(indices)]
        assert real.sum(axis=1).tolist() == rows["length"].tolist()
        for b in range(len(indices)):  # real steps are contiguous; padding repeats the last real step
            k = int(real[b].sum())
            assert real[b, :k].all() and not real[b, k:].any()
            assert (np.diff(steps[b, :k]) == 1).all() and (steps[b, k:] == steps[b, k - 1]).all()
            assert (targets[b, k:] == targets[b, k - 1]).all()
            padded += k < L
        # is_first exactly where the window starts an episode
        assert is_first.tolist() == (steps[:, 0] == 0).tolist()
        if prev is None:
            assert is_first.all()
        else:
            p_ep, p_steps, p_mir = prev
            cont = ~is_first.numpy()
            assert (episode[cont] == p_ep[cont]).all()
            assert (mirrored[cont] == p_mir[cont]).all()
            assert (steps[cont, 0] == p_steps[cont, -1] + 1).all()
        prev = (episode, steps, mirrored)
        n += 1
    assert n == len(StatefulStratifiedSampler(ds, training())) > 5
    assert padded > 0  # the tails were read


def test_recovery_share_and_recycling(store: TrajectoryStore, gsettings: GolemSettings) -> None:
    ds = dataset(store, gsettings, batch_size=8, recovery_ratio=0.25, mirror=False)
    sampler = StatefulStratifiedSampler(ds, training(batch_size=8, recovery_ratio=0.25))
    assert sampler.n_recovery == 2 and list(sampler.recovery_rows) == [0, 1]
    rows = np.array(list(sampler))
    rec = ds.pointers["recovery"][rows]  # [batches, B]
    assert rec[:, :2].all() and not rec[:, 2:].any()
    assert rec.mean() == pytest.approx(0.25)
    # recovery streams: 2 episodes with 3 and 2 windows; recycled within one epoch
    starts = Counter(int(ds.pointers["episode"][i]) for i in rows[:, :2].ravel() if ds.pointers["is_first"][i])
    assert set(starts) == {8, 9} and sum(starts.values()) > 2
    # at least one recovery row even for a small ratio; none when the pool is empty
    assert StatefulStratifiedSampler(ds, training(batch_size=8, recovery_ratio=0.01)).n_recovery == 1
    no_rec = SequenceDataset.from_store(store, [VisualSensor(gsettings)], BASIC, training(), include_recovery=False)
    assert StatefulStratifiedSampler(no_rec, training(batch_size=8)).n_recovery == 0


def test_epoch_ends_when_base_pool_is_exhausted(store: TrajectoryStore, gsettings: GolemSettings) -> None:
    ds = dataset(store, gsettings)
    sampler = StatefulStratifiedSampler(ds, training(batch_size=6, recovery_ratio=0.2))
    batches = list(sampler)
    assert all(len(b) == 6 for b in batches) and len(batches) > 0
    p = ds.pointers
    base_rows = np.array(batches)[:, sampler.n_recovery :]
    used = base_rows.ravel()
    # the pool is empty at the end: every base stream was started, except those drawn
    # for the final batch that could not be filled (fewer than the base rows)
    started = {(int(p["episode"][i]), bool(p["mirrored"][i])) for i in used if p["is_first"][i]}
    all_streams = {(int(r["episode"]), bool(r["mirrored"])) for r in p[~p["recovery"]]}
    assert started <= all_streams and len(all_streams - started) < sampler.n_base
    # ... no base window twice, and the epoch stopped when some row's stream ran out
    assert len(set(used.tolist())) == used.size
    last = base_rows[-1]
    ends = [int(p["start"][i]) + L >= ds.episodes[int(p["episode"][i])].length for i in last]
    assert any(ends)
    # skipped base windows are only tails of streams in flight at the end
    missing = set(np.flatnonzero(~p["recovery"]).tolist()) - set(used.tolist())
    in_flight = {(int(p["episode"][i]), bool(p["mirrored"][i])) for i in last} | (all_streams - started)
    assert all((int(p["episode"][i]), bool(p["mirrored"][i])) in in_flight for i in missing)


@pytest.mark.parametrize("mirror", [False, True])
def test_every_base_window_once_per_epoch_with_one_base_row(
    store: TrajectoryStore, gsettings: GolemSettings, mirror: bool
) -> None:
    ds = dataset(store, gsettings, mirror=mirror)
    sampler = StatefulStratifiedSampler(ds, training(batch_size=2, recovery_ratio=0.5))
    assert sampler.n_recovery == 1 and sampler.n_base == 1
    for _epoch in range(2):
        base = [b[1] for b in sampler]
        expected = np.flatnonzero(~ds.pointers["recovery"]).tolist()
        assert sorted(base) == expected  # each exactly once, mirrored twins too
        assert ds.pointers["mirrored"][base].sum() == (len(expected) // 2 if mirror else 0)


def test_deterministic_in_seed_and_epoch(store: TrajectoryStore, gsettings: GolemSettings) -> None:
    ds = dataset(store, gsettings)
    a = StatefulStratifiedSampler(ds, training())
    b = StatefulStratifiedSampler(ds.pointers, GolemSettings.model_construct(training=training()))
    e0, e1 = list(a), list(a)
    assert e0 == list(b) and e1 == list(b)
    assert e0 != e1  # reshuffled per epoch
    a.set_epoch(0)
    assert list(a) == e0
    c = StatefulStratifiedSampler(ds, training(seed=4))
    assert list(c) != e0


def test_fewer_streams_than_batch_size_lowers_the_batch(store: TrajectoryStore, gsettings: GolemSettings) -> None:
    from structlog.testing import capture_logs  # noqa: PLC0415

    ds = dataset(store, gsettings, mirror=False)  # 8 base streams, 2 recovery streams
    with capture_logs() as logs:
        sampler = StatefulStratifiedSampler(ds, training(batch_size=64, recovery_ratio=0.25))
    assert sampler.n_base == 8 and sampler.batch_size == sampler.n_base + sampler.n_recovery
    assert sampler.n_recovery == 3  # round(8 * 0.25 / 0.75): the requested share
    warning = [e for e in logs if e["event"] == "sampler.fewer_streams"]
    assert warning and warning[0]["requested_batch_size"] == 64 and warning[0]["batch_size"] == 11
    batches = list(sampler)
    assert batches and all(len(b) == 11 for b in batches)
    base = np.array(batches)[:, sampler.n_recovery :].ravel().tolist()
    assert sorted(base) == sorted(set(base))  # no base window twice
    empty = SequenceDataset(store, [], [VisualSensor(gsettings)], BASIC, L)
    with pytest.raises(GolemError, match="no training episode"):
        StatefulStratifiedSampler(empty, training())


def test_registered_as_stateful_sampler() -> None:
    from golem.plugins import load_plugins  # noqa: PLC0415

    host = load_plugins()
    assert host.registry.get("samplers", "stateful").obj is StatefulStratifiedSampler


# --- mirroring -----------------------------------------------------------------


def test_mirrored_window_is_flip_of_plain_and_involution(store: TrajectoryStore, gsettings: GolemSettings) -> None:
    sensors = [VisualSensor(gsettings)]
    if ThermalSensor is not None:
        sensors.append(ThermalSensor(gsettings))
    if DepthSensor is not None:
        sensors.append(DepthSensor(gsettings))
    ds = SequenceDataset(store, store.episodes(), sensors, BASIC, L, mirror=True)
    p = ds.pointers
    plain = np.flatnonzero(~p["mirrored"])
    twin = [
        int(np.flatnonzero(p["mirrored"] & (p["episode"] == p["episode"][i]) & (p["start"] == p["start"][i]))[0])
        for i in plain
    ]
    a_in, a_t, a_first, a_mask, _ = ds.load_batch(plain)
    b_in, b_t, b_first, b_mask, _ = ds.load_batch(twin)
    assert (a_mask == b_mask).all()
    assert (a_first == b_first).all()
    for s in sensors:
        x, y = a_in[s.name].numpy(), b_in[s.name].numpy()
        np.testing.assert_array_equal(y, x[..., ::-1])  # image sensors flip width
        np.testing.assert_array_equal(s.mirror(s.mirror(x)), x)
        assert not np.array_equal(x, y)
    t, m = a_t.numpy(), b_t.numpy()
    for left, right in (("MOVE_LEFT", "MOVE_RIGHT"), ("TURN_LEFT", "TURN_RIGHT")):
        np.testing.assert_array_equal(m[..., IDX[right]], t[..., IDX[left]])
        np.testing.assert_array_equal(m[..., IDX[left]], t[..., IDX[right]])
        assert t[..., IDX[left]].any() and not t[..., IDX[right]].any()
    for other in ("MOVE_FORWARD", "ATTACK", "USE"):
        np.testing.assert_array_equal(m[..., IDX[other]], t[..., IDX[other]])
    np.testing.assert_array_equal(mirror_actions(mirror_actions(t, BASIC), BASIC), t)
    np.testing.assert_array_equal(mirror_actions(t, BASIC), m)


@pytest.mark.skipif(AudioSensor is None, reason="golem-sensors-audio not installed")
def test_audio_mirror_swaps_stereo_channels(tmp_path: Path, gsettings: GolemSettings) -> None:
    sensor = AudioSensor(gsettings)
    n = sensor.shape[-1]
    with TrajectoryStore.create(tmp_path / "audio", chunk_steps=3) as s:
        arrays = episode_arrays(0, 8, audio_n=n)
        meta = EpisodeMeta(profile="basic", action_names=list(BASIC), scenario="basic", sensors=["visual", "audio"])
        s.write_episode(meta, {k: arrays[k] for k in ("actions", "frames", "audios")})
        ds = SequenceDataset(s, s.episodes(), [sensor], BASIC, L, mirror=True)
        raw_plain = ds.pointers[~ds.pointers["mirrored"]]
        stored = s.read(0, "audios", 0, L)
        np.testing.assert_array_equal(sensor.mirror(sensor.mirror(stored)), stored)
        np.testing.assert_array_equal(sensor.mirror(stored)[:, 0], stored[:, 1])
        assert len(raw_plain) == 2
        i_plain = int(np.flatnonzero(~ds.pointers["mirrored"])[0])
        i_twin = int(np.flatnonzero(ds.pointers["mirrored"])[0])
        x = ds.load_batch([i_plain, i_twin]).inputs["audio"]
        assert not np.array_equal(x[0].numpy(), x[1].numpy())


# --- selection, compatibility, split ------------------------------------------------


def test_module_and_recovery_selection(tmp_path: Path) -> None:
    with TrajectoryStore.create(tmp_path / "sel", chunk_steps=8) as s:
        a = write(s, 8, scenario="basic")
        b = write(s, 8, scenario="deathmatch", tags=["basic"])
        c = write(s, 8, scenario="deathmatch")
        d = write(s, 8, scenario="basic", source="recovery")
        assert [i.id for i in select_episodes(s, module="basic")] == [a, b, d]
        assert [i.id for i in select_episodes(s, module="basic", include_recovery=False)] == [a, b]
        assert [i.id for i in select_episodes(s, module="deathmatch")] == [b, c]
        assert [i.id for i in select_episodes(s)] == [a, b, c, d]
        with pytest.raises(GolemError, match="no episodes for module 'nope'"):
            SequenceDataset.from_store(s, [], BASIC, training(), module="nope")


def test_action_mismatch_is_one_line(tmp_path: Path, gsettings: GolemSettings) -> None:
    with TrajectoryStore.create(tmp_path / "mix", chunk_steps=8) as s:
        write(s, 8)
        write(s, 8, profile="fluid")
        with pytest.raises(GolemError) as err:
            SequenceDataset.from_store(s, [VisualSensor(gsettings)], BASIC, training(), profile="basic")
    msg = str(err.value)
    assert "\n" not in msg
    assert "episode 1 was recorded with profile fluid (9 actions) but the model uses basic (8)" in msg


def test_reordered_actions_are_rejected(store: TrajectoryStore, gsettings: GolemSettings) -> None:
    swapped = list(BASIC)
    swapped[0], swapped[1] = swapped[1], swapped[0]
    with pytest.raises(GolemError, match=r"action 0 is MOVE_FORWARD") as err:
        check_compatible(store.episodes(), [VisualSensor(gsettings)], swapped, "custom")
    assert "\n" not in str(err.value)


@pytest.mark.skipif(ThermalSensor is None, reason="golem-sensors-thermal not installed")
def test_missing_sensor_array_is_one_line(tmp_path: Path, gsettings: GolemSettings) -> None:
    with TrajectoryStore.create(tmp_path / "nothermal", chunk_steps=8) as s:
        write(s, 8)
        write(s, 8, keys=("frames",))
        with pytest.raises(GolemError) as err:
            SequenceDataset.from_store(s, [VisualSensor(gsettings), ThermalSensor(gsettings)], BASIC, training())
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith("the settings enable sensor 'thermal' but episode 1 has no 'thermals' array")
    assert "--plugin thermal" in msg


def test_validation_split_by_whole_episodes(store: TrajectoryStore, gsettings: GolemSettings) -> None:
    ds = dataset(store, gsettings)
    train, val = ds.split(0.25, seed=7)
    t_ids, v_ids = set(train.episodes), set(val.episodes)
    assert t_ids and v_ids and not t_ids & v_ids and t_ids | v_ids == set(ds.episodes)
    assert not set(train.pointers["episode"].tolist()) & set(val.pointers["episode"].tolist())
    assert train.mirror and not val.mirror
    again_t, again_v = ds.split(0.25, seed=7)
    assert set(again_t.episodes) == t_ids and set(again_v.episodes) == v_ids
    assert len(train) + 2 * len(val) == len(ds)
    # split_episodes: base episodes always keep one for training
    base_t, base_v = split_episodes(store.episodes(), 0.9, seed=1)
    assert any(i.meta.source != "recovery" for i in base_t)
    _, none_v = split_episodes(store.episodes(), 0.0, seed=1)
    assert none_v == []


def test_build_pointers_and_bench(store: TrajectoryStore, gsettings: GolemSettings) -> None:
    p = build_pointers(store.episodes(), 10, mirror=False)
    assert p["start"].tolist() == [0, 10, 20, 0, 10, 0, 0, 10, 20, 0, 10, 0, 0, 10, 20, 0, 10, 0, 0]
    assert p["length"].tolist() == [10, 10, 1, 10, 2, 3, 10, 10, 10, 10, 7, 8, 10, 10, 5, 10, 3, 9, 6]
    ds = dataset(store, gsettings)
    rate = bench_batches(ds, StatefulStratifiedSampler(ds, training()), 3)
    assert rate > 0


def test_load_batch_to_device_matches_cpu(store: TrajectoryStore, gsettings: GolemSettings) -> None:
    import torch  # noqa: PLC0415

    ds = dataset(store, gsettings)
    indices = next(iter(StatefulStratifiedSampler(ds, training())))
    cpu = ds.load_batch(indices)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    moved = ds.load_batch(indices, device=device)
    assert moved.targets.device.type == device and moved.targets.dtype == torch.float32
    assert moved.is_first.dtype == torch.bool
    torch.testing.assert_close(moved.inputs["visual"].cpu(), cpu.inputs["visual"])
    torch.testing.assert_close(moved.targets.cpu(), cpu.targets)
    assert moved.is_first.cpu().tolist() == cpu.is_first.tolist()


def test_copies_of_one_episode_start_stay_on_one_side_of_the_split() -> None:
    from golem.data.store import EpisodeInfo

    def info(eid: int, seed: int | None) -> EpisodeInfo:
        meta = EpisodeMeta(profile="basic", action_names=list(BASIC), scenario="basic", seed=seed, length=10)
        return EpisodeInfo(id=eid, meta=meta, arrays={}, chunk_steps=8)

    episodes = [info(i, i % 10) for i in range(40)]  # four copies of seeds 0..9
    for split_seed in range(20):
        train, val = split_episodes(episodes, 0.3, seed=split_seed)
        assert val and train
        assert not {i.meta.seed for i in train} & {i.meta.seed for i in val}
        assert len(val) == 4 * 3  # 3 of the 10 distinct starts, with all their copies
    unseeded = [info(i, None) for i in range(10)]  # no seed known: each episode is its own start
    assert len(split_episodes(unseeded, 0.3, seed=0)[1]) == 3
