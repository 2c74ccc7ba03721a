"""Readers of the engine's privileged state shared by the experts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vizdoom import GameVariable


@dataclass(frozen=True)
class Pose:
    """The player's position (map units) and heading (degrees, 0 = +x, counter-clockwise)."""

    x: float
    y: float
    angle: float


def player_pose(game: Any) -> Pose:
    """The player's pose, read from the engine's game variables."""
    return Pose(
        game.get_game_variable(GameVariable.POSITION_X),
        game.get_game_variable(GameVariable.POSITION_Y),
        game.get_game_variable(GameVariable.ANGLE),
    )


def objects_named(state: Any, *names: str) -> list[Any]:
    """Objects of ``state.objects`` whose name is one of ``names``."""
    return [o for o in state.objects if o.name in names]


def enable_objects(game: Any) -> None:
    """Switch on ``state.objects`` (call before ``init()``)."""
    game.set_objects_info_enabled(True)


def enable_sectors(game: Any) -> None:
    """Switch on ``state.sectors`` (call before ``init()``)."""
    game.set_sectors_info_enabled(True)
