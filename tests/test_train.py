"""``golem run train`` and :mod:`golem.learning.training` on demonstrations recorded by the real engine.

Runs are tiny (a dozen ``basic`` episodes, L=4, B=4, a 16-unit core, one
epoch) so the file stays quick on two CPU cores.
"""

from __future__ import annotations

import json
import signal
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from golem.data.dataset import SequenceDataset
from golem.data.store import TrajectoryStore
from golem.errors import GolemError
from golem.learning.checkpoints import load_checkpoint, read_metadata, rebuild_model
from golem.learning.modelspec import ModelSpec
from golem.learning.training import TrainPlan, train, train_step
from golem.learning.validation import stream_batches
from golem.plugins import load_plugins
from golem.settings import GolemSettings, TrainingSettings
from golem_models.net import DoomNet
from tests.conftest import GOLEM, _clean_env, sigint_default

pytestmark = pytest.mark.engine

SMALL = [
    "--set",
    "training.sequence_length=4",
    "--set",
    "training.batch_size=4",
    "--set",
    "brain.working_memory=16",
    "--set",
    "training.validation_split=0.2",
    "--set",
    "training.min_updates=0",
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """12 episodes of the ``basic`` expert, recorded by the real engine through the CLI."""
    path = tmp_path_factory.mktemp("train-data") / "basic"
    proc = subprocess.run(
        [str(GOLEM), "run", "record", "--expert", "basic", "-n", "12", "--store", str(path)],
        capture_output=True,
        text=True,
        env=_clean_env(),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return path


def train_args(store: Path, root: Path, *more: str) -> list[str]:
    return [
        "--log-level",
        "warning",
        "run",
        "train",
        "--store",
        str(store),
        "--set",
        f"data.root={root}",
        *SMALL,
        "--epochs",
        "1",
        "--device",
        "cpu",
        *more,
    ]


def small_settings(root: Path, **training) -> GolemSettings:
    return GolemSettings.model_validate(
        {
            "data": {"root": str(root)},
            "brain": {"working_memory": 16},
            "training": {
                "sequence_length": 4,
                "batch_size": 4,
                "epochs": 1,
                "device": "cpu",
                "validation_split": 0.2,
                "min_updates": 0,
                **training,
            },
        }
    )


def error_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The single non-empty stderr line of a failed command (asserting there is exactly one)."""
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    return lines[0]


# --- the CLI run ---------------------------------------------------------------


def test_cli_train_saves_active_model_rebuilt_from_metadata(golem_cli, store: Path, tmp_path: Path) -> None:
    root = tmp_path / "root"
    proc = golem_cli([*train_args(store, root, "--seed", "0"), "--json"])
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    active = root / "models" / "basic" / "active.safetensors"
    assert Path(out["active"]) == active and active.is_file()
    archive = Path(out["archive"])
    assert archive.parent == root / "models" / "basic" / "archive" and archive.name.endswith("-cfc.safetensors")
    val = out["validation"]
    assert 0.0 <= val["exact_match"] <= 1.0 and val["steps"] > 0
    assert set(val["actions"]) >= {"ATTACK", "TURN_LEFT", "TURN_RIGHT"}
    assert len(out["history"]) == 1

    meta = read_metadata(active)
    assert meta["spec"]["model"] == "cfc" and meta["spec"]["working_memory"] == 16
    assert meta["training"]["sequence_length"] == 4 and meta["training"]["seed"] == 0
    assert meta["metrics"]["history"][0]["epoch"] == 0
    assert meta["data"]["store"] == str(store.resolve())
    with TrajectoryStore.open(store) as opened:
        ids = [info.id for info in opened.episodes()]
        steps = sum(info.length for info in opened.episodes())
    assert meta["data"]["episodes"] == ids and meta["data"]["total_steps"] == steps
    # the scenario it was trained on, which play and evaluate then default to without --module
    assert meta["data"]["scenario"] == "basic" and meta["data"]["scenarios"] == ["basic"]

    # The metadata alone rebuilds the network the training code built from settings.
    registry = load_plugins().registry
    rebuilt = rebuild_model(active, registry)
    spec = ModelSpec.from_settings(small_settings(root), registry)
    reference = registry.get("models", "cfc").obj(spec)
    reference.load_state_dict(load_checkpoint(archive)[0])
    reference.eval()
    torch.manual_seed(1)
    x = {"visual": torch.rand(2, 5, 3, 64, 64)}
    hx = torch.randn(2, rebuilt.state_size)
    with torch.no_grad():
        a, ha = rebuilt(x, hx)
        b, hb = reference(x, hx)
    assert a.shape == (2, 5, 8)
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    torch.testing.assert_close(ha, hb, rtol=0, atol=0)

    # The human report: a per-action table and where the model went.
    proc = golem_cli(train_args(store, tmp_path / "root2"))
    assert proc.returncode == 0, proc.stderr
    for word in ("precision", "recall", "F1", "ATTACK", "exact match", "active model", "archived as"):
        assert word in proc.stdout


def test_default_settings_train_on_short_basic_episodes_and_few_streams(golem_cli, store: Path, tmp_path: Path) -> None:
    """``golem run train`` with default settings on 12 short ``basic`` episodes.

    L is chosen from the episodes (``auto``), every episode's tail is kept
    (padded and masked), there are fewer streams than the 32 rows, so the batch
    shrinks with a warning, and the small store still gets ``min_updates``
    optimiser steps; validation scores exactly the recorded steps of the
    validation episodes, as the audit counts them.
    """
    from golem.settings import auto_sequence_length

    root = tmp_path / "root"
    with TrajectoryStore.open(store) as opened:
        lengths = {info.id: info.length for info in opened.episodes()}
    L = auto_sequence_length(list(lengths.values()))
    assert 4 <= L < max(lengths.values())  # some episodes end in a padded tail
    # Default settings but a floor of 40 updates, not 500: the floor's mechanism at a tenth of the time.
    proc = golem_cli(
        [
            "run",
            "train",
            "--store",
            str(store),
            "--set",
            f"data.root={root}",
            "--epochs",
            "1",
            "--set",
            "training.min_updates=40",
            "--device",
            "cpu",
            "--json",
        ]
    )
    assert proc.returncode == 0, proc.stderr
    assert "sampler.fewer_streams" in proc.stderr and "requested_batch_size=32" in proc.stderr
    out = json.loads(proc.stdout)
    meta = read_metadata(Path(out["active"]))
    assert meta["training"]["sequence_length"] == L and meta["training"]["batch_size"] == 32
    assert out["updates"] >= meta["training"]["min_updates"] == 40
    assert TrainingSettings().min_updates == 500  # the default floor, lowered here only for time
    per_epoch = out["history"][0]["batches"]
    assert per_epoch < 40 and len(out["history"]) == -(-40 // per_epoch)  # one epoch asked, the floor applied
    val_ids = meta["data"]["validation_episodes"]
    train_ids = [i for i in meta["data"]["episodes"] if i not in val_ids]
    assert val_ids and meta["data"]["batch_size"] == 2 * len(train_ids)  # one row per (mirrored) stream
    assert out["validation"]["steps"] == sum(lengths[i] for i in val_ids)  # padding is not scored
    assert meta["data"]["train_windows"] == 2 * sum(-(-lengths[i] // L) for i in train_ids)  # no step dropped
    audit = golem_cli(["run", "audit", "--store", str(store), "--set", f"data.root={root}", "--json"])
    assert audit.returncode == 0, audit.stderr
    report = json.loads(audit.stdout)
    assert report["selection"] == "validation" and report["steps"] == out["validation"]["steps"]


def test_in_process_model_equals_rebuilt_checkpoint(store: Path, tmp_path: Path) -> None:
    registry = load_plugins().registry
    result = train(small_settings(tmp_path, seed=3), registry, TrainPlan(store=store))
    assert result.model is not None and not result.interrupted
    rebuilt = rebuild_model(result.active, registry)
    x = {"visual": torch.rand(3, 4, 3, 64, 64)}
    with torch.no_grad():
        torch.testing.assert_close(rebuilt(x)[0], result.model.eval()(x)[0], rtol=0, atol=0)


def test_same_seed_twice_gives_identical_weights(golem_cli, store: Path, tmp_path: Path) -> None:
    paths = []
    for run in ("a", "b"):
        proc = golem_cli([*train_args(store, tmp_path / run, "--seed", "7"), "--json"])
        assert proc.returncode == 0, proc.stderr
        paths.append(Path(json.loads(proc.stdout)["active"]))
    (wa, ma), (wb, mb) = load_checkpoint(paths[0]), load_checkpoint(paths[1])
    assert wa.keys() == wb.keys()
    for name in wa:
        assert torch.equal(wa[name], wb[name]), name
    assert ma["metrics"]["history"][0]["train_loss"] == mb["metrics"]["history"][0]["train_loss"]
    proc = golem_cli([*train_args(store, tmp_path / "c", "--seed", "8"), "--json"])
    wc, _ = load_checkpoint(Path(json.loads(proc.stdout)["active"]))
    assert any(not torch.equal(wa[n], wc[n]) for n in wa)


def test_resume_continues_from_the_active_model(golem_cli, store: Path, tmp_path: Path) -> None:
    root = tmp_path / "root"
    first = golem_cli([*train_args(store, root, "--seed", "0"), "--json"])
    assert first.returncode == 0, first.stderr
    before, _ = load_checkpoint(root / "models" / "basic" / "active.safetensors")
    second = golem_cli([*train_args(store, root, "--seed", "0", "--resume"), "--json"])
    assert second.returncode == 0, second.stderr
    out = json.loads(second.stdout)
    assert [h["epoch"] for h in out["history"]] == [0, 1]
    after, meta = load_checkpoint(root / "models" / "basic" / "active.safetensors")
    assert [h["epoch"] for h in meta["metrics"]["history"]] == [0, 1]
    assert any(not torch.equal(before[n], after[n]) for n in before)
    assert len(list((root / "models" / "basic" / "archive").glob("*.safetensors"))) == 2

    # A resume whose settings describe another network fails in one line.
    proc = golem_cli([*train_args(store, root, "--resume"), "--set", "brain.working_memory=24"])
    assert proc.returncode != 0
    line = error_line(proc)
    assert "--resume" in line and "working_memory" in line


def test_resume_without_active_model_is_one_line(golem_cli, store: Path, tmp_path: Path) -> None:
    proc = golem_cli(train_args(store, tmp_path / "empty", "--resume"))
    assert proc.returncode != 0
    assert "no active model" in error_line(proc)


# --- data that does not fit the model -----------------------------------------------


def test_other_action_profile_is_one_line(golem_cli, tmp_path: Path) -> None:
    fluid = tmp_path / "fluid"
    golem_cli(
        ["run", "record", "--expert", "basic", "-n", "2", "--set", "brain.profile=fluid", "--store", str(fluid)],
        check=True,
    )
    proc = golem_cli(train_args(fluid, tmp_path / "root"))
    assert proc.returncode != 0
    line = error_line(proc)
    assert "profile fluid" in line and "basic" in line and "brain.profile=fluid" in line
    assert "Traceback" not in proc.stderr and "size mismatch" not in proc.stderr


def test_sensor_missing_from_data_is_one_line(golem_cli, store: Path, tmp_path: Path) -> None:
    proc = golem_cli([*train_args(store, tmp_path / "root"), "--plugin", "depth"])
    assert proc.returncode != 0
    line = error_line(proc)
    assert "depth" in line and "episode" in line


def test_no_store_and_unknown_module_are_one_line(golem_cli, store: Path, tmp_path: Path) -> None:
    proc = golem_cli(train_args(tmp_path / "nowhere", tmp_path / "root"))
    assert proc.returncode != 0 and "no trajectory store" in error_line(proc)
    proc = golem_cli([*train_args(store, tmp_path / "root"), "--module", "nosuchthing"])
    assert proc.returncode != 0 and "nosuchthing" in error_line(proc)


# --- Ctrl-C ----------------------------------------------------------------------


def test_ctrl_c_saves_current_weights_and_exits_130(store: Path, tmp_path: Path) -> None:
    root = tmp_path / "root"
    args = [
        str(GOLEM),
        "--log-json",
        "--log-level",
        "info",
        "run",
        "train",
        "--store",
        str(store),
        "--set",
        f"data.root={root}",
        *SMALL,
        "--epochs",
        "1000",
        "--device",
        "cpu",
    ]
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_clean_env(), preexec_fn=sigint_default
    )
    seen: list[str] = []
    epoch_done = threading.Event()

    def watch() -> None:  # read stderr on a thread so the wait below has a deadline
        assert proc.stderr is not None
        for line in proc.stderr:
            seen.append(line)
            if line.startswith("epoch 1 done:"):  # the plain progress line, printed after the epoch's events
                epoch_done.set()

    reader = threading.Thread(target=watch, daemon=True)
    reader.start()
    try:
        assert epoch_done.wait(timeout=180), "no epoch finished within 180 s:\n" + "".join(seen)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        reader.join(timeout=10)
        err = "".join(seen)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    out = proc.stdout.read() if proc.stdout is not None else ""
    assert "Validation:" in out and "precision" in out  # the per-action summary of a finished run
    assert "epoch 1 done: train loss" in err  # stderr is no terminal: plain progress lines
    active = root / "models" / "basic" / "active.safetensors"
    assert f"saved to {root / 'models' / 'basic' / 'archive'}" in err.replace("\n", "")
    meta = read_metadata(active)
    assert meta["interrupted"] is True and len(meta["metrics"]["history"]) >= 1
    assert rebuild_model(active, load_plugins().registry) is not None


# --- the loop's parts ------------------------------------------------------------------


class Recorder(nn.Module):
    """A stand-in model that remembers the state it was given; output depends on it."""

    state_size = 3

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.ones(1))
        self.seen: list[torch.Tensor] = []

    reset_rows = staticmethod(DoomNet.reset_rows)

    def forward(self, inputs, hx):
        self.seen.append(hx.detach().clone())
        x = inputs["x"]  # [B, T, 1]
        logits = self.w * x + hx.sum(dim=-1, keepdim=True).unsqueeze(1)
        return logits, hx + 1.0


def test_rows_starting_an_episode_are_zeroed_before_the_forward_pass() -> None:
    model = Recorder()
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    hx = torch.full((3, 3), 5.0)
    is_first = torch.tensor([True, False, True])
    x = {"x": torch.zeros(3, 2, 1)}
    _, new_hx = train_step(model, nn.BCEWithLogitsLoss(), opt, x, torch.zeros(3, 2, 1), is_first, hx)
    seen = model.seen[-1]
    assert torch.equal(seen[0], torch.zeros(3)) and torch.equal(seen[2], torch.zeros(3))
    assert torch.equal(seen[1], torch.full((3,), 5.0))
    assert not new_hx.requires_grad
    assert torch.equal(new_hx, torch.tensor([[1.0] * 3, [6.0] * 3, [1.0] * 3]))


def test_validation_streams_cover_every_window_once_in_order(store: Path) -> None:
    registry = load_plugins().registry
    settings = small_settings(Path("unused"), mirror=True)
    spec = ModelSpec.from_settings(settings, registry)
    with TrajectoryStore.open(store) as opened:
        ds = SequenceDataset.from_store(opened, spec.sensors, spec.action_names, settings.training)
        rows: dict[int, list[int]] = {}
        seen: list[int] = []
        for indices, active in stream_batches(ds, 3):
            for b, (i, on) in enumerate(zip(indices.tolist(), active.tolist())):
                if on:
                    rows.setdefault(b, []).append(i)
                    seen.append(i)
        assert sorted(seen) == list(range(len(ds)))
        p = ds.pointers
        for walk in rows.values():  # each row continues its stream or starts a new one at window 0
            for prev, cur in zip(walk, walk[1:]):
                same = p["episode"][cur] == p["episode"][prev] and p["mirrored"][cur] == p["mirrored"][prev]
                assert (same and p["start"][cur] == p["start"][prev] + 4) or (not same and p["start"][cur] == 0)


def test_unavailable_device_is_one_line(store: Path, tmp_path: Path) -> None:
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    with pytest.raises(GolemError, match="no CUDA device"):
        train(small_settings(tmp_path, device="cuda"), load_plugins().registry, TrainPlan(store=store))


def test_update_budget_best_epoch_and_calibrated_thresholds_reach_play(golem_cli, store: Path, tmp_path: Path) -> None:
    root = tmp_path / "root"
    out = json.loads(
        golem_cli([*train_args(store, root, "--seed", "1"), "--updates", "7", "--json"], check=True).stdout
    )
    assert out["updates"] == 7 and sum(h["batches"] for h in out["history"]) == 7  # the budget, not epochs
    out = json.loads(
        golem_cli(
            [*train_args(store, root, "--seed", "1"), "--epochs", "3", "--set", "training.validate_every=1", "--json"],
            check=True,
        ).stdout
    )
    meta = read_metadata(Path(out["active"]))
    losses = [h["validation"]["loss"] for h in meta["metrics"]["history"]]
    best = min(range(len(losses)), key=losses.__getitem__)
    assert len(losses) == 3 and meta["metrics"]["best_epoch"] == best == out["best_epoch"]
    assert meta["metrics"]["validation"]["loss"] == losses[best]  # the saved weights are the best epoch's
    thresholds = meta["thresholds"]
    assert set(thresholds) == set(meta["spec"]["action_names"]) and thresholds == out["thresholds"]
    assert all(0.0 < v < 1.0 for v in thresholds.values())
    assert meta["metrics"]["calibrated"]["actions"].keys() == thresholds.keys()
    played = json.loads(
        golem_cli(["run", "play", "--set", f"data.root={root}", "--max-steps", "3", "--json"], check=True).stdout
    )
    expected = [thresholds[n] for n in meta["spec"]["action_names"]]
    assert played["threshold"] == (expected if len(set(expected)) > 1 else expected[0])
    forced = json.loads(
        golem_cli(
            [
                "run",
                "play",
                "--set",
                f"data.root={root}",
                "--set",
                "brain.activation=0.4",
                "--max-steps",
                "3",
                "--json",
            ],
            check=True,
        ).stdout
    )
    assert forced["threshold"] == 0.4  # a given brain.activation wins


def test_training_ends_by_tuning_thresholds_by_play_when_asked(golem_cli, store: Path, tmp_path: Path) -> None:
    root = tmp_path / "root"
    out = json.loads(
        golem_cli(
            [*train_args(store, root, "--seed", "1"), "--set", "training.tune_episodes=1", "--json"], check=True
        ).stdout
    )
    tuned = out["tuned"]
    assert out["data"]["tune_by_play"] == 1
    assert tuned["episodes"] == 1 and tuned["seeds"] == [5000, 5000] and tuned["candidates"] >= 1
    assert set(tuned["start"]) == set(out["thresholds"]) and tuned["start"] == out["thresholds"]
    meta = read_metadata(Path(out["active"]))
    assert meta["thresholds"] == tuned["plays"]  # what the active model now plays with
    if tuned["accepted"]:  # a confirmed gain: the active model is the tuned archive
        assert tuned["confirmation"]["confirmed"] and tuned["best_return"] > tuned["start_return"]
        assert Path(tuned["archive"]).is_file() and meta["thresholds"] == tuned["best"]
        assert meta["tuned_by_play"]["confirmation"] == tuned["confirmation"]
    else:  # nothing better, or refuted: training's own model stays active
        assert tuned["archive"] is None and meta["thresholds"] == out["thresholds"] and "tuned_by_play" not in meta
    # Without the setting (basic's spec asks for none), training does not play.
    out = json.loads(golem_cli([*train_args(store, root, "--seed", "1"), "--json"], check=True).stdout)
    assert out["tuned"] is None and out["data"]["tune_by_play"] == 0


def test_calibrated_thresholds_maximise_f1_per_action() -> None:
    from golem.learning.validation import calibrate_thresholds

    rng = np.random.default_rng(0)
    n = 2000
    y = np.zeros((n, 3), np.uint8)
    y[:, 0] = rng.random(n) < 0.05  # a rare action whose probability stays low: 0.3 when pressed, 0.1 otherwise
    y[:, 1] = rng.random(n) < 0.5  # a well-separated one: 0.9 / 0.1
    p = np.where(y == 1, np.array([0.3, 0.9, 0.5]), np.array([0.1, 0.1, 0.5])).astype(np.float32)
    p += rng.normal(0, 0.02, p.shape).astype(np.float32)
    t = calibrate_thresholds(p, y, default=0.5)
    assert 0.1 < t[0] < 0.3  # pressed below 0.5: every press recovered
    assert 0.1 < t[1] < 0.9
    assert t[2] == 0.5  # never pressed: the default
    from golem.learning.validation import Tally

    flat, tuned = Tally(3), Tally(3)
    flat.add(p, y, 0.5)
    tuned.add(p, y, t)
    assert int(flat.tp[0]) == 0 and int(tuned.tp[0]) == int(y[:, 0].sum())


def test_tensorboard_event_files_hold_the_curves(golem_cli, store: Path, tmp_path: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    root = tmp_path / "root"
    out = json.loads(golem_cli([*train_args(store, root), "--epochs", "2", "--json"], check=True).stdout)
    folder = Path(read_metadata(Path(out["active"]))["data"]["tensorboard"])
    assert folder.parent == root / "runs" / "basic" and list(folder.glob("events.out.tfevents.*"))
    events = EventAccumulator(str(folder))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {"train/loss", "train/frames_per_s", "validation/loss", "validation/exact_match"} <= tags
    assert any(t.startswith("validation_f1/") for t in tags)
    losses = events.Scalars("train/loss")
    assert [e.value for e in losses] == pytest.approx([h["train_loss"] for h in out["history"]])
    assert [e.step for e in losses] == [sum(h["batches"] for h in out["history"][: i + 1]) for i in range(2)]
    off = tmp_path / "off"
    golem_cli([*train_args(store, off), "--no-tensorboard"], check=True)
    assert not (off / "runs").exists()


def test_a_maze_trains_without_mirrored_twins_unless_asked(golem_cli, tmp_path: Path) -> None:
    """my_way_home's spec says its mirror image is another maze: train leaves mirroring off by default,
    and a given ``training.mirror`` (or the ``mirror`` augmentation selected by name) still wins. The
    checkpoint carries the data's frame skip (4)."""
    store = tmp_path / "maze"
    golem_cli(
        ["run", "record", "--expert", "my_way_home", "-n", "3", "--max-steps", "60", "--store", str(store)], check=True
    )
    for name, given, want in (
        ("spec", [], False),
        ("given", ["--set", "training.mirror=true"], True),
        ("plugin", ["--plugin", "mirror"], True),
    ):
        root = tmp_path / name
        golem_cli(train_args(store, root, *given), check=True)
        metadata = read_metadata(root / "models" / "basic" / "active.safetensors")
        assert metadata["training"]["mirror"] is want
        assert metadata["data"]["frame_skip"] == 4 and metadata["data"]["scenario"] == "my_way_home"


def test_a_scenario_spec_sets_the_budget_only_where_the_user_set_none() -> None:
    from golem.learning.training import scenario_training
    from golem.scenarios import SCENARIO_SPECS

    cfg = TrainingSettings()
    hgs, dtc = SCENARIO_SPECS["health_gathering_supreme"], SCENARIO_SPECS["defend_the_center"]
    assert hgs.updates and dtc.min_updates and dtc.updates is None
    assert scenario_training(cfg, ["health_gathering_supreme"], frozenset()) == {"updates": hgs.updates}
    assert scenario_training(cfg, ["defend_the_center"], frozenset()) == {
        "min_updates": dtc.min_updates,
        "tune_episodes": dtc.tune_episodes,
    }
    assert dtc.tune_episodes and scenario_training(
        cfg, ["defend_the_center"], frozenset({"training.tune_episodes"})
    ) == {"min_updates": dtc.min_updates}  # the user's tune_episodes (0 included) wins
    assert scenario_training(cfg, ["my_way_home"], frozenset()) == {"mirror": False}
    assert scenario_training(cfg, ["defend_the_line"], frozenset()) == {"tune_episodes": 30}
    assert scenario_training(cfg, ["take_cover"], frozenset()) == {}  # its search did not carry over: not tuned
    for given in ("training.epochs", "training.updates", "training.min_updates"):  # any budget the user set wins
        assert scenario_training(cfg, ["health_gathering_supreme"], frozenset({given})) == {}
        assert scenario_training(cfg, ["defend_the_center"], frozenset({given})) == {"tune_episodes": dtc.tune_episodes}
    assert scenario_training(cfg.model_copy(update={"updates": 100}), ["defend_the_center"], frozenset()) == {
        "tune_episodes": dtc.tune_episodes
    }
    assert scenario_training(cfg, ["basic", "health_gathering_supreme"], frozenset()) == {}  # no one scenario
