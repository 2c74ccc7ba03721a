"""The ViZDoom session factory against the real, headless engine."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from golem.builtin.visual import VisualSensor
from golem.errors import GolemError
from golem.profiles import PROFILES
from golem.runtime.engine_guard import engine_children, is_alive
from golem.runtime.session import Session
from golem.settings import GolemSettings
from golem.wad import build_wad


def wait_gone(pids: set[int], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not any(is_alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


def run_child(code: str, timeout: float = 30.0) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )


def test_unknown_scenario_lists_known_ones():
    with pytest.raises(GolemError) as exc:
        Session(GolemSettings(), scenario="no_such_scenario")
    message = str(exc.value)
    assert "\n" not in message and "basic" in message and "deadly_corridor" in message


def test_missing_files_are_one_line(tmp_path):
    for path in (tmp_path / "x.cfg", tmp_path / "x.wad"):
        with pytest.raises(GolemError, match="not found") as exc:
            Session(GolemSettings(), scenario=str(path))
        assert "\n" not in str(exc.value)


def test_empty_map_marker_fails_fast(tmp_path):
    wad = tmp_path / "empty.wad"
    wad.write_bytes(build_wad([("MAP01", b"")]))
    started = time.monotonic()
    with pytest.raises(GolemError, match="empty") as exc:
        Session(GolemSettings(), scenario=str(wad), doom_map="MAP01")
    assert "\n" not in str(exc.value)
    assert time.monotonic() - started < 1.0


@pytest.mark.engine
def test_start_observe_act_close():
    settings = GolemSettings()
    with Session(settings, [VisualSensor(settings)], seed=1) as session:
        pids = session.engine_pids
        assert len(pids) == 1 and all(is_alive(p) for p in pids)
        assert session.action_names == PROFILES["basic"]
        obs = session.observe()
        assert obs["frames"].shape == (3, 64, 64) and obs["frames"].dtype == np.uint8
        reward = 0.0
        for _ in range(5):
            reward += session.act([0] * 6 + [1, 0], tics=2)
        assert reward != 0.0 and session.total_reward == pytest.approx(reward)
        assert not session.episode_finished and not session.is_player_dead
        session.new_episode(seed=2)
        assert session.total_reward == 0.0
        with pytest.raises(ValueError):
            session.act([1, 0])
    assert wait_gone(pids, 2.0)
    session.close()  # twice is fine


@pytest.mark.engine
def test_exception_in_with_block_ends_engine():
    settings = GolemSettings()
    with pytest.raises(RuntimeError):
        with Session(settings, []) as session:
            pids = session.engine_pids
            raise RuntimeError("boom")
    assert pids and wait_gone(pids, 2.0)


@pytest.mark.engine
def test_wad_and_map():
    import vizdoom

    with Session(GolemSettings(), [], scenario=f"{vizdoom.scenarios_path}/basic.wad", doom_map="map01") as session:
        assert session.scenario.doom_map == "MAP01"
        session.act([1, 0, 0, 0, 0, 0, 0, 0])


@pytest.mark.engine
def test_engine_dies_with_sigkilled_owner():
    child = run_child(
        """
        import time
        from golem.runtime.session import Session
        from golem.settings import GolemSettings
        s = Session(GolemSettings())
        print("PIDS", *s.engine_pids, flush=True)
        time.sleep(60)
        """
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    while line and not line.startswith("PIDS"):
        line = child.stdout.readline()
    pids = {int(p) for p in line.split()[1:]}
    assert pids and all(is_alive(p) for p in pids)
    child.send_signal(signal.SIGKILL)
    child.wait(10)
    assert wait_gone(pids, 5.0), f"orphan engine left: {pids}"


@pytest.mark.engine
def test_engine_dies_with_an_owner_killed_the_moment_the_engine_exists():
    """The owner is SIGKILLed while ``init()`` runs, as soon as its engine process appears: before the
    session could have polled for its pid. The engine must still go with it."""
    child = run_child(
        """
        from golem.runtime.session import Session
        from golem.settings import GolemSettings
        Session(GolemSettings())
        """
    )
    deadline = time.monotonic() + 30
    engines: set[int] = set()
    while not engines and child.poll() is None and time.monotonic() < deadline:
        engines = engine_children(child.pid)
    child.send_signal(signal.SIGKILL)
    child.wait(10)
    assert engines, "the engine never appeared"
    assert wait_gone(engines, 5.0), f"orphan engine left: {engines}"


@pytest.mark.engine
def test_start_timeout_is_one_line_and_leaves_no_engine():
    # A 1 ms start budget always times out; the stuck engine must not outlive the process.
    child = run_child(
        """
        from golem.errors import GolemError
        from golem.runtime.session import Session, _STUCK_GUARDS
        from golem.settings import GolemSettings
        settings = GolemSettings()
        settings.game.start_timeout = 0.001
        try:
            Session(settings)
        except GolemError as exc:
            print(*[p for g in _STUCK_GUARDS for p in g.pids], flush=True)
            print(exc, flush=True)
        """
    )
    out, _ = child.communicate(timeout=30)
    pid_line, message = out.splitlines()[-2:]
    assert "did not start within 0.001s" in message
    pids = {int(p) for p in pid_line.split()}
    assert wait_gone(pids, 5.0), f"engine left after timeout: {pids}"


def test_unknown_map_is_one_line(tmp_path):
    import vizdoom

    with pytest.raises(GolemError, match="MAP01") as exc:
        Session(GolemSettings(), scenario=f"{vizdoom.scenarios_path}/basic.wad", doom_map="MAP77")
    assert "\n" not in str(exc.value)
    with pytest.raises(GolemError, match="E1M1"):
        Session(GolemSettings(), scenario="freedoom1", doom_map="MAP01")


def test_corrupt_wad_is_one_line(tmp_path):
    wad = tmp_path / "bad.wad"
    wad.write_bytes(b"PWAD\x05\0\0\0\xff\xff\0\0")
    with pytest.raises(GolemError, match="truncated or corrupt"):
        Session(GolemSettings(), scenario=str(wad))


@pytest.mark.engine
def test_spectator_mode_advances():
    with Session(GolemSettings(), spectator=True) as session:
        session.advance(2)
        assert session.last_action == [0] * 8


def _start_session(results) -> None:  # runs in a spawned process
    from golem.runtime.session import Session
    from golem.settings import load_settings

    try:
        with Session(load_settings(environ={}).settings, scenario="basic"):
            results.put("ok")
    except Exception as exc:  # reported to the parent
        results.put(repr(exc))


@pytest.mark.engine
def test_two_engines_starting_together_in_a_new_folder(tmp_path, monkeypatch):
    """Parallel workers (record/evaluate --workers 2) start engines at once in the user's folder;
    the engine's own check-then-mkdir of ./_vizdoom/ must not kill one of them ("File exists")."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    for round_ in range(3):
        folder = tmp_path / str(round_)
        folder.mkdir()
        monkeypatch.chdir(folder)  # a fresh folder each round: no ./_vizdoom/ yet
        results = ctx.Queue()
        procs = [ctx.Process(target=_start_session, args=(results,)) for _ in range(2)]
        for p in procs:
            p.start()
        outcomes = [results.get(timeout=120) for _ in procs]
        for p in procs:
            p.join(timeout=30)
        assert outcomes == ["ok", "ok"], outcomes


def test_scenarios_without_a_time_out_get_a_default_step_limit():
    from golem.scenarios import SCENARIO_SPECS, step_limit

    assert step_limit("take_cover", None) == 2100 == SCENARIO_SPECS["take_cover"].max_steps
    assert step_limit("take_cover", 50) == 50  # a given limit wins
    assert step_limit("/somewhere/take_cover.cfg", None) == 2100
    assert step_limit("basic", None) is None  # basic has its own time-out


def test_training_precision_resolves_to_bf16_only_where_it_is_native():
    import torch

    from golem.errors import GolemError
    from golem.learning.device import autocast_dtype, cpu_has_native_bf16

    assert cpu_has_native_bf16("flags\t\t: fpu sse avx512f amx_bf16 amx_tile\n")
    assert cpu_has_native_bf16("flags\t\t: fpu avx512_bf16\n")
    assert not cpu_has_native_bf16("flags\t\t: fpu sse avx2 avx512f\n")  # AVX-512 alone emulates bf16
    cpu = torch.device("cpu")
    assert autocast_dtype("fp32", cpu) is None
    assert autocast_dtype("bf16", cpu) is torch.bfloat16
    assert autocast_dtype("auto", cpu) == (torch.bfloat16 if cpu_has_native_bf16() else None)
    with pytest.raises(GolemError, match="training.precision=bf16"):
        autocast_dtype("bf16", torch.device("mps"))
