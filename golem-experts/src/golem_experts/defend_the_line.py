"""Expert for ``defend_the_line``: shoot the imps first, then the charging demons, strafing clear of fireballs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from golem.experts import base_actor_name
from golem_experts.defend_the_center import UNITS_PER_DEGREE, DefendTheCenterExpert
from golem_experts.privileged import enable_sectors
from golem_experts.take_cover import TakeCoverExpert

#: The fireball throwers, shot before anything else (their fireballs are what kills the player).
IMPS = ("DoomImp",)
MONSTERS = (*IMPS, "Demon")
#: Map units an imp's cost is lowered by, so it is picked over a demon unless the demon is this much closer.
IMP_BONUS = 400.0
#: The pistol's bullet capacity, rounds: below it the scenario adds one round per tic.
MAX_BULLETS = 200.0


class DefendTheLineExpert(DefendTheCenterExpert):
    """The :class:`DefendTheCenterExpert` aim-and-tap loop, with the :class:`TakeCoverExpert` dodge for the feet.

    Imps rank ahead of demons. Turning and ATTACK come from the aim loop, the
    strafe and step buttons from the fireball dodge (the room is laid out like
    ``take_cover``'s: the player at the back wall, the imps across the room).
    The scenario refills bullets by one round per tic up to
    :data:`MAX_BULLETS`, so a shot shows as the count not rising.
    """

    name: ClassVar[str] = "defend_the_line"
    scenarios: ClassVar[tuple[str, ...]] = ("defend_the_line",)
    monsters: ClassVar[tuple[str, ...]] = MONSTERS

    def __init__(self, action_names: Sequence[str], settings: Any = None) -> None:
        super().__init__(action_names, settings)
        self._dodge = TakeCoverExpert(action_names, settings)

    def configure(self, game: Any) -> None:
        super().configure(game)
        enable_sectors(game)

    def reset(self, game: Any) -> None:
        super().reset(game)
        self._dodge.reset(game)

    def shot_left(self, ammo: float) -> bool:
        return ammo < self._ammo or (ammo == self._ammo and ammo < MAX_BULLETS)

    def target_score(self, monster: Any, dist: float, error: float) -> float | None:
        bonus = IMP_BONUS if base_actor_name(monster.name) in IMPS else 0.0
        return dist + UNITS_PER_DEGREE * abs(error) - bonus

    def act(self, game: Any, state: Any) -> list[int]:
        aim = super().act(game, state)
        feet = self._dodge.act(game, state)
        return [a | f for a, f in zip(aim, feet, strict=True)]
