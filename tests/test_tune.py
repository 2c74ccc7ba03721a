"""Press thresholds tuned by play (`golem run tune`) on the real engine.

The model is untrained (its button probabilities sit near 0.5), so a grid of
0.05 and 0.95 presses a button always or never: the candidates play visibly
different episodes, and the search must keep the one that scored best.
On ``basic`` with 20 tics, the start thresholds kill the demon on seeds 4992,
4994, 4995, 4997, 4999 and 5000 (+95) and not on 4998, 5001–5003 (−30);
never firing (ATTACK at 0.95) scores −20 on every seed. So tuning on 4998
finds a gain the confirmation seeds 4999–5000 refute, and tuning on 5001 one
that seeds 5002–5003 uphold.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
import torch

from golem.diagnostics.evaluation import EvalPlan, ModelPlayer, evaluate
from golem.errors import GolemError
from golem.learning.checkpoints import load_checkpoint, save_checkpoint
from golem.learning.modelspec import ModelSpec
from golem.plugins import load_plugins
from golem.settings import BrainSettings, GolemSettings
from golem.workflows.tuning import (
    Confirmation,
    Trial,
    TunePlan,
    TuneResult,
    confirm_gain,
    pressed_actions,
    tune_thresholds,
)
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
        model_path=path,
        scenario="basic",
        actions=names,
        start=(0.5,) * len(names),
        tune=("ATTACK", "MOVE_LEFT"),
        episodes=2,
        max_steps=25,
        grid=(0.05, 0.95),
        sweeps=1,
        confirm=0,
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
    board = evaluate(
        _settings(),
        REGISTRY,
        EvalPlan(
            model_path=path,
            scenario="basic",
            episodes=2,
            max_steps=25,
            threshold=list(result.best.thresholds),
            baselines=False,
            start_seed=plan.start_seed,
        ),
    )
    assert board.summary()["policies"]["model"]["return"]["mean"] == pytest.approx(result.best.mean)


def test_confirmation_replays_start_and_best_on_the_next_seeds(tmp_path: Path):
    path = _save(tmp_path / "m.safetensors")
    names = tuple(ModelSpec.from_settings(_settings(), REGISTRY).action_names)
    for seed, upheld in ((4998, False), (5001, True)):
        plan = TunePlan(
            model_path=path,
            scenario="basic",
            actions=names,
            start=(0.5,) * len(names),
            tune=("ATTACK",),
            episodes=1,
            start_seed=seed,
            max_steps=20,
            grid=(0.95,),
            sweeps=1,
            confirm=2,
        )
        result = tune_thresholds(_settings(), REGISTRY, plan)
        assert result.best is not result.start and result.best.mean > result.start.mean
        c = result.confirmation
        assert c is not None and c.seeds == (seed + 1, seed + 2)
        # The confirmation's figures are the engine's on those seeds.
        for thresholds, mean in ((result.start.thresholds, c.start), (result.best.thresholds, c.best)):
            board = evaluate(
                _settings(),
                REGISTRY,
                EvalPlan(
                    model_path=path,
                    scenario="basic",
                    episodes=2,
                    max_steps=20,
                    threshold=list(thresholds),
                    baselines=False,
                    start_seed=seed + 1,
                ),
            )
            assert board.summary()["policies"]["model"]["return"]["mean"] == pytest.approx(mean)
        assert c.confirmed is upheld and result.accepted is upheld
        assert result.record()["confirmation"]["confirmed"] is upheld


@pytest.mark.parametrize("workers", [1, 2])
def test_engines_kept_open_play_what_evaluate_plays(tmp_path: Path, workers: int):
    path = _save(tmp_path / "m.safetensors")
    n = len(ModelSpec.from_settings(_settings(), REGISTRY).action_names)
    never_fire = [0.5] * n
    never_fire[6] = 0.95  # ATTACK
    plan = EvalPlan(
        model_path=path, scenario="basic", episodes=4, max_steps=20, baselines=False, start_seed=4998, workers=workers
    )
    with ModelPlayer(_settings(), REGISTRY, plan) as player:  # one set of engines, three batches
        played = [player.play(t, plan.seeds) for t in ([0.5] * n, never_fire, [0.5] * n)]
    assert [r.seed for r in played[0]] == plan.seeds
    assert [r.episode_return for r in played[0]] == [-30.0, 95.0, 95.0, -30.0]  # see the module's docstring
    assert [r.episode_return for r in played[1]] == [-20.0] * 4
    assert played[2] == played[0]  # a threshold set earlier does not leak into later episodes
    fresh = evaluate(_settings(), REGISTRY, plan)  # fresh engines, evaluate's own path
    assert fresh.of("model") == played[0]


def test_paired_gain_needs_more_than_its_standard_error():
    gain, se, ok = confirm_gain([10, 20, 30, 40], [12, 22, 32, 42])
    assert (gain, se, ok) == (2.0, 0.0, True)  # the same gain on every seed
    gain, se, ok = confirm_gain([0, 0, 0, 0], [10, -8, 9, -7])
    assert gain == pytest.approx(1.0) and se == pytest.approx(4.9160, abs=1e-4) and not ok
    assert not confirm_gain([0, 0], [5, 15], margin=3.0)[2] and confirm_gain([0, 0], [5, 15], margin=1.0)[2]
    assert not confirm_gain([5, 5], [4, 4])[2]  # a loss is never confirmed
    with pytest.raises(GolemError, match="same ≥ 2 seeds"):
        confirm_gain([1, 2, 3], [1, 2])
    plan = TunePlan(model_path=Path("m"), scenario="basic", actions=("ATTACK",), start=(0.5,), tune=("ATTACK",))
    start, better = Trial((0.5,), 1.0, 0.0, None), Trial((0.3,), 2.0, 0.0, "ATTACK")
    assert not TuneResult(plan, [start]).accepted  # nothing beat the start
    assert TuneResult(plan, [start, better]).accepted  # confirmation skipped
    refuted = Confirmation(seeds=(5030, 5059), start=1.0, best=1.1, gain=0.1, se=0.5, confirmed=False)
    assert not TuneResult(plan, [start, better], confirmation=refuted).accepted
    with pytest.raises(GolemError, match="at least 2 episodes"):
        TunePlan(model_path=Path("m"), scenario="basic", actions=("ATTACK",), start=(0.5,), tune=("ATTACK",), confirm=1)


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
    tune = [
        "run",
        "tune",
        "--model",
        str(kept),
        "--episodes",
        "1",
        "--max-steps",
        "20",
        "--grid",
        "0.05,0.95",
        "--actions",
        "ATTACK",
        "--sweeps",
        "1",
        "--confirm",
        "2",
    ]
    # Refuted on the confirmation seeds: reported, nothing written.
    refuted = golem_cli([*tune, "--seed", "4998"], check=True)
    assert "not confirmed" in refuted.stdout and "nothing was written" in refuted.stdout
    assert not list((tmp_path / "golem-data" / "models").rglob("*-tuned*"))
    assert (
        "tuned_by_play" not in load_checkpoint(tmp_path / "golem-data" / "models" / "basic" / "active.safetensors")[1]
    )
    before = datetime.now(UTC).isoformat(timespec="seconds")
    summary = json_out(golem_cli([*tune, "--seed", "5001", "--out", "trials.json", "--json"], check=True))
    assert summary["tuned"] == ["ATTACK"] and summary["candidates"] == 3 and summary["seeds"] == [5001, 5001]
    assert summary["best_return"] > summary["start_return"] and summary["accepted"]
    assert summary["confirmation"]["seeds"] == [5002, 5003] and summary["confirmation"]["confirmed"]
    assert summary["plays"] == summary["best"]
    _, active = load_checkpoint(tmp_path / "golem-data" / "models" / "basic" / "active.safetensors")
    _, original = load_checkpoint(kept)
    assert active["thresholds"] == summary["best"] and active["tuned_by_play"]["source"] == "source.safetensors"
    assert active["sha256"] == original["sha256"]  # the same weights, only the thresholds changed
    assert active["tuned_by_play"]["trained"] == original.get("created") and active["created"] >= before
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
