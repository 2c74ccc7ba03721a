"""``golem procgen …`` and the core commands on generated maps, through the installed ``golem`` script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from golem.testing import assert_command_contract

GOLEM = Path(sys.executable).with_name("golem")


def golem(args: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOLEM_")}
    return subprocess.run([str(GOLEM), *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout)


def one_error_line(proc: subprocess.CompletedProcess[str], text: str) -> None:
    assert proc.returncode != 0
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and text in lines[0], proc.stderr


def test_commands_are_added_by_the_plugin() -> None:
    import golem_procgen.plugin as plugin

    for command in (["procgen", "sample"], ["procgen", "build"], ["procgen", "preview"]):
        assert "Usage" in assert_command_contract(plugin, command)


@pytest.mark.slow
def test_sample_prints_the_configuration_and_the_priors(tmp_path: Path) -> None:
    proc = golem(["procgen", "sample", "--phase", "1", "--seed", "4", "--json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    config = json.loads(proc.stdout)
    assert config["phase"] == 1 and config["seed"] == 4 and config["params"]["teleporters"] == "none"
    again = json.loads(golem(["procgen", "sample", "--phase", "1", "--seed", "4", "--json"], tmp_path).stdout)
    assert again == config
    table = golem(
        [
            "procgen",
            "sample",
            "--phase",
            "3",
            "--seed",
            "4",
            "--set",
            'procgen.space.size=["micro"]',
            "--set",
            'procgen.space.mons=["swarms"]',
        ],
        tmp_path,
    )
    assert table.returncode == 0 and "prior fired: volume-vs-density" in table.stdout, table.stdout


@pytest.mark.engine
def test_build_then_preview(tmp_path: Path) -> None:
    import imageio.v3 as iio

    proc = golem(["procgen", "build", "--phase", "2", "--seed", "3", "--out", "maps/m.wad"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    for name in ("m.wad", "m.nav.json", "m.cfg"):
        assert (tmp_path / "maps" / name).is_file()
    proc = golem(["procgen", "preview", "maps/m.wad", "--out", "m.png", "--size", "256"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    image = iio.imread(tmp_path / "m.png")
    assert image.shape == (256, 256, 3)
    colours = {tuple(c) for c in image.reshape(-1, 3)[::7]}
    assert (235, 235, 235) in colours and (230, 50, 50) in colours  # walls and monsters were drawn
    assert np.mean(image) > 14  # more than the background


@pytest.mark.slow
def test_bad_input_is_one_line(tmp_path: Path) -> None:
    one_error_line(golem(["procgen", "build", "--phase", "4"], tmp_path), "unknown curriculum phase 4")
    one_error_line(
        golem(["procgen", "build", "--backend", "doombuilder"], tmp_path), "unknown map generator 'doombuilder'"
    )
    one_error_line(golem(["procgen", "build", "--out", "m.txt"], tmp_path), "--out must end in .wad")
    one_error_line(golem(["procgen", "preview", "missing.wad"], tmp_path), "missing.wad")
    one_error_line(
        golem(
            ["procgen", "build", "--backend", "oblige", "--set", "procgen.oblige_binary=/nonexistent/Oblige"], tmp_path
        ),
        "Oblige is not installed",
    )
    one_error_line(golem(["procgen", "curriculum", "--phases", "1,5"], tmp_path), "unknown curriculum phase 5")
    one_error_line(golem(["procgen", "curriculum", "--phases", "one"], tmp_path), "--phases takes comma-separated")
    one_error_line(golem(["procgen", "curriculum", "--expert", "basic"], tmp_path), "does not play generated maps")
    (tmp_path / "bad.wad").write_bytes(b"PWAD\x05\x00\x00\x00\xff\xff\x00\x00garbage")
    one_error_line(golem(["procgen", "preview", "bad.wad"], tmp_path), "bad.wad")
    assert not list(tmp_path.glob("*.png")) and not list(tmp_path.glob("procgen-*"))


@pytest.mark.engine
@pytest.mark.slow
def test_record_train_and_evaluate_on_generated_maps(tmp_path: Path) -> None:
    root = ["--set", f"data.root={tmp_path / 'data'}"]
    proc = golem(["run", "record", "--expert", "explorer", "--procgen-phase", "1", "--maps", "3", *root], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "3 episode(s) on 3 phase-1 maps of builtin" in proc.stdout and "reached the exit" in proc.stdout
    maps = sorted((tmp_path / "data" / "maps" / "builtin" / "phase1").glob("*.wad"))
    assert [m.name[:11] for m in maps] == ["seed000000-", "seed000001-", "seed000002-"]  # seed, configuration hash
    listing = golem(["data", "list", "--json", "--store", str(tmp_path / "data" / "stores" / "demos")], tmp_path)
    assert listing.returncode == 0, listing.stderr
    episodes = json.loads(listing.stdout)["episodes"]
    assert len(episodes) == 3 and all("procgen-phase1" in e["tags"] for e in episodes)
    proc = golem(
        [
            "run",
            "train",
            "--epochs",
            "1",
            "--device",
            "cpu",
            "--set",
            "brain.working_memory=16",
            "--set",
            "training.min_updates=0",
            "--set",
            "training.sequence_length=16",
            "--set",
            "training.batch_size=2",
            *root,
        ],
        tmp_path,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    proc = golem(["run", "evaluate", "--procgen-phase", "1", "--maps", "2", "--json", *root], tmp_path)
    assert proc.returncode == 0, proc.stderr
    board = json.loads(proc.stdout)
    assert board["scenario"].startswith("procgen phase 1") and board["seeds"] == [10000, 10001]
    assert board["expert"] == "explorer" and board["policies"]["expert"]["goal_rate"] == 1.0
    assert board["policies"]["model"]["episodes"] == 2
    assert "on 2 phase-1 maps of builtin" in proc.stderr and "seed010000" not in proc.stderr  # not the first map
    one_error_line(
        golem(["run", "record", "--expert", "basic", "--procgen-phase", "1", "--maps", "1", *root], tmp_path),
        "does not play generated maps",
    )
    one_error_line(golem(["run", "record", "--expert", "explorer", *root], tmp_path), "plays generated maps")


@pytest.mark.engine
@pytest.mark.slow
def test_curriculum_runs_end_to_end_at_small_size(tmp_path: Path) -> None:
    root = [
        "--set",
        f"data.root={tmp_path / 'data'}",
        "--set",
        "brain.working_memory=16",
        "--set",
        "training.batch_size=2",
        "--set",
        "training.sequence_length=16",
        "--set",
        "training.min_updates=0",
    ]
    proc = golem(
        [
            "procgen",
            "curriculum",
            "--phases",
            "1,2",
            "--maps-per-round",
            "2",
            "--rounds",
            "2",
            "--promote-at",
            "1.0",
            "--eval-maps",
            "1",
            "--updates-per-round",
            "3",
            "--workers",  # rounds after the first record in spawned workers: this process has trained by then
            "2",
            "--json",
            *root,
        ],
        tmp_path,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    rounds = report["rounds"]
    # A tiny model passes nothing at 100 %, so each phase uses both rounds and is promoted by force.
    assert [(r["phase"], r["round"], r["promoted"]) for r in rounds] == [
        (1, 1, None),
        (1, 2, "forced"),
        (2, 1, None),
        (2, 2, "forced"),
    ]
    assert [r["map_seeds"] for r in rounds] == [[0, 1], [2, 3], [0, 1], [2, 3]]
    assert all(r["updates"] == 3 and r["frames"] > 0 for r in rounds)
    assert rounds[0]["expert_exits"] == 1.0
    assert Path(report["model"]).is_file()
    listing = golem(["data", "list", "--json", "--store", str(tmp_path / "data" / "stores" / "demos")], tmp_path)
    tags = [e["tags"] for e in json.loads(listing.stdout)["episodes"]]
    assert len(tags) == 8 and sum("procgen-phase2" in t for t in tags) == 4 and all("curriculum" in t for t in tags)
