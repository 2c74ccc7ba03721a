"""What the CLI accepts from a checkpoint file: finite weights, a shipped scenario's name, hashed metadata."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from golem.learning.checkpoints import save_checkpoint
from golem.learning.modelspec import ModelSpec
from golem.plugins import load_plugins
from golem.scenarios import scenarios_dir
from golem.settings import BrainSettings, GolemSettings
from tests.helpers import one_error_line

REGISTRY = load_plugins().registry


def _save(path: Path, *, poison: float | None = None, extra: dict | None = None) -> Path:
    """An untrained ``cfc`` checkpoint for the ``basic`` profile; ``poison`` goes into one weight."""
    torch.manual_seed(0)
    spec = ModelSpec.from_settings(GolemSettings.model_construct(brain=BrainSettings(profile="basic")), REGISTRY)
    model = REGISTRY.get("models", "cfc").obj(spec)
    if poison is not None:
        with torch.no_grad():
            next(model.parameters()).view(-1)[0] = poison
    return save_checkpoint(path, model, spec.to_metadata(), extra)


@pytest.mark.parametrize("value", [float("nan"), float("-inf")])
@pytest.mark.slow
def test_play_refuses_non_finite_weights(golem_cli, tmp_path, value):
    model = _save(tmp_path / "m.safetensors", poison=value)
    line = one_error_line(golem_cli(["run", "play", "--model", str(model), "--scenario", "basic"]))
    assert "non-finite weights" in line and str(model) in line


@pytest.mark.slow
def test_activate_refuses_non_finite_weights_and_keeps_the_active_model(golem_cli, tmp_path):
    models = tmp_path / "golem-data" / "models" / "basic"
    active = _save(models / "active.safetensors")
    before = active.read_bytes()
    bad = _save(models / "archive" / "20260101T000000Z-cfc.safetensors", poison=float("nan"))
    line = one_error_line(golem_cli(["models", "activate", str(bad)]))
    assert "non-finite weights" in line
    assert active.read_bytes() == before


@pytest.mark.engine
def test_play_refuses_a_scenario_path_from_the_checkpoint(golem_cli, tmp_path):
    config = tmp_path / "elsewhere" / "x.cfg"
    config.parent.mkdir()
    config.write_text(
        (scenarios_dir() / "basic.cfg").read_text().replace("basic.wad", str(scenarios_dir() / "basic.wad"))
    )
    model = _save(tmp_path / "m.safetensors", extra={"scenario": os.path.relpath(config, tmp_path)})
    line = one_error_line(golem_cli(["run", "play", "--model", str(model)]))
    assert "not a shipped scenario name" in line and "--scenario elsewhere/x.cfg" in line
    # The same file given on the command line is the user's choice.
    proc = golem_cli(["run", "play", "--model", str(model), "--scenario", str(config), "--max-steps", "5", "--json"])
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["scenario"] == str(config)


@pytest.mark.slow
def test_models_list_removes_temp_files_of_killed_writes_only(golem_cli, tmp_path):
    archive = tmp_path / "golem-data" / "models" / "basic" / "archive"
    _save(archive / "20260101T000000Z-cfc.safetensors")
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = archive / f".20260102T000000Z-cfc.safetensors.golem-{int(gone.stdout)}-a1b2c3d4.tmp"
    live = archive / f".20260103T000000Z-cfc.safetensors.golem-{os.getpid()}-e5f6g7h8.tmp"
    for temp in (stale, live):
        temp.write_bytes(b"half written")
    proc = golem_cli(["models", "list", "--json"])
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)) == 1
    assert not stale.exists() and live.exists()


def test_trained_scenario_takes_names_and_refuses_paths() -> None:
    """Every command that defaults to a checkpoint's scenario (play, evaluate, tune, intervene) reads it here."""
    from golem.errors import GolemError
    from golem.runtime.agent import trained_scenario

    assert trained_scenario({"data": {"scenario": "take_cover"}}, "m.safetensors") == "take_cover"
    assert trained_scenario({"data": {"module": "basic"}}) == "basic"
    assert trained_scenario({"data": {"module": "my-tag"}}) is None
    for metadata in ({"scenario": "../evil.cfg"}, {"data": {"scenario": "/tmp/x/evil.cfg"}}):
        with pytest.raises(GolemError, match="m.safetensors names scenario") as err:
            trained_scenario(metadata, "m.safetensors")
        assert "\n" not in str(err.value)
