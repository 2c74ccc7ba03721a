"""Which checkpoint a scoreboard row plays (pure logic; `tests/test_zoo.py` runs a row end to end)."""

from __future__ import annotations


def test_the_board_plays_what_the_user_gets_after_the_rows_stages() -> None:
    """A spec's in-training threshold search makes the tuned archive the active model: the board plays it
    (it played the untuned archive, so defend_the_center's rows scored thresholds no user plays)."""
    from golem_cli.zoo import played_checkpoint

    trained = {"archive": "a.safetensors", "tuned": {"accepted": True, "archive": "a-tuned.safetensors"}}
    assert played_checkpoint(trained, None) == "a-tuned.safetensors"
    refuted = {"archive": "a.safetensors", "tuned": {"accepted": False, "archive": None}}
    assert played_checkpoint(refuted, None) == "a.safetensors"
    assert played_checkpoint({"archive": "a.safetensors", "tuned": None}, None) == "a.safetensors"
    assert played_checkpoint(trained, {"archive": "b-tuned.safetensors"}) == "b-tuned.safetensors"
    assert played_checkpoint(trained, {"archive": None}) == "a-tuned.safetensors"
