"""Keeping the best by play: a better candidate is kept only when fresh seeds confirm the gain (no engine:
play is replaced by fixed returns)."""

from __future__ import annotations

from pathlib import Path

import pytest

from golem.settings import GolemSettings
from golem_rl.selection import EVAL_START_SEED, BestByPlay
from golem_rl.settings import RLSettings


def keeper(monkeypatch, returns: dict[str, list[float]], confirm: int = 4) -> tuple[BestByPlay, list]:
    rl = RLSettings(eval_episodes=4, confirm_episodes=confirm)
    best = BestByPlay(GolemSettings(), None, "basic", rl, None, threads=1)  # type: ignore[arg-type]
    played = []

    def play(path, seeds):
        played.append((Path(path).name, seeds[0]))
        key = Path(path).name + ("" if seeds[0] == EVAL_START_SEED else "@fresh")
        return returns[key][: len(seeds)]

    monkeypatch.setattr(best, "play", play)
    return best, played


def test_a_candidate_confirmed_on_fresh_seeds_is_kept(monkeypatch):
    best, played = keeper(
        monkeypatch,
        {"src": [0, 0, 0, 0], "src@fresh": [0, 1, 0, 1], "c": [5, 5, 5, 5], "c@fresh": [5, 6, 4, 5]},
    )
    assert best.start(Path("src")).mean == 0
    verdict = best.consider(Path("c"), update=10, frames=640)
    assert verdict.kept and verdict.confirmation["confirmed"]
    assert verdict.confirmation["seeds"] == [EVAL_START_SEED + 4, EVAL_START_SEED + 7]
    assert ("src", EVAL_START_SEED + 4) in played  # the best so far replays the same fresh seeds


def test_a_lucky_candidate_that_fresh_seeds_do_not_confirm_is_not_kept(monkeypatch):
    best, _ = keeper(
        monkeypatch, {"src": [0, 0, 0, 0], "src@fresh": [3, 0, 3, 0], "c": [5, 5, 5, 5], "c@fresh": [0, 3, 0, 3]}
    )
    best.start(Path("src"))
    verdict = best.consider(Path("c"), update=10, frames=640)
    assert not verdict.kept and not verdict.confirmation["confirmed"]
    assert best.best_path == Path("src")


def test_a_worse_candidate_plays_no_confirmation_and_each_confirmation_has_fresh_seeds(monkeypatch):
    best, played = keeper(
        monkeypatch,
        {"src": [1, 1, 1, 1], "c": [0, 0, 0, 0], "d": [9, 9, 9, 9], "d@fresh": [9, 9, 9, 8], "src@fresh": [1, 1, 1, 2]},
    )
    best.start(Path("src"))
    assert not best.consider(Path("c"), 1, 64).kept and len(played) == 2
    first = best.consider(Path("d"), 2, 128)
    best.accept(Path("d-archive"), first)
    assert best.best_path == Path("d-archive")
    fresh = sorted({seed for _, seed in played if seed != EVAL_START_SEED})
    assert fresh == [EVAL_START_SEED + 4]


@pytest.mark.parametrize("confirm", [0])
def test_without_confirmation_the_held_out_score_decides(monkeypatch, confirm):
    best, _ = keeper(monkeypatch, {"src": [0, 0, 0, 0], "c": [1, 1, 1, 1]}, confirm=confirm)
    best.start(Path("src"))
    verdict = best.consider(Path("c"), 3, 192)
    assert verdict.kept and verdict.confirmation is None
