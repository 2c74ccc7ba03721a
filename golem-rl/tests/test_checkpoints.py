"""Fine-tuned checkpoints: the source's metadata plus where they came from; ordinary files otherwise."""

from __future__ import annotations

from golem.learning.checkpoints import checkpoint_sha256, load_checkpoint, save_checkpoint
from golem.runtime.agent import samples_buttons
from golem.settings import GolemSettings
from golem_rl.checkpoints import finetuned_metadata, save_finetuned


def test_the_metadata_says_what_was_fine_tuned_and_keeps_the_source(tmp_path, model):
    source_extra = {"data": {"scenario": "basic", "frame_skip": 1}, "thresholds": {"ATTACK": 0.3}, "created": "then"}
    source = save_checkpoint(tmp_path / "bc.safetensors", model, model.spec.to_metadata(), source_extra)
    _, meta = load_checkpoint(source)
    extra = finetuned_metadata(
        source,
        meta,
        rl={"kl_coef": 0.2},
        frames=640,
        frame_skip=4,
        scenario="basic",
        thresholds=None,
        evaluation={"update": 3, "mean": 1.5},
    )
    assert extra["finetuned_from"] == {"sha256": checkpoint_sha256(source), "file": "bc.safetensors", "created": "then"}
    assert extra["data"] == {"scenario": "basic", "frame_skip": 4}  # play decides as often as fine-tuning did
    assert extra["thresholds"] == {"ATTACK": 0.3} and extra["frames"] == 640 and extra["rl"] == {"kl_coef": 0.2}
    settings = GolemSettings()
    settings.data.root = tmp_path / "data"
    archive, active = save_finetuned(settings, model.state_dict(), model.spec, extra, tail="-last")
    assert active is None and archive.name.endswith(f"-{model.spec.model}-rl-last.safetensors")
    state, written = load_checkpoint(archive)
    assert written["evaluation"] == {"update": 3, "mean": 1.5} and set(state) == set(model.state_dict())
    mode = finetuned_metadata(
        source, meta, rl={}, frames=0, frame_skip=1, scenario="basic", thresholds={"ATTACK": 0.5}, evaluation=None
    )
    assert mode["thresholds"] == {"ATTACK": 0.5} and mode["activation"] == 0.5
    assert not samples_buttons(extra) and extra["decisions"] == "threshold"
    drawn = finetuned_metadata(
        source,
        meta,
        rl={},
        frames=0,
        frame_skip=1,
        scenario="basic",
        thresholds=None,
        evaluation=None,
        decisions="sample",
    )
    assert samples_buttons(drawn)  # play draws the buttons as the rollouts did
