"""``golem run intervene`` for real: the model plays in a window on a virtual X screen, ``xdotool`` takes over.

Xvfb provides the screen; ``xdotool`` holds LEFT SHIFT (the hotkey) and ``a``
(MOVE_LEFT) through the XTEST extension, as a keyboard would, and pynput reads
them. One take-over must become one recovery episode of exactly L + k steps: the
L autonomous tics before it, labelled with the person's first corrective
buttons, then the k tics the person drove. A unit test of the cutting rule with
a scripted keyboard sits beside it.
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
from golem.profiles import BASIC
from golem.runtime.rollout import Tic
from golem.workflows.intervention import Intervener, InterventionRecorder
from tests.conftest import GOLEM, _clean_env
from tests.helpers import tiny_model_root
from tests.test_record_human import _wait_for_window, _xdotool, needs_x

pytestmark = pytest.mark.engine

L = 4
MOVE_LEFT = BASIC.index("MOVE_LEFT")


class ScriptedKeys:
    """A keyboard whose held keys are set by the test, tic by tic (pure-logic test of the cutting rule)."""

    def __init__(self) -> None:
        self.keys: set[str] = set()

    def held(self, name: str) -> bool:
        return name in self.keys

    def buttons(self, action_names, bindings) -> list[int]:
        return [int(any(k in self.keys for k in bindings.get(n, ()))) for n in action_names]


class ConstantAgent:
    def reset(self, game) -> None:
        pass

    def act(self, game, state) -> list[int]:
        return [0, 0, 0, 0, 0, 1, 0, 0]  # TURN_RIGHT, always


class FakeSensor:
    key = "frames"

    def __init__(self) -> None:
        self.t = 0

    def reset(self) -> None:
        self.t = 0

    def extract(self, state) -> np.ndarray:
        self.t += 1
        return np.full((1,), self.t, dtype=np.uint8)


@pytest.mark.parametrize("retroactive", ["first-action", "none"])
def test_cutting_rule_with_a_scripted_keyboard(retroactive: str) -> None:
    keys = ScriptedKeys()
    policy = Intervener(ConstantAgent(), keys, BASIC, {"MOVE_LEFT": ["a"]}, "shift")
    segments: list[tuple[dict, int, int]] = []
    recorder = InterventionRecorder(policy, [FakeSensor()], L, retroactive, lambda a, s, c: segments.append((a, s, c)))
    recorder.begin(None, 0)
    script = [set()] * 6 + [{"shift"}] * 2 + [{"shift", "a"}] * 3 + [set()] * 2 + [{"shift", "a"}] * 2
    for t, held in enumerate(script):
        keys.keys = held
        executed = policy.act(None, None)
        recorder.before_tic(None)
        recorder.after_tic(Tic(t=t, state=None, executed=executed, label=executed, reward=0.0))
    recorder.end(None)  # the second take-over is still held when the episode ends
    assert [(s, c) for _, s, c in segments] == (
        [(6, L), (13, 2)] if retroactive == "first-action" else [(6, 0), (13, 0)]
    )
    first, second = segments[0][0], segments[1][0]
    context = L if retroactive == "first-action" else 0
    assert len(first["actions"]) == context + 5 and first["frames"][:, 0].tolist() == list(range(7 - context, 12))
    human = first["actions"][context:]
    assert human[:2].sum() == 0 and human[2:, MOVE_LEFT].all()  # shift alone, then shift + a
    if context:  # the L tics before: the person's first corrective buttons, not the model's TURN_RIGHT
        assert (first["actions"][:context] == human[2]).all()
    # the second take-over's context is only the 2 autonomous tics since the first ended
    assert len(second["actions"]) == (2 + 2 if retroactive == "first-action" else 2)


@pytest.fixture(scope="module")
def model_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_model_root(tmp_path_factory.mktemp("intervene") / "root", 4, L)


@needs_x
def test_a_take_over_becomes_one_recovery_episode_of_l_plus_k_steps(xvfb: str, model_root: Path, tmp_path: Path):
    store = tmp_path / "interventions"
    proc = subprocess.Popen(
        [
            str(GOLEM),
            "--log-level",
            "warning",
            "run",
            "intervene",
            "--episodes",
            "1",
            "--max-steps",
            "210",
            "--scenario",
            "health_gathering",  # no early end: on basic a lucky shot ends the episode
            "--set",
            f"data.root={model_root}",
            "--store",
            str(store),
            "--json",
        ],
        cwd=tmp_path,
        env=_clean_env({"DISPLAY": xvfb}),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        _wait_for_window(xvfb, proc)
        time.sleep(1.5)  # well over L autonomous tics at 35 tics/s
        _xdotool(xvfb, "keydown", "Shift_L")
        time.sleep(0.3)
        _xdotool(xvfb, "keydown", "a")
        time.sleep(1.2)
        _xdotool(xvfb, "keyup", "a")
        time.sleep(0.2)
        _xdotool(xvfb, "keyup", "Shift_L")
        out, err = proc.communicate(timeout=120)
    finally:
        _xdotool(xvfb, "keyup", "a", "Shift_L")
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    assert proc.returncode == 0, f"{out}\n{err}"
    report = json.loads(out)
    assert len(report["episodes"]) == 1, report
    model = model_root / "models" / "basic" / "active.safetensors"
    assert report["model"] == str(model)
    with TrajectoryStore.open(store) as opened:
        info = opened.get(report["episodes"][0])
        actions = opened.read(info, "actions")
        arrays = {key: opened.read(info, key) for key in info.arrays}
    m = info.meta
    k = int(m.extra["human_tics"])
    assert m.source == "recovery" and m.scenario == "health_gathering" and "intervention" in m.tags
    assert m.extra["context_tics"] == L and info.length == L + k  # exactly L + k steps
    assert m.extra["model_sha256"] and m.extra["retroactive"] == "first-action" and m.extra["start_tic"] >= L
    assert 30 <= k <= 80  # about 1.7 s of holding SHIFT at 35 tics/s
    human = actions[L:]
    left = human[:, MOVE_LEFT].astype(bool)
    assert 25 <= int(left.sum()) <= k and not np.delete(human, MOVE_LEFT, axis=1).any()  # only what was pressed
    assert (actions[:L] == human[np.flatnonzero(left)[0]]).all()  # the retroactive correction
    # every installed sensor is recorded, not only the model's visual one
    assert {"frames", "depths", "thermals", "audios"} <= set(arrays) and all(
        len(v) == info.length for v in arrays.values()
    )
    assert read_metadata(model)["spec"]["sensors"] == ["visual"]
    assert (np.diff(arrays["tic"]) >= 1).all()  # the engine's clock, for the CfC's time spans


def test_no_display_is_one_line(golem_cli, model_root: Path) -> None:
    proc = golem_cli(["run", "intervene", "--set", f"data.root={model_root}"], env={"DISPLAY": ""})
    assert proc.returncode != 0
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "display" in lines[0], proc.stderr
