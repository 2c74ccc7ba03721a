"""The learning check: a model trained on the ``basic`` expert's play predicts its buttons.

240 expert episodes of ``basic`` (about 11 tics each: strafe+turn toward the
monster, then fire) are recorded by the real engine; a small CfC is trained for
a few epochs of CPU (L=5, B=16, the default focal loss); the validation F1 of
each button the expert uses must beat the best constant predictor's by far,
and the loss must fall.

The best constant predictor of a button pressed on a share ``p < 0.5`` of the
steps is "always pressed": precision ``p``, recall 1, so

    F1_const = 2p / (1 + p)

(``never pressed`` has F1 = 0). On this data p is about 0.37 for ATTACK
(F1_const ≈ 0.54), 0.40 for TURN_RIGHT (≈ 0.58) and 0.20 for TURN_LEFT (≈ 0.33).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.engine]

#: Buttons the basic expert presses (MOVE_LEFT/RIGHT mirror TURN_LEFT/RIGHT exactly).
USED = ("ATTACK", "TURN_LEFT", "TURN_RIGHT")


def constant_f1(p: float) -> float:
    """F1 of the best constant predictor for a button pressed on a share ``p`` of the steps."""
    return max(2 * p / (1 + p), 0.0)


def test_basic_expert_is_learned(golem_cli, tmp_path: Path) -> None:
    store = tmp_path / "basic"
    golem_cli(
        ["run", "record", "--expert", "basic", "-n", "240", "--workers", "2", "--store", str(store)],
        check=True,
        timeout=300,
    )
    shares = json.loads(golem_cli(["run", "inspect", "--store", str(store), "--json"], check=True).stdout)["actions"]
    for name in USED:
        assert 0.05 < shares[name]["share"] < 0.5, (name, shares[name])  # the expert does use it, as a minority

    proc = golem_cli(
        [
            "--log-level",
            "warning",
            "run",
            "train",
            "--store",
            str(store),
            "--set",
            f"data.root={tmp_path}",
            "--set",
            "training.sequence_length=5",
            "--set",
            "training.batch_size=16",
            "--set",
            "training.min_updates=0",
            "--epochs",
            "5",
            "--seed",
            "0",
            "--device",
            "cpu",
            "--json",
        ],
        check=True,
        timeout=600,
    )
    out = json.loads(proc.stdout)
    val = out["validation"]
    history = out["history"]

    report = {}
    for name in USED:
        score = val["actions"][name]
        p = score["support"] / val["steps"]
        baseline = constant_f1(p)
        report[name] = (round(score["f1"] or 0.0, 3), round(baseline, 3))
        assert score["f1"] is not None and score["f1"] >= max(baseline + 0.25, 0.75), (
            f"{name}: validation F1 {score['f1']} vs constant predictor {baseline:.3f} (p={p:.3f}); all: {report}"
        )
    first, last = history[0], history[-1]
    assert last["train_loss"] < 0.5 * first["train_loss"], [h["train_loss"] for h in history]
    # Training keeps the epoch that validates best; a later epoch may wobble (thread counts change the sums).
    best = min(h["validation"]["loss"] for h in history)
    assert best < 0.5 * first["validation"]["loss"], [h["validation"]["loss"] for h in history]
    assert val["loss"] == pytest.approx(best, rel=1e-6), (val["loss"], best)  # the kept model is the best epoch
    assert val["exact_match"] >= 0.7, val["exact_match"]
    assert val["loss"] < 0.5 * val["constant_loss"], (val["loss"], val["constant_loss"])  # far below rates-only
    print(
        f"F1 (model, constant predictor): {report}; exact match {val['exact_match']:.3f}; "
        f"train loss {first['train_loss']:.4f} → {last['train_loss']:.4f}; {out['seconds']:.0f} s"
    )
