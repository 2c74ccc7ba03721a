"""The README's fine-tuning headline (`bench/bench_finetune.py`): the best kept run per scenario, against its target."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.fixture(scope="module")
def bench_finetune():
    sys.path.insert(0, str(BENCH))
    try:
        import bench_finetune

        yield bench_finetune
    finally:
        sys.path.remove(str(BENCH))


def policy(kills: float) -> dict:
    return {"kills": {"mean": kills}, "return": {"mean": kills - 1}, "tics": {"mean": 100 * kills}}


def run(bc: float | None, kept: float, kept_update: int, frames: int) -> dict:
    policies = {"bc_rl_kept": policy(kept), "bc_rl_last": policy(kept - 5)}
    if bc is not None:
        policies["bc"] = policy(bc)
    evaluations = [{"update": 0, "frames": 0}, {"update": 20, "frames": 10_240}, {"update": 40, "frames": 20_480}]
    return {
        "frames": frames,
        "policies": policies,
        "runs": {"bc_rl": {"kept_update": kept_update, "evaluations": evaluations}},
    }


def test_the_best_kept_run_is_shown_with_the_gain_over_its_own_source(bench_finetune):
    results = {
        "scenarios": {
            "defend_the_center": run(14.0, 20.0, 20, 300_000),
            # a better kept score from a stronger source: its gain is over that source, not the untagged one's
            "defend_the_center (other source)": run(18.0, 21.0, 40, 600_000),
            # a tagged run without its own cloned row takes the untagged one's
            "defend_the_center (no bc)": run(None, 15.0, 20, 300_000),
        }
    }
    rows = bench_finetune.headline(results).splitlines()[2:]
    assert rows == [
        "| `defend_the_center` | kills | 18 | **21** | +3 | 20,480 (600,000) | 3 | ≥ 25 (Sample Factory's APPO 24–25) |"
    ]


def test_a_run_that_kept_its_source_and_a_met_target_say_so(bench_finetune):
    results = {
        "scenarios": {
            "take_cover": run(8.0, 8.0, 0, 300_000),  # tics 800 → 800: nothing kept
            "health_gathering_supreme": run(16.0, 18.0, 20, 1_000_000),  # tics 1,600 → 1,800 ≥ 1,700
        }
    }
    hgs, tc = bench_finetune.headline(results).splitlines()[2:]
    assert tc.startswith("| `take_cover` | tics | 800 | **800** | +0 | the cloned model (300,000) | 1 |")
    assert hgs.endswith("| 10,240 (1,000,000) | 1 | ≥ 1700 — met |")
