"""The ``explore`` reward shaper: pure logic on game-variable readings (the engine path is in ``test_rl``)."""

from __future__ import annotations

from golem_rl.shapers import Explore, Shaping


def _at(x: float, y: float) -> dict[str, float]:
    return {"POSITION_X": x, "POSITION_Y": y}


def test_explore_pays_once_for_each_new_square_of_an_episode() -> None:
    explore = Explore()
    assert explore(_at(10, 10), _at(40, 20)) == 0.0  # still in the start's 64-unit square
    assert explore(_at(40, 20), _at(70, 20)) == 1.0  # the next square east
    assert explore(_at(70, 20), _at(30, 20)) == 0.0  # back in the start's square
    assert explore(_at(30, 20), _at(70, 30)) == 0.0  # east again: seen already
    assert explore(_at(70, 30), _at(70, -10)) == 1.0  # south of the start row (negative coordinates)


def test_a_new_episode_forgets_the_squares_it_saw() -> None:
    shaping = Shaping({"explore": (0.5, Explore())})
    assert shaping.variables == ("POSITION_X", "POSITION_Y")
    assert shaping(_at(0, 0), _at(100, 0)) == 0.5
    assert shaping(_at(100, 0), _at(100, 0)) == 0.0
    shaping.begin()
    assert shaping(_at(0, 0), _at(100, 0)) == 0.5  # paid again: another episode
