"""`golem zoo` end to end at tiny size on `basic`: a row in zoo.json's format, then a re-run that skips every stage."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from golem.data.store import TrajectoryStore

pytestmark = [pytest.mark.engine, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
TINY = [
    "--eval-episodes",
    "2",
    "--workers",
    "1",
    "--set",
    "training.updates=20",
    "--set",
    "training.batch_size=4",
    "--set",
    "training.sequence_length=5",
]


def _seeds(work: Path) -> list[int]:
    with TrajectoryStore.open(work / "stores" / "demos") as store:
        return sorted(int(i.meta.seed) for i in store.episodes())  # type: ignore[arg-type]


def test_a_row_runs_resumes_and_keeps_the_scoreboards_format(golem_cli, tmp_path: Path):
    work = tmp_path / "work"
    first = golem_cli(["zoo", "basic", "--episodes", "3", *TINY, "--dir", str(work), "--json", "row.json"], check=True)
    row = json.loads((tmp_path / "row.json").read_text())
    board = json.loads((ROOT / "bench" / "results" / "zoo.json").read_text())
    assert set(row) == set(board["defend_the_center/cfc"]), set(row) ^ set(board["defend_the_center/cfc"])
    assert row["scenario"] == "basic" and row["model"] == "cfc" and row["recorded_episodes"] == 3
    assert row["updates"] == 20 and row["eval_episodes"] == 2 and row["frame_skip"] == 1
    assert set(row["return"]) == {"model", "random", "expert"} and row["measure"]["label"] == "return"
    assert row["settings"] == ["training.updates=20", "training.batch_size=4", "training.sequence_length=5"]
    assert "basic/cfc" in first.stdout and "skipped" not in first.stderr
    assert _seeds(work) == [0, 1, 2]

    started = time.monotonic()
    again = golem_cli(
        ["zoo", "basic", "--episodes", "3", *TINY, "--dir", str(work), "--json", "again.json"], check=True
    )
    assert time.monotonic() - started < 20  # no engine, no training: the state file answers
    for stage in ("record", "train", "evaluate"):
        assert f"{stage}: " in again.stderr and "skipped: done before" in again.stderr, again.stderr
    assert json.loads((tmp_path / "again.json").read_text()) == row

    # one more episode asked for: recording continues after the stored seeds, and what depends on it runs again
    more = golem_cli(["zoo", "basic", "--episodes", "4", *TINY, "--dir", str(work), "--json", "more.json"], check=True)
    assert "record: 4 episodes stored (skipped" not in more.stderr
    assert _seeds(work) == [0, 1, 2, 3]
    grown = json.loads((tmp_path / "more.json").read_text())
    assert grown["recorded_episodes"] == 4 and grown["frames"] > row["frames"]
    state = json.loads((work / "zoo-state.json").read_text())
    assert set(state["stages"]) == {"record", "train", "evaluate"}
