"""The engine's clock is the ODE's time: tics stored per step, fed as time spans in training and live play.

Real engine, real store, real CfC model; a spy wraps the model only to read the
time spans the agent hands it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from golem.data.dataset import SequenceDataset
from golem.data.store import TrajectoryStore
from golem.errors import GolemError
from golem.learning.modelspec import ModelSpec
from golem.plugins import load_plugins
from golem.runtime.agent import Agent
from golem.runtime.rollout import run_episode
from golem.runtime.session import Session
from golem.settings import GolemSettings
from golem.workflows.recording import RecordPlan, build_sensors, record

pytestmark = pytest.mark.engine

REGISTRY = load_plugins().registry


def _settings(**game: object) -> GolemSettings:
    return GolemSettings.model_validate(
        {"game": {"scenario": "basic", **game}, "training": {"sequence_length": 6, "mirror": False}}
    )


def _record(path: Path, settings: GolemSettings, episodes: int = 2) -> TrajectoryStore:
    store = TrajectoryStore.create(path)
    record(settings, REGISTRY, RecordPlan(demonstrator="expert", expert="basic", episodes=episodes), store, "basic")
    return store


def test_recording_at_frame_skip_stores_the_engine_tic_and_batches_carry_the_spans(tmp_path: Path) -> None:
    settings = _settings(frame_skip=3)
    with _record(tmp_path / "skip3", settings) as store:
        infos = store.episodes()
        for info in infos:
            tics = store.read(info, "tic")
            assert tics.dtype == np.int32 and tics.shape == (info.length,)
            assert (np.diff(tics) == 3).all(), tics  # one decision every 3 tics
        spec = ModelSpec.from_settings(settings, REGISTRY)
        ds = SequenceDataset.from_store(store, spec.sensors, spec.action_names, settings.training)
        batch = ds.load_batch(np.arange(len(ds)))
        assert batch.timespans is not None and batch.timespans.shape == batch.mask.shape
        spans = batch.timespans.numpy()
        rows = ds.pointers
        for r, row in enumerate(rows):
            n = int(row["length"])
            want = np.full(n, 3.0, dtype=np.float32)
            if row["is_first"]:
                want[0] = 1.0  # nothing elapsed before an episode's first step
            np.testing.assert_array_equal(spans[r, :n], want)
            assert (spans[r, n:] == 1.0).all()  # padding


def test_frame_skip_one_and_stores_without_tics_give_unit_spans(tmp_path: Path) -> None:
    settings = _settings()
    with _record(tmp_path / "skip1", settings, episodes=1) as store:
        info = store.episodes()[0]
        assert (np.diff(store.read(info, "tic")) == 1).all()
        arrays = store.read_episode(info)
        spec = ModelSpec.from_settings(settings, REGISTRY)
        ds = SequenceDataset.from_store(store, spec.sensors, spec.action_names, settings.training)
        assert ds.load_batch(np.arange(len(ds))).timespans is None  # the unit-time fast path
    with TrajectoryStore.create(tmp_path / "old") as old:  # as recorded before the store kept the clock
        del arrays["tic"]
        old.write_episode(info.meta, arrays)
        ds = SequenceDataset.from_store(old, spec.sensors, spec.action_names, settings.training)
        assert "tic" not in old.episodes()[0].arrays
        assert ds.load_batch(np.arange(len(ds))).timespans is None


def test_a_clock_that_does_not_advance_is_refused(tmp_path: Path) -> None:
    settings = _settings()
    with _record(tmp_path / "s", settings, episodes=1) as store:
        info = store.episodes()[0]
        arrays = store.read_episode(info)
    arrays["tic"] = np.zeros_like(arrays["tic"])
    with TrajectoryStore.create(tmp_path / "bad") as bad, pytest.raises(GolemError, match="'tic' must increase"):
        bad.write_episode(info.meta, arrays)


class SpanSpy(nn.Module):
    """A real model; remembers the time spans each decision was given (``None``: one tic)."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model
        self.seen: list[float | None] = []

    def initial_state(self, batch: int, device: torch.device) -> torch.Tensor:
        return self.model.initial_state(batch, device)

    def step(self, inputs, hx, timespans=None):  # noqa: ANN001, ANN201 — the model's own signature
        self.seen.append(None if timespans is None else float(timespans.reshape(-1)[0]))
        return self.model.step(inputs, hx, timespans)


@pytest.mark.parametrize(
    ("frame_skip", "timespans", "expected"),
    [(1, "engine", None), (2, "engine", 2.0), (4, "engine", 4.0), (4, "unit", None)],
)
def test_the_agent_integrates_the_tics_between_its_decisions(
    frame_skip: int, timespans: str, expected: float | None
) -> None:
    settings = _settings(frame_skip=frame_skip, timespans=timespans)
    spec = ModelSpec.from_settings(settings, REGISTRY)
    torch.manual_seed(0)
    spy = SpanSpy(REGISTRY.get("models", "cfc").obj(spec))
    agent = Agent(spy, spec)
    with Session(settings, build_sensors(settings, REGISTRY), scenario="basic") as session:
        agent.check_session(session)
        result = run_episode(session, agent, 10_000, max_steps=12 * frame_skip)
    decisions = len(spy.seen)
    assert decisions >= 2 and result.tics == decisions * frame_skip
    assert spy.seen[0] is None  # the first decision of an episode: nothing elapsed before it
    assert spy.seen[1:] == [expected] * (decisions - 1)


def test_time_spans_change_what_a_cfc_model_decides() -> None:
    """The same observations two tics apart are not the same as one tic apart for a CfC model."""
    settings = _settings()
    spec = ModelSpec.from_settings(settings, REGISTRY)
    torch.manual_seed(0)
    model = REGISTRY.get("models", "cfc").obj(spec).eval()
    frames = spec.sensor("visual").to_network(torch.randint(0, 256, (1, 4, 3, 64, 64), dtype=torch.uint8))
    with torch.no_grad():
        one, _ = model({"visual": frames})
        two, _ = model({"visual": frames}, None, torch.full((1, 4), 2.0))
        ones, _ = model({"visual": frames}, None, torch.ones(1, 4))
    torch.testing.assert_close(ones, one, rtol=1e-5, atol=1e-5)
    assert (two[:, 1:] - one[:, 1:]).abs().max() > 1e-4


def test_evaluate_at_a_frame_skip_from_the_cli(golem_cli, tmp_path: Path) -> None:
    """A user records and trains at frame skip 2, then judges the model alone at skip 2 and at 4, and with
    no flag at the 2 its episodes were recorded at."""
    root = ["--set", f"data.root={tmp_path / 'data'}"]
    golem_cli(["run", "record", "--expert", "basic", "-n", "3", "--frame-skip", "2", *root], check=True)
    golem_cli(
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
            "training.batch_size=2",
            *root,
        ],
        check=True,
    )
    with TrajectoryStore.open(tmp_path / "data" / "stores" / "demos") as store:
        assert {info.meta.frame_skip for info in store.episodes()} == {2}
    for skip in (2, 4, None):  # None: the model decides as often as its demonstrations did
        flag = [] if skip is None else ["--frame-skip", str(skip)]
        proc = golem_cli(
            ["run", "evaluate", "-n", "1", *flag, "--no-baselines", "--max-steps", "40", "--json", *root], check=True
        )
        board = json.loads(proc.stdout)
        assert set(board["policies"]) == {"model"}
        assert board["frame_skip"] == (skip or 2)
        tics = board["policies"]["model"]["tics"]["mean"]
        assert 0 < tics <= 40 and tics % (skip or 2) == 0  # k tics per decision
    bad = golem_cli(["run", "evaluate", "-n", "1", "--frame-skip", "0", *root])
    assert bad.returncode != 0 and "Traceback" not in bad.stderr and "frame-skip" in bad.stderr
    bad = golem_cli(["run", "evaluate", "-n", "1", "--set", "game.timespans=sometimes", *root])
    assert bad.returncode != 0 and "Traceback" not in bad.stderr and "game.timespans" in bad.stderr


def test_recording_takes_the_scenarios_frame_skip_unless_one_is_given(golem_cli, tmp_path: Path) -> None:
    """health_gathering's spec decides every 4 tics; --frame-skip (or --set game.frame_skip) wins."""
    from golem.scenarios import scenario_spec

    assert scenario_spec("health_gathering").frame_skip == 4 and scenario_spec("basic").frame_skip == 1
    for store, flag, want in (
        ("spec", [], 4),
        ("given", ["--frame-skip", "1"], 1),
        ("set", ["--set", "game.frame_skip=2"], 2),
    ):
        golem_cli(
            [
                "run",
                "record",
                "--expert",
                "health_gathering",
                "-n",
                "1",
                "--max-steps",
                "40",
                *flag,
                "--set",
                f"data.root={tmp_path}",
                "--set",
                f"data.store={store}",
            ],
            check=True,
        )
        with TrajectoryStore.open(tmp_path / "stores" / store) as opened:
            (info,) = opened.episodes()
            assert info.meta.frame_skip == want
            assert (np.diff(opened.read(info, "tic")) == want).all()
    for bad, word in (
        (["--frame-skip", "0"], "frame-skip"),
        (["--set", "training.precision=fp8"], "training.precision"),
    ):
        proc = golem_cli(
            [
                "run",
                "record",
                "--expert",
                "health_gathering",
                "-n",
                "1",
                *bad,
                "--set",
                f"data.root={tmp_path}",
                "--set",
                "data.store=bad",
            ]
        )
        assert proc.returncode != 0 and "Traceback" not in proc.stderr and word in proc.stderr, proc.stderr
        assert not (tmp_path / "stores" / "bad").exists()
