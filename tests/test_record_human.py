"""`golem run record --human` with a real game window on a virtual X screen, played with real key presses.

Xvfb provides the screen, ``xdotool`` finds the ViZDoom window, focuses it and
presses keys through the XTEST extension (as a keyboard would); the recorded
``actions`` must show exactly the buttons those keys are bound to in ViZDoom's
default bindings (a fresh ``_vizdoom.ini`` is written in the temp working dir).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from golem.data.store import TrajectoryStore
from tests.conftest import GOLEM, _clean_env

pytestmark = pytest.mark.engine

XVFB = shutil.which("Xvfb")
XDOTOOL = shutil.which("xdotool")
needs_x = pytest.mark.skipif(
    XVFB is None or XDOTOOL is None, reason="needs Xvfb and xdotool on PATH (apt-get install xvfb xdotool)"
)

#: ViZDoom's default bindings (``[Doom.Bindings]`` of a fresh ``_vizdoom.ini``): key → button.
TURN_LEFT_KEY = "Left"  # leftarrow=+left
ATTACK_KEY = "Control_L"  # ctrl=+attack
MAX_STEPS = 150  # spectator mode runs in real time: 150 tics ≈ 4.3 s


def _store(cwd: Path) -> Path:
    return cwd / "golem-data" / "stores" / "demos"


def _xdotool(display: str, *args: str) -> subprocess.CompletedProcess[str]:
    assert XDOTOOL is not None
    return subprocess.run(
        [XDOTOOL, *args], env={**os.environ, "DISPLAY": display}, capture_output=True, text=True, timeout=10
    )


def _wait_for_window(display: str, proc: subprocess.Popen[str], timeout: float = 120) -> str:
    """The id of the visible ViZDoom window (title ``VIZDOOM 1.3.2 (ZDOOM …)``), once it is mapped."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"golem exited ({proc.returncode}) before its window appeared:\n{out}\n{err}")
        found = _xdotool(display, "search", "--onlyvisible", "--name", "vizdoom").stdout.split()
        if found:
            return found[0]
        time.sleep(0.1)
    raise AssertionError(f"no ViZDoom window on {display} within {timeout} s")


@needs_x
def test_human_recording_captures_real_key_presses(xvfb: str, tmp_path: Path):
    proc = subprocess.Popen(
        [
            str(GOLEM),
            "--log-level",
            "warning",
            "run",
            "record",
            "--human",
            "--episodes",
            "1",
            "--scenario",
            "basic",
            "--max-steps",
            str(MAX_STEPS),
        ],
        cwd=tmp_path,
        env=_clean_env({"DISPLAY": xvfb}),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        window = _wait_for_window(xvfb, proc)
        # No window manager on the virtual screen: give the window the X input focus directly.
        focus = _xdotool(xvfb, "windowfocus", "--sync", window)
        assert focus.returncode == 0, focus.stderr
        # Until the episode ends: hold TURN_LEFT, press ATTACK inside it, release both, pause.
        # Repeated presses (not one long hold) also cover the moments before the episode starts.
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            _xdotool(xvfb, "keydown", TURN_LEFT_KEY)
            time.sleep(0.4)
            _xdotool(xvfb, "keydown", ATTACK_KEY)
            time.sleep(0.2)
            _xdotool(xvfb, "keyup", ATTACK_KEY)
            _xdotool(xvfb, "keyup", TURN_LEFT_KEY)
            time.sleep(0.2)
        out, err = proc.communicate(timeout=60)
    finally:
        _xdotool(xvfb, "keyup", ATTACK_KEY, TURN_LEFT_KEY)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)

    assert proc.returncode == 0, f"{out}\n{err}"
    assert "recorded 1 episode(s)" in out
    with TrajectoryStore.open(_store(tmp_path)) as store:
        infos = store.episodes()
        assert len(infos) == 1
        info = infos[0]
        assert info.meta.source == "human"
        assert info.meta.scenario == "basic"
        actions = store.read(info, "actions")
        frames = store.read(info, "frames")
    steps = info.length
    assert 0 < steps <= MAX_STEPS  # the cap, or earlier if the monster died
    assert actions.shape == (steps, 8) and set(np.unique(actions)) <= {0, 1}
    assert frames.shape == (steps, 3, 64, 64)
    names = info.meta.action_names
    counts = dict(zip(names, actions.sum(axis=0).tolist()))
    assert counts["TURN_LEFT"] > 0, counts
    assert counts["ATTACK"] > 0, counts
    assert counts["ATTACK"] < steps, counts  # releases are recorded too
    for untouched in ("MOVE_FORWARD", "MOVE_BACKWARD", "MOVE_LEFT", "MOVE_RIGHT", "TURN_RIGHT", "USE"):
        assert counts[untouched] == 0, counts
    # ctrl is only ever down while the left arrow is: so is ATTACK inside TURN_LEFT, tic by tic.
    turn, attack = actions[:, names.index("TURN_LEFT")], actions[:, names.index("ATTACK")]
    assert np.all(attack <= turn), np.flatnonzero(attack > turn)
    # The view turned: the frames change over the episode.
    assert len(np.unique(frames.reshape(steps, -1), axis=0)) > 1


def _unused_display() -> str:
    """A display number no X server listens on."""
    for n in range(990, 1100):
        if not Path(f"/tmp/.X11-unix/X{n}").exists() and not Path(f"/tmp/.X{n}-lock").exists():
            return f":{n}"
    pytest.skip("no unused display number found")


@pytest.mark.parametrize("display", [None, "unreachable"], ids=["unset", "unreachable"])
def test_human_without_display_is_one_error_line(tmp_path: Path, display: str | None):
    env = _clean_env()
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"):
        env.pop(name, None)
    if display is not None:
        env["DISPLAY"] = _unused_display()
    proc = subprocess.run(
        [str(GOLEM), "run", "record", "--human", "--episodes", "1", "--scenario", "basic"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, f"{proc.returncode}\n{proc.stderr}"  # a user error, not a crash (-11)
    errors = proc.stderr.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("error:"), proc.stderr
    assert not (tmp_path / "golem-data").exists()  # checked before anything is created
    assert "display" in errors[0].lower()
    assert "Traceback" not in proc.stderr
    if display is None:
        assert "DISPLAY is not set" in errors[0]
    else:
        assert env["DISPLAY"] in errors[0]
