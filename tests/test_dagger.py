"""``golem run dagger`` on the real engine: rounds of learner-played, expert-labelled recovery episodes.

A tiny behavioural-cloning model (a dozen ``basic`` expert episodes, a 16-unit
core, one epoch) is corrected for two rounds of two episodes with a handful of
fine-tuning updates each, so the file stays quick on two CPU cores.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from golem.data.store import TrajectoryStore
from golem.errors import GolemError
from golem.learning.checkpoints import read_metadata
from golem.workflows.dagger import beta_for_round
from tests.helpers import tiny_model_root

pytestmark = pytest.mark.engine


def test_beta_schedules() -> None:
    assert [beta_for_round(i, "linear") for i in range(6)] == [1.0, 0.75, 0.5, 0.25, 0.0, 0.0]
    assert [beta_for_round(i, "linear", 2) for i in range(3)] == [1.0, 0.5, 0.0]
    assert [beta_for_round(i, "exponential") for i in range(4)] == [1.0, 0.5, 0.25, 0.125]
    assert beta_for_round(2, "exponential", 0.9) == pytest.approx(0.81)
    for schedule, param in (("cosine", None), ("linear", 0.0), ("exponential", 1.5)):
        with pytest.raises(GolemError) as err:
            beta_for_round(1, schedule, param)
        assert "\n" not in str(err.value)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data root with 12 ``basic`` expert episodes and a tiny model trained on them."""
    return tiny_model_root(tmp_path_factory.mktemp("dagger") / "root", 12, 4)


def test_rounds_record_learner_states_with_expert_labels_and_continue(golem_cli, trained: Path) -> None:
    active = trained / "models" / "basic" / "active.safetensors"
    before = hashlib.sha256(active.read_bytes()).hexdigest()
    args = [
        "run",
        "dagger",
        "--expert",
        "basic",
        "--rounds",
        "2",
        "--episodes-per-round",
        "2",
        "--updates",
        "3",
        "--eval-episodes",
        "1",
        "--set",
        f"data.root={trained}",
        "--set",
        "training.sequence_length=4",
        "--set",
        "training.batch_size=4",
        "--json",
    ]
    report = json.loads(golem_cli(args, check=True).stdout)
    assert [r["round"] for r in report["rounds"]] == [1, 2]
    assert [r["beta"] for r in report["rounds"]] == [0.75, 0.5]  # linear over 4 rounds
    for r in report["rounds"]:
        assert len(r["episodes"]) == 2 and r["steps"] > 0
        assert 0.0 <= r["disagreement"] <= 1.0 and 0.0 < r["expert_share"] < 1.0
        assert r["learner_return"] is not None and r["val_loss"] is not None
    meta = read_metadata(active)
    assert meta["data"]["include_recovery"] is True and meta["data"]["resumed_from"]  # fine-tuned, resumed
    assert meta["spec"]["working_memory"] == 16  # the corrected model's architecture, without --set
    with TrajectoryStore.open(trained / "stores" / "demos") as store:
        base = [i for i in store.episodes() if i.meta.source == "expert"]
        expert_buttons = np.concatenate([store.read(i, "actions") for i in base]).any(axis=0)
        first = [store.get(e) for e in report["rounds"][0]["episodes"]]
        for info in first:
            m = info.meta
            assert m.source == "recovery" and {"dagger", "dagger-round-1"} <= set(m.tags)
            assert m.extra["dagger_round"] == 1 and m.extra["beta"] == 0.75
            assert m.extra["learner_sha256"] == before  # round 1 corrected the model trained by BC
            assert m.seed is not None and m.seed >= 12  # new starts after the recorded ones
            labels = store.read(info, "actions")
            assert not labels[:, ~expert_buttons].any()  # labels are the expert's buttons, never the learner's
        second = store.get(report["rounds"][1]["episodes"][0])
        assert second.meta.extra["learner_sha256"] != before  # round 2 corrected the fine-tuned model
    # a second call continues with round 3
    again = json.loads(golem_cli([*args[:4], "--rounds", "1", *args[6:]], check=True).stdout)
    assert [r["round"] for r in again["rounds"]] == [3] and again["rounds"][0]["beta"] == 0.25
    # data list says what each recovery episode corrected
    listed = golem_cli(["--set", f"data.root={trained}", "data", "list"], env={"COLUMNS": "300"}, check=True).stdout
    assert "corrected" in listed and f"model {before[:12]}; round 1, β 0.75" in listed


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--beta", "cosine"], "unknown β schedule 'cosine'"),
        (["--scenario", "take_cover"], "expert 'basic' plays basic, not 'take_cover'"),
        (["--set", "brain.profile=fluid"], "profile"),
    ],
)
def test_bad_input_is_one_line(golem_cli, trained: Path, extra: list[str], needle: str) -> None:
    proc = golem_cli(["run", "dagger", "--expert", "basic", "--set", f"data.root={trained}", *extra])
    assert proc.returncode != 0
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and needle in lines[0], proc.stderr


def test_no_active_model_is_one_line(golem_cli, tmp_path: Path) -> None:
    proc = golem_cli(["run", "dagger", "--expert", "basic", "--set", f"data.root={tmp_path}"])
    assert proc.returncode != 0
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "no active model" in lines[0] and "golem run train" in lines[0]


def test_expert_of_another_scenario_is_refused_and_changes_nothing(golem_cli, trained: Path) -> None:
    """A ``basic`` model corrected by the ``take_cover`` expert would mix scenarios and replace the active model."""
    active = trained / "models" / "basic" / "active.safetensors"
    before = hashlib.sha256(active.read_bytes()).hexdigest()
    with TrajectoryStore.open(trained / "stores" / "demos") as store:
        episodes = len(list(store.episodes()))
    proc = golem_cli(
        [
            "run",
            "dagger",
            "--expert",
            "take_cover",
            "--rounds",
            "1",
            "--episodes-per-round",
            "1",
            "--set",
            f"data.root={trained}",
        ]
    )
    assert proc.returncode != 0
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "trained on basic, not on 'take_cover'" in lines[0] and "--other-scenario" in lines[0]
    assert hashlib.sha256(active.read_bytes()).hexdigest() == before
    with TrajectoryStore.open(trained / "stores" / "demos") as store:
        assert len(list(store.episodes())) == episodes


@pytest.fixture(scope="module")
def on_maps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data root with the explorer's episodes on three phase-1 generated maps and a tiny model trained on them."""
    maps = ["--expert", "explorer", "--procgen-phase", "1", "--maps", "3", "--max-steps", "300"]
    return tiny_model_root(tmp_path_factory.mktemp("dagger-maps") / "root", 3, 8, record=maps)


def test_rounds_on_generated_maps_play_fresh_maps_and_check_the_learner_on_held_out_ones(golem_cli, on_maps: Path):
    args = ["run", "dagger", "--expert", "explorer", "--procgen-phase", "1", "--rounds", "1"]
    args += ["--episodes-per-round", "2", "--updates", "3", "--eval-episodes", "2", "--max-steps", "200"]
    args += ["--set", f"data.root={on_maps}", "--set", "training.sequence_length=8", "--set", "training.batch_size=4"]
    report = json.loads(golem_cli([*args, "--json"], check=True).stdout)
    (first,) = report["rounds"]
    assert first["round"] == 1 and first["maps"] == [3, 4]  # after the three maps the model learnt
    assert first["learner_exits"] is not None and 0.0 <= first["learner_exits"] <= 1.0
    assert report["scenario"] == "phase-1 maps of builtin"
    with TrajectoryStore.open(on_maps / "stores" / "demos") as store:
        for eid, seed in zip(first["episodes"], first["maps"], strict=True):
            meta = store.get(eid).meta
            assert meta.source == "recovery" and {"dagger-round-1", "procgen-phase1"} <= set(meta.tags)
            assert meta.extra["world"]["phase"] == 1 and meta.extra["world"]["seed"] == meta.seed == seed
            assert "phase1" in meta.scenario and meta.scenario.endswith(".cfg")  # the built map it played
    # the next round continues on maps after those
    again = json.loads(golem_cli([*args, "--json"], check=True).stdout)
    assert [(r["round"], r["maps"]) for r in again["rounds"]] == [(2, [5, 6])]


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--expert", "explorer", "--procgen-phase", "1"], "trained on basic, not on generated maps"),
        (["--expert", "explorer"], "plays generated maps: pass --procgen-phase P"),
        (["--expert", "basic", "--procgen-phase", "1"], "explorer"),
        (["--expert", "explorer", "--procgen-phase", "9"], "phase"),
    ],
)
def test_generated_maps_bad_input_is_one_line_and_changes_nothing(
    golem_cli, trained: Path, extra: list[str], needle: str
) -> None:
    active = trained / "models" / "basic" / "active.safetensors"
    before = hashlib.sha256(active.read_bytes()).hexdigest()
    with TrajectoryStore.open(trained / "stores" / "demos") as store:
        episodes = len(list(store.episodes()))
    proc = golem_cli(["run", "dagger", *extra, "--rounds", "1", "-n", "1", "--set", f"data.root={trained}"])
    assert proc.returncode != 0
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and needle in lines[0], proc.stderr
    assert hashlib.sha256(active.read_bytes()).hexdigest() == before
    with TrajectoryStore.open(trained / "stores" / "demos") as store:
        assert len(list(store.episodes())) == episodes
