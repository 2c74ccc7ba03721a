"""Checkpoints: safetensors + metadata, Adam state round trip, presets."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from golem.errors import GolemError
from golem_worldmodel.checkpoints import load_optimizer, load_part, progress_of, save_part
from golem_worldmodel.presets import PRESETS, Preset, get_preset


def test_part_and_adam_state_round_trip(tmp_path: Path, rnn):
    opt = torch.optim.Adam(rnn.parameters(), lr=1e-3)
    loss = sum(p.square().sum() for p in rnn.parameters())
    loss.backward()
    opt.step()
    path = tmp_path / "m.safetensors"
    save_part(path, "mdnrnn", {"hidden": rnn.hidden}, rnn.state_dict(), {"epochs": 3}, opt)
    assert progress_of(path) == {"epochs": 3}
    state, meta, opt_state = load_part(path, "mdnrnn")
    assert meta["spec"] == {"model": "mdnrnn", "config": {"hidden": rnn.hidden}}
    for k, v in rnn.state_dict().items():
        torch.testing.assert_close(state[k], v)
    fresh = torch.optim.Adam(rnn.parameters(), lr=1e-3)
    assert load_optimizer(fresh, opt_state, meta["optim"])
    a, b = opt.state_dict()["state"], fresh.state_dict()["state"]
    for pid in a:
        torch.testing.assert_close(a[pid]["exp_avg"], b[pid]["exp_avg"])
        assert float(a[pid]["step"]) == float(b[pid]["step"])
    with pytest.raises(GolemError, match="expected 'vae'"):
        load_part(path, "vae")
    assert not list(tmp_path.glob("*.tmp"))  # atomic write leaves no temporary behind


def test_presets():
    assert set(PRESETS) == {"tiny", "cpu", "paper"}
    paper = get_preset("paper")
    assert (paper.z_dim, paper.hidden, paper.gaussians, paper.population, paper.rollouts) == (64, 512, 5, 64, 16)
    assert Preset.from_dict(paper.to_dict()) == paper
    assert get_preset("cpu").with_overrides(generations=3, population=None).generations == 3
    with pytest.raises(GolemError, match="unknown preset"):
        get_preset("gpu")
    with pytest.raises(GolemError, match="unknown preset field"):
        paper.with_overrides(nope=1)


def test_presets_are_a_settings_section():
    from golem.errors import SettingsError
    from golem.settings import load_settings
    from golem_worldmodel.presets import preset_from_settings

    settings = load_settings(overrides=[("flag --set", {"dream.preset": "tiny", "dream.generations": 5})], environ={})
    resolved = preset_from_settings(settings.settings)
    assert resolved.name == "tiny" and resolved.generations == 5 and resolved.episodes == get_preset("tiny").episodes
    assert preset_from_settings(settings.settings, generations=7).generations == 7  # a command's option wins
    assert preset_from_settings(load_settings(environ={}).settings).name == "cpu"  # the default
    rows = {key: source for key, _, source in settings.rows()}
    assert rows["dream.preset"] == "flag --set" and rows["dream.vae_epochs"] == "default"
    env = load_settings(environ={"GOLEM_DREAM__VAE_EPOCHS": "3", "GOLEM_LOAD_PLUGINS": "x", "GOLEM_OTHER_TOOL": "1"})
    assert preset_from_settings(env.settings).vae_epochs == 3  # other GOLEM_* variables are ignored, as before
    with pytest.raises(SettingsError, match="unknown setting 'dream.bogus'"):
        load_settings(overrides=[("flag --set", {"dream.bogus": 1})], environ={})
    with pytest.raises(SettingsError, match="dream.generations"):
        load_settings(overrides=[("flag --set", {"dream.generations": "many"})], environ={})
    with pytest.raises(GolemError, match="unknown preset 'gpu'"):
        preset_from_settings(load_settings(overrides=[("flag --set", {"dream.preset": "gpu"})], environ={}).settings)
