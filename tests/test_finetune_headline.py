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


def maps_policy(exits: float) -> dict:
    return {
        "goal_rate": exits,
        "episodes": 50,
        "death_rate": 0.08,
        "tics": {"mean": 1484.7},
        "return": {"mean": exits - 0.1, "std": 0.5},
        "normalised": None,
    }


def test_generated_maps_are_judged_by_their_exits_against_the_phase_target(bench_finetune):
    row = run(None, 0.0, 40, 1_000_000)
    row["procgen"] = {"phase": 1, "generator": "builtin", "maps": 50}
    row["policies"] = {"bc": maps_policy(0.16), "bc_rl_kept": maps_policy(0.6), "bc_rl_last": maps_policy(0.22)}
    row["policies"]["bc:sample"] = maps_policy(0.26)  # the source played the other way; the last weights were not
    row["runs"]["bc_rl"]["frames_per_s_median"] = 667.6
    results = {"scenarios": {"defend_the_center": run(14.0, 20.0, 20, 300_000), "phase-1 maps (explore 0.01)": row}}
    _, line = bench_finetune.headline(results).splitlines()[2:]
    assert line == "| `phase-1 maps` | exits % | 16 | **60** | +44 | 20,480 (1,000,000) | 1 | ≥ 80 (unseen maps) |"
    shown = bench_finetune.table({"scenarios": {"phase-1 maps (explore 0.01)": row}}).splitlines()[2:]
    assert shown[1] == (
        "| `phase-1 maps (explore 0.01)` | 1000000 | BC + RL (kept by play) | 0.50 ± 0.50 (exits 60 %) | – |"
    )
    # the maps' own table: one row per run, exits ± a binomial standard error (0.6 of 50: ± 7 points)
    assert bench_finetune.maps_table(results).splitlines()[2:] == [
        "| phase-1 maps, 50 unseen | explore 0.01 | 1,000,000 | **16 % ± 5** · 26 % ± 6 | **60 % ± 7** · – "
        "| 8 %, 1,485 | 20,480 | **22 % ± 6** · – | 668 |"
    ]
