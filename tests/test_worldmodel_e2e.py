"""The world-model pipeline end to end on the real engine, through the `golem dream` console commands.

Tiny preset: 3 random take_cover rollouts and one probe, one VAE epoch, two MDN-RNNs of one epoch (an ensemble), two
CMA-ES generations of 4 candidates × 2 dreams, 2 real evaluation episodes.
Checks the files each stage leaves, that stages resume (skip what is done),
that the dream environment is reachable through the registry, and that user
errors are one line.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from golem.data.store import TrajectoryStore
from golem.learning.checkpoints import read_metadata

pytestmark = [pytest.mark.engine, pytest.mark.slow]


def test_dream_pipeline_through_the_cli(golem_cli, tmp_path: Path):
    run = tmp_path / "run"
    common = ["--run", str(run)]
    out = golem_cli(["dream", "collect", *common, "--preset", "tiny"], check=True)
    assert "collected 4 episodes" in out.stdout  # 3 random, then 1 probe (actions held 50–300 tics)
    with TrajectoryStore.open(run / "store") as store:
        infos = store.episodes()
        assert len(infos) == 4 and all(i.length >= 20 for i in infos)
        assert all(i.meta.scenario == "take_cover" and "wm-random" in i.meta.tags for i in infos)
        assert sum("wm-probe" in i.meta.tags for i in infos) == 1
    again = golem_cli(["dream", "collect", *common], check=True)  # resumable: the target is already met
    assert "4 already there" in again.stdout

    golem_cli(["dream", "train-vae", *common], check=True)
    meta = read_metadata(run / "vae.safetensors")
    assert meta["spec"] == {"model": "vae", "config": {"z_dim": 8, "channels": [8, 16, 16, 32]}}
    assert meta["progress"]["epochs"] == 1
    assert "already trained" in golem_cli(["dream", "train-vae", *common], check=True).stdout

    golem_cli(["dream", "train-rnn", *common], check=True)
    assert read_metadata(run / "mdnrnn.safetensors")["spec"]["config"]["hidden"] == 32
    # The tiny preset dreams with an ensemble of two: member 1 trained from the next seed.
    member = read_metadata(run / "mdnrnn_1.safetensors")
    assert (
        member["spec"]["config"]["hidden"] == 32
        and member["sha256"] != read_metadata(run / "mdnrnn.safetensors")["sha256"]
    )
    # An episode collected later is encoded with the rest when M trains on (more epochs).
    golem_cli(["dream", "collect", *common, "--episodes", "4"], check=True)
    assert len(read_metadata(run / "latents.safetensors")["episode_ids"]) == 4
    golem_cli(["dream", "train-rnn", *common, "--epochs", "2"], check=True)
    assert len(read_metadata(run / "latents.safetensors")["episode_ids"]) == 5
    assert read_metadata(run / "mdnrnn_1.safetensors")["progress"]["epochs"] == 2
    assert read_metadata(run / "latents.safetensors")["vae_sha256"] == meta["sha256"]

    ctrl = golem_cli(["dream", "train-controller", *common], check=True)
    assert "2 generation(s)" in ctrl.stdout
    records = [json.loads(line) for line in (run / "controller_log.jsonl").read_text().splitlines()]
    assert [r["generation"] for r in records] == [1, 2]
    assert "real_mean" in records[-1]  # the real-engine score of the best, logged beside the dream score
    assert read_metadata(run / "controller.safetensors")["rnn_members"] == 2
    more = golem_cli(
        ["dream", "train-controller", *common, "--set", "dream.rnn_members=3"]
    )  # member 2 was never trained
    assert (
        more.returncode == 2 and "mdnrnn_2.safetensors does not exist" in more.stderr and "Traceback" not in more.stderr
    )

    ev = golem_cli(["dream", "evaluate", *common], check=True)
    report = json.loads((run / "evaluation.json").read_text())
    assert report["episodes"] == 2 and len(report["controller"]["survival"]) == 2 and "random" in report
    assert "controller" in ev.stdout

    golem_cli(["dream", "render", *common, "--steps", "40"], check=True)
    assert (run / "dream.gif").stat().st_size > 0

    # The registered "dream" environment, built from this run's files, is a Gymnasium vector env.
    from golem.plugins import load_plugins
    from golem.settings import GolemSettings

    registry = load_plugins().registry
    factory = registry.get("environments", "dream").obj
    env = factory(GolemSettings(), registry, run=run, num_envs=3, warmup=4)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (3, 8 + 32)
    obs, reward, term, trunc, _ = env.step(np.zeros(3, np.int64))
    assert reward.shape == (3,)


def test_user_errors_are_one_line(golem_cli, tmp_path: Path):
    empty = tmp_path / "empty"
    proc = golem_cli(["dream", "train-rnn", "--run", str(empty), "--preset", "tiny"])
    assert proc.returncode == 2
    assert "golem dream train-vae" in proc.stderr and "Traceback" not in proc.stderr
    proc = golem_cli(["dream", "collect", "--run", str(tmp_path / "x"), "--preset", "nope"])
    assert proc.returncode == 2 and "unknown preset 'nope'" in proc.stderr


def test_screen_flashes_show_the_hits_take_cover_hides(tmp_path: Path):
    """``screen_flashes``: the same seeded random episode, recorded twice, differs only in the red damage flash."""
    from golem.plugins import load_plugins
    from golem.settings import GolemSettings
    from golem_worldmodel.collect import collect
    from golem_worldmodel.presets import get_preset

    registry = load_plugins().registry
    redness = {}
    for flashes in (False, True):
        preset = get_preset("tiny").with_overrides(
            episodes=1, probe_episodes=0, min_length=1, max_steps=400, screen_flashes=flashes
        )
        store_path = tmp_path / f"flashes-{flashes}"
        collect(GolemSettings(), registry, store_path, preset, "take_cover", seed=3)
        with TrajectoryStore.open(store_path) as store:
            (info,) = store.episodes()
            frames = np.asarray(store.read(info, "frames"), np.float32)  # [T, 3, 64, 64]
            redness[flashes] = (info.length, frames[:, 0].mean((1, 2)) - frames[:, 1:].mean((1, 2, 3)))
    (n_off, red_off), (n_on, red_on) = redness[False], redness[True]
    assert n_off == n_on  # the game is the same; only the rendering differs
    assert np.abs(red_on - red_off).max() > 60, "no hit turned the screen red"
    assert red_off.max() < red_on.max()
