"""Readers of the engine's privileged state shared by the experts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vizdoom import GameVariable

from golem.experts import base_actor_name

#: Doom 2's monsters by actor name (the names ``state.objects`` and ``state.labels`` carry; a variant's
#: replacements read back through :func:`golem.experts.base_actor_name`).
DOOM_MONSTERS = frozenset(
    {
        "Zombieman",
        "ShotgunGuy",
        "ChaingunGuy",
        "DoomImp",
        "Demon",
        "Spectre",
        "LostSoul",
        "Cacodemon",
        "HellKnight",
        "BaronOfHell",
        "Arachnotron",
        "PainElemental",
        "Revenant",
        "Fatso",
        "Archvile",
        "SpiderMastermind",
        "Cyberdemon",
        "WolfensteinSS",
    }
)


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
    """Objects of ``state.objects`` whose name is one of ``names``, a scenario variant's replacements included
    (:func:`golem.experts.base_actor_name`)."""
    return [o for o in state.objects if base_actor_name(o.name) in names]


def enable_objects(game: Any) -> None:
    """Switch on ``state.objects`` (call before ``init()``)."""
    game.set_objects_info_enabled(True)


def enable_sectors(game: Any) -> None:
    """Switch on ``state.sectors`` (call before ``init()``)."""
    game.set_sectors_info_enabled(True)


class VelocityMeter:
    """The player's velocity in map units per tic, from its pose now and at the last reading.

    Measured over the engine tics between readings, so it reads the same whether the
    expert decides every tic or every ``game.frame_skip`` tics. Zero at the first reading.
    """

    def __init__(self) -> None:
        self._last: tuple[float, float, int] | None = None

    def read(self, pose: Pose, tic: int) -> tuple[float, float]:
        """``(vx, vy)`` in map units per tic at engine tic ``tic``; remembers this reading."""
        last, self._last = self._last, (pose.x, pose.y, int(tic))
        if last is None:
            return 0.0, 0.0
        dt = max(1, int(tic) - last[2])
        return (pose.x - last[0]) / dt, (pose.y - last[1]) / dt
