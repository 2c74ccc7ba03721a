"""Press thresholds tuned by play (`golem run tune`) on the real engine.

The model is untrained (its button probabilities sit near 0.5), so a grid of
0.05 and 0.95 presses a button always or never: the candidates play visibly
different episodes, and the search must keep the one that scored best.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from golem.diagnostics.evaluation import EvalPlan, evaluate
from golem.diagnostics.tuning import TunePlan, pressed_actions, tune_thresholds
from golem.errors import GolemError
from golem.learning.checkpoints import load_checkpoint, save_checkpoint
from golem.learning.modelspec import ModelSpec
from golem.plugins import load_plugins
from golem.settings import BrainSettings, GolemSettings
from tests.helpers import json_out, one_error_line

pytestmark = pytest.mark.engine

REGISTRY = load_plugins().registry


def _settings() -> GolemSettings:
    return GolemSettings.model_construct(brain=BrainSettings(profile="basic", sensors=["visual"]))


def _save(path: Path) -> Path:
    torch.manual_seed(0)
    spec = ModelSpec.from_settings(_settings(), REGISTRY)
    return save_checkpoint(path, REGISTRY.get("models", "cfc").obj(spec), spec.to_metadata())


def test_search_keeps_the_candidate_that_plays_best(tmp_path: Path):
    path = _save(tmp_path / "m.safetensors")
    names = tuple(ModelSpec.from_settings(_settings(), REGISTRY).action_names)
    plan = TunePlan(
        model_path=path, scenario="basic", actions=names, start=(0.5,) * len(names), tune=("ATTACK", "MOVE_LEFT"),
        episodes=2, max_steps=25, grid=(0.05, 0.95), sweeps=1,
    )
    result = tune_thresholds(_settings(), REGISTRY, plan)
    trials = result.trials
    assert trials[0].thresholds == (0.5,) * len(names) and trials[0].action is None
    assert 2 <= len(trials) <= 5 and len({t.thresholds for t in trials}) == len(trials)  # none played twice
    assert len({t.mean for t in trials}) > 1, "thresholds did not change play"
    assert result.best.mean == max(t.mean for t in trials)
    best = result.thresholds()
    untouched = [n for n in names if n not in plan.tune]
    assert all(best[n] == 0.5 for n in untouched)
    assert all(best[n] in (0.05, 0.95, 0.5) for n in plan.tune)
    # The scores are the engine's: the best candidate, played again by `evaluate`, scores the same.
    board = evaluate(_settings(), REGISTRY, EvalPlan(
        model_path=path, scenario="basic", episodes=2, max_steps=25, threshold=list(result.best.thresholds),
        baselines=False, start_seed=plan.start_seed,
    ))
    assert board.summary()["policies"]["model"]["return"]["mean"] == pytest.approx(result.best.mean)


def test_plan_rejects_unknown_actions_and_bad_grids(tmp_path: Path):
    names = ("ATTACK", "USE")
    with pytest.raises(GolemError, match="unknown action"):
        TunePlan(model_path=tmp_path, scenario="basic", actions=names, start=(0.5, 0.5), tune=("JUMP",))
    with pytest.raises(GolemError, match="between 0 and 1"):
        TunePlan(model_path=tmp_path, scenario="basic", actions=names, start=(0.5, 0.5), tune=("USE",), grid=(0.0, 1.2))
    with pytest.raises(GolemError, match="no action to tune"):
        TunePlan(model_path=tmp_path, scenario="basic", actions=names, start=(0.5, 0.5), tune=())
    calibrated = {"metrics": {"calibrated": {"actions": {"ATTACK": {"support": 12}, "USE": {"support": 0}}}}}
    assert pressed_actions(calibrated, names) == ("ATTACK",)
    assert pressed_actions({}, names) == names


def test_cli_saves_a_new_active_model_with_the_tuned_thresholds(golem_cli, tmp_path: Path):
    source = _save(tmp_path / "golem-data" / "models" / "basic" / "active.safetensors")
    kept = tmp_path / "source.safetensors"
    kept.write_bytes(source.read_bytes())
    summary = json_out(golem_cli(
        ["run", "tune", "--model", str(kept), "--episodes", "1", "--max-steps", "20", "--grid", "0.05,0.95",
         "--actions", "ATTACK", "--sweeps", "1", "--out", "trials.json", "--json"],
        check=True,
    ))
    assert summary["tuned"] == ["ATTACK"] and summary["candidates"] == 3 and summary["seeds"] == [5000, 5000]
    assert summary["best_return"] >= summary["start_return"]
    _, active = load_checkpoint(tmp_path / "golem-data" / "models" / "basic" / "active.safetensors")
    _, original = load_checkpoint(kept)
    assert active["thresholds"] == summary["best"] and active["tuned_by_play"]["source"] == "source.safetensors"
    assert active["sha256"] == original["sha256"]  # the same weights, only the thresholds changed
    assert "thresholds" not in original or original["thresholds"] is None  # the source is left as it was
    archive = tmp_path / summary["archive"]  # relative to the command's working folder
    assert archive.is_file() and archive.name.endswith("-cfc-tuned.safetensors")
    trials = json.loads((tmp_path / "trials.json").read_text())["trials"]
    assert len(trials) == 3 and {t["action"] for t in trials} == {None, "ATTACK"}
    played = json_out(golem_cli(["run", "play", "--max-steps", "5", "--json"], check=True))
    assert played["threshold"] == [summary["best"][n] for n in active["spec"]["action_names"]]


def test_bad_inputs_are_one_line_errors(golem_cli, tmp_path: Path):
    assert "golem run train" in one_error_line(golem_cli(["run", "tune"]))
    path = _save(tmp_path / "m.safetensors")
    line = one_error_line(golem_cli(["run", "tune", "--model", str(path), "--actions", "JUMP", "--episodes", "1"]))
    assert "unknown action(s) to tune: JUMP" in line
    line = one_error_line(golem_cli(["run", "tune", "--model", str(path), "--grid", "0.5,1.5", "--episodes", "1"]))
    assert "between 0 and 1" in line
    assert golem_cli(["run", "tune", "--model", str(path), "--grid", "abc"]).returncode != 0
    assert "unknown scenario" in one_error_line(golem_cli(["run", "tune", "--model", str(path), "-s", "no_such_map"]))
    assert not (tmp_path / "golem-data" / "models").exists()  # nothing written on a failed start
