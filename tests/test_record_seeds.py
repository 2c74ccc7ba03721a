"""Which seeds recordings play and what an interrupted one reports: real engine, real store, the real CLI."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from golem.data.store import TrajectoryStore
from golem.errors import GolemError
from golem.plugins import load_plugins
from golem.settings import GolemSettings
from golem.workflows.recording import Episode, RecordPlan, continuing_seeds, record
from tests.conftest import GOLEM, _clean_env, sigint_default
from tests.helpers import json_out

pytestmark = pytest.mark.engine


def _store(root: Path) -> Path:
    return root / "golem-data" / "stores" / "demos"


def _seeds(path: Path) -> list[int]:
    with TrajectoryStore.open(path) as store:
        return [int(i.meta.seed) for i in store.episodes()]  # type: ignore[arg-type]


def _recorder(cwd: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(GOLEM), "--log-level", "warning", "run", "record", "--expert", "basic", *args],
        cwd=cwd,
        env=_clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=sigint_default,
    )


@pytest.mark.slow
def test_two_recorders_on_one_store_never_record_the_same_seed(golem_cli, tmp_path: Path) -> None:
    procs = [_recorder(tmp_path, "--episodes", "8"), _recorder(tmp_path, "--episodes", "8", "--workers", "2")]
    try:
        outs = [proc.communicate(timeout=400) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
    for proc, (out, err) in zip(procs, outs):
        assert proc.returncode == 0, err
        assert "recorded 8 episode(s)" in out
    seeds = _seeds(_store(tmp_path))
    assert len(seeds) == 16
    assert sorted(seeds) == list(range(16)), seeds  # each recorder its own eight, none twice
    assert json_out(golem_cli(["data", "verify", "--json"], check=True))["ok"] is True


def test_a_given_seed_is_played_as_asked_and_later_recordings_follow(golem_cli, tmp_path: Path) -> None:
    for root in (tmp_path / "a", tmp_path / "b"):  # a fresh store: the same seeds every time
        root.mkdir()
        golem_cli(["run", "record", "--expert", "basic", "--episodes", "2", "--seed", "5"], cwd=root, check=True)
        assert _seeds(_store(root)) == [5, 6]
    golem_cli(["run", "record", "--expert", "basic", "--episodes", "1"], cwd=tmp_path / "a", check=True)
    golem_cli(
        ["run", "record", "--expert", "basic", "--episodes", "1", "--seed", "5"], cwd=tmp_path / "a", check=True
    )  # asked for again: played again
    assert _seeds(_store(tmp_path / "a")) == [5, 6, 7, 5]


def test_continuing_seeds_are_reserved_before_any_is_played(tmp_path: Path) -> None:
    with TrajectoryStore.create(tmp_path / "demos") as store:
        assert continuing_seeds(store, "basic", 0, 3) == [0, 1, 2]
        assert continuing_seeds(store, "basic", 0, 3) == [3, 4, 5]  # nothing stored yet, and still not the same
    with TrajectoryStore.open(tmp_path / "demos") as store, pytest.raises(GolemError, match="read-only"):
        continuing_seeds(store, "basic", 0, 1)


def test_ctrl_c_while_an_episode_is_written_counts_it(tmp_path: Path) -> None:
    """A Ctrl-C that lands while an episode is written and counted is taken once both are done."""
    settings = GolemSettings.model_validate({"game": {"scenario": "basic"}})
    counted: list[int] = []

    def on_episode(eid: int, episode: Episode) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # the user's Ctrl-C, at the worst moment
        counted.append(eid)

    with TrajectoryStore.create(tmp_path / "demos") as store:
        with pytest.raises(KeyboardInterrupt):
            record(
                settings,
                load_plugins().registry,
                RecordPlan(demonstrator="expert", expert="basic", episodes=3),
                store,
                "basic",
                on_episode=on_episode,
            )
        stored = [i.id for i in store.episodes()]
    assert counted == stored == [0]


@pytest.mark.slow
def test_ctrl_c_reports_as_many_episodes_as_the_store_kept(golem_cli, tmp_path: Path) -> None:
    proc = _recorder(tmp_path, "--episodes", "200", "--workers", "2")
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        try:
            with TrajectoryStore.open(_store(tmp_path)) as store:
                if len(store) >= 3:
                    break
        except GolemError:  # the recorder is still creating the store
            pass
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    reported = re.search(r"interrupted: (\d+) completed episode\(s\) kept", err)
    assert reported, err
    assert int(reported.group(1)) == len(_seeds(_store(tmp_path)))
