"""`golem run record` and `golem run inspect` on the real engine, through the console script."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from golem.data.store import TrajectoryStore
from golem.errors import GolemError
from tests.conftest import GOLEM, _clean_env, sigint_default
from tests.helpers import json_out

pytestmark = pytest.mark.engine


def _store(tmp_path: Path) -> Path:
    return tmp_path / "golem-data" / "stores" / "demos"


def test_record_expert_then_inspect_and_verify(golem_cli, tmp_path: Path):
    rec = golem_cli(["run", "record", "--expert", "basic", "--episodes", "4", "--workers", "2"], check=True)
    assert "recorded 4 episode(s)" in rec.stdout
    with TrajectoryStore.open(_store(tmp_path)) as store:
        infos = store.episodes()
        assert len(infos) == 4
        assert {i.meta.source for i in infos} == {"expert"}
        assert {i.meta.scenario for i in infos} == {"basic"}
        assert sorted(i.meta.seed for i in infos) == [0, 1, 2, 3]
        assert infos[0].meta.action_names[6] == "ATTACK"
    report = json_out(golem_cli(["run", "inspect", "--json"], check=True))
    frames = report["modalities"]["frames"]
    assert frames["shape"] == [3, 64, 64] and frames["dtype"] == "uint8"
    assert 0 <= frames["min"] < frames["max"] <= 255
    assert report["modalities"]["actions"]["shape"] == [8]
    assert report["actions"]["ATTACK"]["count"] >= 4  # the expert shoots every episode
    assert report["returns"]["mean"] > 60  # basic expert: ~90; a random policy scores below 0
    assert len(report["episodes"]) == 4
    verify = golem_cli(["data", "verify"], check=True)
    assert verify.returncode == 0


def test_record_all_four_sensors(golem_cli, tmp_path: Path):
    golem_cli(
        [
            "run",
            "record",
            "--expert",
            "basic",
            "--episodes",
            "1",
            "--plugin",
            "depth",
            "--plugin",
            "thermal",
            "--plugin",
            "audio",
        ],
        check=True,
    )
    report = json_out(golem_cli(["run", "inspect", "--json"], check=True))
    mods = report["modalities"]
    assert mods["depths"]["shape"] == [1, 64, 64]
    assert mods["thermals"]["shape"] == [1, 64, 64] and mods["thermals"]["max"] == 1
    assert mods["audios"]["shape"][0] == 2 and mods["audios"]["dtype"] == "float16"
    with TrajectoryStore.open(_store(tmp_path)) as store:
        assert store.episodes()[0].meta.sensors == ["visual", "depth", "thermal", "audio"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (
            ["--expert", "nobody"],
            "unknown expert 'nobody'; known: basic, deadly_corridor, deathmatch, defend_the_center",
        ),
        (["--expert", "basic", "--human"], "choose exactly one demonstrator"),
        ([], "choose exactly one demonstrator"),
        (["--expert", "basic", "--scenario", "take_cover"], "expert 'basic' plays basic, not 'take_cover'"),
        (["--expert", "basic", "--plugin", "sonar"], "unknown component 'sonar'"),
        (["--expert", "basic", "--set", "brain.sensors=['sonar']"], "unknown sensor 'sonar'"),
    ],
)
def test_record_bad_input_is_one_line(golem_cli, tmp_path: Path, args, needle):
    proc = golem_cli(["run", "record", "--episodes", "1", *args])
    assert proc.returncode == 2, proc.stderr
    assert needle in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not _store(tmp_path).exists() or len(TrajectoryStore.open(_store(tmp_path))) == 0


def test_unknown_scenario_for_human_is_one_line(golem_cli, tmp_path: Path):
    proc = golem_cli(["run", "record", "--human", "--scenario", "no_such_scenario", "--episodes", "1"])
    assert proc.returncode == 2
    assert "no_such_scenario" in proc.stderr and "basic" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not _store(tmp_path).exists()  # nothing created for a command that cannot run


def _record_in_background(tmp_path: Path, episodes: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            str(GOLEM),
            "--log-level",
            "warning",
            "run",
            "record",
            "--expert",
            "health_gathering",
            "--episodes",
            str(episodes),
            "--max-steps",
            "300",
            "--frame-skip",
            "1",
        ],
        cwd=tmp_path,
        env=_clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=sigint_default,
    )


def _wait_for_episodes(path: Path, n: int, proc: subprocess.Popen[str], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        if path.exists():
            try:
                with TrajectoryStore.open(path) as store:
                    if len(store) >= n:
                        return
            except GolemError:  # the recorder is still creating the store
                pass
        time.sleep(0.2)
    raise AssertionError(f"fewer than {n} episodes after {timeout} s")


def test_recorder_killed_with_sigkill_keeps_every_completed_episode(golem_cli, tmp_path: Path):
    proc = _record_in_background(tmp_path, episodes=200)
    _wait_for_episodes(_store(tmp_path), 2, proc)
    time.sleep(0.15)  # somewhere inside the next episode
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    verify = golem_cli(["data", "verify", "--json"], check=True)
    assert json_out(verify)["ok"] is True
    with TrajectoryStore.open(_store(tmp_path)) as store:
        infos = store.episodes()
        assert len(infos) >= 2
        for info in infos:  # every visible episode is complete
            assert info.length == 300
            assert store.read(info, "frames").shape == (300, 3, 64, 64)


def test_ctrl_c_keeps_completed_episodes_and_exits_130(golem_cli, tmp_path: Path):
    proc = _record_in_background(tmp_path, episodes=200)
    _wait_for_episodes(_store(tmp_path), 1, proc)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "completed episode(s) kept" in err
    assert json_out(golem_cli(["data", "verify", "--json"], check=True))["ok"] is True


def test_take_cover_without_max_steps_stops_at_its_default_limit(golem_cli, tmp_path: Path):
    # take_cover has no time-out of its own and its expert does not die: 2,100 tics, as World Models ran it,
    # in decisions of the scenario's 4 tics.
    golem_cli(["run", "record", "--expert", "take_cover", "--episodes", "1"], check=True)
    with TrajectoryStore.open(_store(tmp_path)) as store:
        (info,) = store.episodes()
        assert info.length == 2100 // 4 and info.meta.frame_skip == 4
        tics = store.read(info, "tic")
        assert (tics[1:] - tics[:-1] == 4).all() and 2100 - 4 <= int(tics[-1]) < 2100
        assert info.meta.truncated is True and info.meta.terminated is False


def test_stored_episodes_say_how_they_ended(golem_cli, tmp_path: Path):
    golem_cli(["run", "record", "--expert", "basic", "--episodes", "2"], check=True)
    with TrajectoryStore.open(_store(tmp_path)) as store:
        for info in store.episodes():  # the basic expert kills the monster: the episode ends by itself
            assert info.meta.terminated is True and info.meta.truncated is False


def _children(pid: int) -> set[int]:
    """Pids whose parent is ``pid`` (from /proc)."""
    found = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[1]) == pid and fields[0] not in ("Z", "X"):
                found.add(int(name))
    return found


def _command(pid: int) -> str:
    """The process's command name, or "" when it has exited."""
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return False
    return fields[0] not in ("Z", "X")


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_workers_and_their_engines_die_with_a_killed_recorder(tmp_path: Path, how):
    proc = subprocess.Popen(
        [str(GOLEM), "run", "record", "--expert", "basic", "--episodes", "400", "--workers", "2"],
        cwd=tmp_path,
        env=_clean_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_for_episodes(_store(tmp_path), 2, proc)
        workers = _children(proc.pid)
        engines = {e for w in workers for e in _children(w) if _command(e) == "vizdoom"}
        assert len(engines) == 2, (workers, engines)
        proc.send_signal(how)  # the parent alone, as `kill` does
        proc.wait(timeout=30)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(_alive(p) for p in workers | engines):
            time.sleep(0.2)
        left = sorted(p for p in workers | engines if _alive(p))
        assert not left, f"left running after {how.name} of the recorder: {left}"
    finally:
        if proc.poll() is None:
            proc.kill()


def test_recording_again_continues_after_the_stored_seeds(golem_cli, tmp_path: Path):
    golem_cli(["run", "record", "--expert", "basic", "--episodes", "2"], check=True)
    golem_cli(["run", "record", "--expert", "basic", "--episodes", "2"], check=True)
    golem_cli(["run", "record", "--expert", "basic", "--episodes", "1", "--seed", "0"], check=True)  # asked for
    with TrajectoryStore.open(_store(tmp_path)) as store:
        assert [i.meta.seed for i in store.episodes()] == [0, 1, 2, 3, 0]
        assert not np.array_equal(store.read(1, "frames"), store.read(3, "frames"))


def test_recording_without_any_sensor_is_refused(golem_cli, tmp_path: Path):
    proc = golem_cli(["run", "record", "--expert", "basic", "--episodes", "1", "--plugin", "no:visual"])
    assert proc.returncode != 0 and "no sensor is enabled" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_progress_off_a_terminal_is_plain_lines(golem_cli, tmp_path: Path):
    proc = golem_cli(["run", "record", "--expert", "basic", "--episodes", "3"], check=True)  # stderr is a pipe
    lines = [line for line in proc.stderr.splitlines() if line.startswith("record: ")]
    assert lines and lines[-1].startswith("record: 3/3, what basic on basic"), proc.stderr
    assert "━" not in proc.stderr  # no bar drawn into a log


def test_parallel_workers_write_episodes_in_seed_order(golem_cli, tmp_path: Path):
    golem_cli(["run", "record", "--expert", "basic", "--episodes", "12", "--workers", "2"], check=True)
    with TrajectoryStore.open(_store(tmp_path)) as store:
        assert [i.meta.seed for i in store.episodes()] == list(range(12))  # ids follow seeds, whoever finished first
