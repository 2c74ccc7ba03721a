"""Recording on generated maps in parallel worker processes: maps built once by the workers, cached by
configuration and seed, every episode carrying its map's generator, phase, seed and configuration; a killed
recorder takes its workers and engines with it and keeps every completed episode."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from golem.data.store import TrajectoryStore
from golem.learning.checkpoints import read_metadata
from tests.conftest import GOLEM, _clean_env
from tests.helpers import json_out
from tests.test_record import _alive, _children, _command, _wait_for_episodes

pytestmark = [pytest.mark.engine, pytest.mark.slow]


def _store(tmp_path: Path) -> Path:
    return tmp_path / "golem-data" / "stores" / "demos"


def test_workers_build_and_play_maps_and_every_episode_names_its_map(golem_cli, tmp_path: Path) -> None:
    args = ["run", "record", "--expert", "explorer", "--procgen-phase", "1", "--maps", "4", "--workers", "2"]
    rec = golem_cli([*args, "--seed", "3"], check=True)
    assert "recorded 4 episode(s) on 4 phase-1 maps of builtin" in rec.stdout, rec.stdout
    maps = sorted((tmp_path / "golem-data" / "maps" / "builtin" / "phase1").glob("*.wad"))
    assert [m.name[:10] for m in maps] == ["seed000003", "seed000004", "seed000005", "seed000006"]
    stamps = {m: m.stat().st_mtime_ns for m in maps}
    with TrajectoryStore.open(_store(tmp_path)) as store:
        infos = store.episodes()
        assert [i.meta.seed for i in infos] == [3, 4, 5, 6]  # written in seed order, whichever worker finished first
        for info in infos:
            world = info.meta.extra["world"]
            assert world["generator"] == "builtin" and world["phase"] == 1 and world["seed"] == info.meta.seed
            assert len(world["config_sha256"]) == 64 and world["params"]
            assert Path(info.meta.scenario).name.startswith(f"seed{info.meta.seed:06d}-{world['config_sha256'][:10]}")
            assert {"generator:builtin", "procgen-phase1"} <= set(info.meta.tags)
            # phase 1's defaults: a decision every four tics, the automap recorded beside the screen
            assert info.meta.frame_skip == 4 and info.meta.sensors == ["visual", "automap"]
    assert "phase-1 maps: a decision every 4 tics (--frame-skip) and the automap sensor" in rec.stderr, rec.stderr
    # Recording the same maps again reuses them (nothing rebuilt); the filters of `data list` find them.
    golem_cli([*args, "--seed", "3"], check=True)
    assert {m: m.stat().st_mtime_ns for m in maps} == stamps
    listed = json_out(golem_cli(["data", "list", "--built-by", "builtin", "--phase", "1", "--json"], check=True))
    assert len(listed["episodes"]) == 8 and all(e["world"]["phase"] == 1 for e in listed["episodes"])
    other = json_out(golem_cli(["data", "list", "--phase", "2", "--json"], check=True))
    assert other["episodes"] == []
    # Training on them takes the automap too, and says so; the checkpoint plays at four tics.
    trained = golem_cli(["run", "train", "--updates", "2", "--no-tensorboard"], check=True)
    assert "training on the automap sensor beside the screen" in trained.stderr, trained.stderr
    meta = read_metadata(tmp_path / "golem-data" / "models" / "basic" / "active.safetensors")
    assert meta["spec"]["sensors"] == ["visual", "automap"] and meta["data"]["frame_skip"] == 4
    # Either default is the user's to turn off; a store without the automap trains without it, silently.
    plain = tmp_path / "plain"
    golem_cli(
        [
            *args[:-4],
            "--maps",
            "1",
            "--seed",
            "9",
            "--frame-skip",
            "1",
            "--plugin",
            "no:automap",
            "--store",
            str(plain),
        ],
        check=True,
    )
    with TrajectoryStore.open(plain) as store:
        (info,) = store.episodes()
        assert info.meta.frame_skip == 1 and info.meta.sensors == ["visual"]
    trained = golem_cli(["run", "train", "--updates", "2", "--no-tensorboard", "--store", str(plain)], check=True)
    assert "automap" not in trained.stderr
    assert read_metadata(tmp_path / "golem-data" / "models" / "basic" / "active.safetensors")["spec"]["sensors"] == [
        "visual"
    ]


def test_a_killed_recorder_takes_its_map_workers_with_it(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [str(GOLEM), "run", "record", "--expert", "explorer", "--procgen-phase", "1", "--maps", "200"]
        + ["--workers", "2"],
        cwd=tmp_path,
        env=_clean_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_for_episodes(_store(tmp_path), 2, proc, timeout=180)
        workers = _children(proc.pid)
        assert len(workers) >= 2, workers
        # a worker starts an engine per map: one listed a moment ago may have exited since (no comm to read)
        engines = {e for w in workers for e in _children(w) if _command(e) == "vizdoom"}
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(_alive(p) for p in workers | engines):
            time.sleep(0.2)
        left = sorted(p for p in workers | engines if _alive(p))
        assert not left, f"left running after SIGKILL of the recorder: {left}"
    finally:
        if proc.poll() is None:
            proc.kill()
    with TrajectoryStore.open(_store(tmp_path)) as store:
        kept = store.episodes()
        assert len(kept) >= 2 and [i.meta.seed for i in kept] == list(range(len(kept)))


def test_every_episode_on_a_variant_of_its_own(golem_cli, tmp_path: Path) -> None:
    args = ["run", "record", "--expert", "defend_the_center", "--episodes", "3", "--max-steps", "200"]
    rec = golem_cli([*args, "--vary", "textures,monsters", "--workers", "2"], check=True)
    assert "recorded 3 episode(s)" in rec.stdout, rec.stdout
    with TrajectoryStore.open(_store(tmp_path)) as store:
        infos = store.episodes()
        assert [i.meta.scenario for i in infos] == ["defend_the_center"] * 3  # the scenario's spec applies
        worlds = [i.meta.extra["world"] for i in infos]
        assert [w["seed"] for w in worlds] == [i.meta.seed for i in infos] == [0, 1, 2]
        assert all(w["generator"] == "vary" and w["phase"] is None for w in worlds)
        assert {"vary:textures", "vary:monsters", "generator:vary"} <= set(infos[0].meta.tags)
        assert all(i.meta.frame_skip == 4 for i in infos)  # defend_the_center's spec
        assert max(i.meta.extra["kills"] for i in infos) > 0  # the expert finds the replaced monsters
        frames = [store.read(i, "frames")[0] for i in infos]
    variants = sorted((tmp_path / "golem-data" / "maps" / "vary").rglob("*.cfg"))
    assert len(variants) >= 3
    assert not (frames[0] == frames[1]).all() and not (frames[1] == frames[2]).all()  # three looks
    bad = golem_cli([*args, "--vary", "textures,sparkles"])
    assert bad.returncode != 0 and len(bad.stderr.strip().splitlines()) == 1 and "sparkles" in bad.stderr, bad.stderr
    assert golem_cli(["data", "list", "--built-by", "vary", "--json"], check=True).stdout.count('"vary"') >= 3


def test_a_scenario_whose_spec_varies_it_is_recorded_on_variants_unless_told_not_to(golem_cli, tmp_path: Path) -> None:
    """defend_the_center's spec records every expert episode on a variant of its own (the generalisation
    board's winner there); ``--vary none`` records on the shipped map; a scenario whose spec does not vary stays
    on its shipped map."""
    from golem.scenarios import SCENARIO_SPECS

    assert SCENARIO_SPECS["defend_the_center"].vary and not SCENARIO_SPECS["health_gathering"].vary
    args = ["run", "record", "--episodes", "2", "--max-steps", "120"]
    varied = golem_cli([*args, "--expert", "defend_the_center"], check=True)
    assert "the scenario's default" in varied.stderr and "--vary none" in varied.stderr, varied.stderr
    golem_cli([*args, "--expert", "defend_the_center", "--vary", "none"], check=True)
    plain = golem_cli([*args, "--expert", "health_gathering"], check=True)
    assert "variant" not in plain.stderr
    with TrajectoryStore.open(_store(tmp_path)) as store:
        infos = store.episodes()
    worlds = [(i.meta.scenario, (i.meta.extra.get("world") or {}).get("generator")) for i in infos]
    assert (
        worlds
        == [("defend_the_center", "vary")] * 2 + [("defend_the_center", None)] * 2 + [("health_gathering", None)] * 2
    )
    mods = set(SCENARIO_SPECS["defend_the_center"].vary)
    assert {f"vary:{m}" for m in mods} <= set(infos[0].meta.tags) and not any(
        t.startswith("vary:") for t in infos[2].meta.tags
    )
