"""``golem dream iterate`` end to end on the real engine: two tiny rounds after the pipeline, one of them killed
half-way and resumed.

Tiny preset: round 0 is the pipeline (3 random + 1 probe episodes, one VAE epoch, two MDN-RNNs, two CMA-ES
generations); each further round plays the kept controller (with ε-random holds) for 3 episodes, trains M one more
epoch, evolves two generations from the kept controller, checks it on 2 real episodes and calibrates the dream.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from golem.data.store import TrajectoryStore
from golem.learning.checkpoints import read_metadata

from .conftest import GOLEM, _clean_env

pytestmark = [pytest.mark.engine, pytest.mark.slow]

ROUND_EPISODES = 3


def _round_episodes(run: Path, r: int) -> list:
    if not (run / "store" / "data.mdb").is_file():
        return []
    with TrajectoryStore.open(run / "store") as store:
        return [i for i in store.episodes() if f"wm-round-{r}" in i.meta.tags]


def _rounds(run: Path) -> list[dict]:
    path = run / "rounds.json"
    return json.loads(path.read_text())["rounds"] if path.is_file() else []


def test_iterate_runs_rounds_resumes_a_killed_one_and_keeps_only_better_controllers(golem_cli, tmp_path: Path):
    run = tmp_path / "run"
    args = ["dream", "iterate", "--run", str(run), "--rounds", "2"]
    create = ["--preset", "tiny", "--set", f"dream.round_episodes={ROUND_EPISODES}", "--set", "dream.honest_ratio=1.0"]
    # honest_ratio 1.0: no dream is ever exactly honest, so the loop runs every round (a tiny dream may be honest).
    proc = subprocess.Popen(
        [str(GOLEM), *args, *create],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=_clean_env(),
        cwd=tmp_path,
        start_new_session=True,
    )
    deadline = time.monotonic() + 240
    try:
        # Kill the run as soon as round 2's first episode is stored (round 0 and 1 finished).
        while time.monotonic() < deadline and proc.poll() is None:
            if len(_rounds(run)) == 2 and _round_episodes(run, 2):
                break
            time.sleep(0.05)
        assert proc.poll() is None, f"iterate ended before it could be interrupted: {proc.stderr.read().decode()}"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    assert len(_rounds(run)) == 2 and 1 <= len(_round_episodes(run, 2)) <= ROUND_EPISODES

    out = golem_cli(args, check=True, timeout=300)
    records = _rounds(run)
    assert [r["round"] for r in records] == [0, 1, 2]
    assert "rounds of" in out.stdout and "kept controller" in out.stdout

    # Every round added its episodes once: the killed round resumed without playing a seed twice.
    with TrajectoryStore.open(run / "store") as store:
        infos = [i for i in store.episodes() if "wm-random" in i.meta.tags]
    seeds = [int(i.meta.seed) for i in infos]
    assert len(seeds) == len(set(seeds))
    for r in (1, 2):
        mine = [i for i in infos if f"wm-round-{r}" in i.meta.tags]
        assert len(mine) == ROUND_EPISODES and all("wm-controller" in i.meta.tags for i in mine)
        assert records[r]["added"]["episodes"] == ROUND_EPISODES
        assert records[r]["added"]["from_round"] == max(k["round"] for k in records[:r] if k["kept"])
    # M trained on all data: one more epoch per round, on latents that hold every episode.
    assert [r["rnn_epochs"] for r in records] == [1, 2, 3]
    assert len(read_metadata(run / "latents.safetensors")["episode_ids"]) == len(infos)

    # The gate's figures: held actions and the controller, dream against engine, finite.
    for rec in records:
        assert set(rec["calibration"]) == {"noop", "left", "right", "controller"}
        assert all(np.isfinite(v["ratio"]) and v["ratio"] > 0 for v in rec["calibration"].values())
        assert rec["real_episodes"] == 2 and not rec["honest"]

    # Kept: the first round, then a round only when its real check is at least the last kept one's and its
    # paired gain over the last kept controller on fresh seeds is confirmed; the run's controller is the last
    # kept round's, and every kept round keeps the M its controller reads.
    best = None
    for rec in records:
        passed = best is None or rec["real_mean"] >= best
        confirmation = rec["confirmation"]
        assert (confirmation is not None) == (passed and rec["round"] > 0)
        if confirmation is not None:
            assert confirmation["seeds"] == [80_000 + 1_000 * rec["round"], 80_001 + 1_000 * rec["round"]]
            assert confirmation["confirmed"] == (confirmation["gain"] > max(0.0, confirmation["se"]))
        assert rec["kept"] == (passed and (confirmation is None or confirmation["confirmed"]))
        assert (run / "rounds" / str(rec["round"]) / "mdnrnn.safetensors").is_file() == rec["kept"]
        if rec["kept"]:
            best, last_kept = rec["real_mean"], rec
    assert read_metadata(run / "controller.safetensors")["sha256"] == last_kept["controller_sha256"]

    # Done: a rerun changes nothing.
    before = (run / "rounds.json").read_bytes()
    golem_cli(args, check=True, timeout=120)
    assert (run / "rounds.json").read_bytes() == before

    # The collector is an expert like any other: it passes the experts' contract on this trained run.
    from golem.settings import GolemSettings, with_section
    from golem.testing import assert_expert_contract
    from golem_worldmodel.explore import DreamControllerPolicy, DreamControllerSettings

    settings = with_section(GolemSettings(), DreamControllerSettings(run=str(run), epsilon=0.5))
    expert = assert_expert_contract(DreamControllerPolicy, settings, tics=40, seed=5)
    assert expert.random_tics > 0  # ε 0.5: random holds were mixed in (and are reproducible, by the contract)


def test_iterate_bad_input_is_one_line_and_changes_nothing(golem_cli, tmp_path: Path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "rounds.json").write_text("{not json")
    proc = golem_cli(["dream", "iterate", "--run", str(run), "--preset", "tiny"])
    assert proc.returncode == 2 and "is not a rounds record" in proc.stderr and "Traceback" not in proc.stderr
    assert [p.name for p in run.iterdir()] == ["rounds.json"]  # nothing written beside it
    fresh = tmp_path / "fresh"
    proc = golem_cli(["dream", "iterate", "--run", str(fresh), "--set", "dream.round_confirm_episodes=1"])
    assert proc.returncode == 2 and "round_confirm_episodes" in proc.stderr and "Traceback" not in proc.stderr
    assert not fresh.exists()
    proc = golem_cli(["run", "record", "--expert", "dream-controller", "-s", "take_cover", "-n", "1"])
    assert proc.returncode == 2 and "experts.dream_controller.run" in proc.stderr and "Traceback" not in proc.stderr


def test_an_honest_dream_stops_the_rounds_unless_all_are_asked_for(golem_cli, tmp_path: Path):
    run = tmp_path / "run"
    args = ["dream", "iterate", "--run", str(run), "--rounds", "1"]
    # A bound of 1000×: any dream counts as honest, so round 0 is the last.
    out = golem_cli([*args, "--preset", "tiny", "--set", "dream.honest_ratio=1000"], check=True, timeout=300)
    assert [r["round"] for r in _rounds(run)] == [0] and _rounds(run)[0]["honest"]
    assert "the dream is honest" in out.stdout
    # A confirmation no round can pass: round 1 is not kept, and V and M have been refit since round 0's controller.
    v0 = read_metadata(run / "vae.safetensors")["sha256"]
    more = ["--set", "dream.round_confirm_margin=1e9", "--set", "dream.round_vae_epochs=1"]
    golem_cli([*args, "--all-rounds", *more], check=True, timeout=300)
    assert [r["round"] for r in _rounds(run)] == [0, 1] and not _rounds(run)[1]["kept"]
    assert len(_round_episodes(run, 1)) == 2  # the tiny preset's round_episodes
    # The kept round-0 controller plays with the M it was evolved in (kept beside it) and the V that M read,
    # not the refit ones.
    reader = read_metadata(run / "rounds" / "0" / "mdnrnn.safetensors")["sha256"]
    assert reader != read_metadata(run / "mdnrnn.safetensors")["sha256"]
    assert read_metadata(run / "rounds" / "0" / "vae.safetensors")["sha256"] == v0
    assert read_metadata(run / "vae.safetensors")["sha256"] != v0
    golem_cli(["dream", "evaluate", "--run", str(run), "--episodes", "1", "--no-random"], check=True, timeout=120)
    report = json.loads((run / "evaluation.json").read_text())
    assert (report["rnn_sha256"], report["vae_sha256"]) == (reader, v0)
