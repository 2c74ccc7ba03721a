"""Expert for ``deadly_corridor``: shoot the gunmen that can see the player, otherwise run for the armour vest."""

from __future__ import annotations

from typing import Any, ClassVar

from golem.experts import base_actor_name
from golem_experts.defend_the_center import DefendTheCenterExpert
from golem_experts.geometry import Segment, distance, line_of_sight, relative_bearing, solid_walls, turn_toward
from golem_experts.privileged import enable_sectors, objects_named, player_pose

MONSTERS = ("Zombieman", "ShotgunGuy", "ChaingunGuy")
#: Map units a gunman's cost is lowered by, by how hard it hits: the chaingunner first, then the shotgunner.
DANGER = {"ChaingunGuy": 300.0, "ShotgunGuy": 150.0, "Zombieman": 0.0}
GOALS = ("GreenArmor",)
#: A visible gunman closer than this (map units) is fought standing; farther ones are shot on the run.
ENGAGE = 400.0
#: Bearing error (degrees) to the vest under which the expert stops turning toward it.
GOAL_DEADBAND = 2.0


class DeadlyCorridorExpert(DefendTheCenterExpert):
    """The :class:`DefendTheCenterExpert` aim-and-tap loop, limited to gunmen in sight, plus a run to the vest.

    Sight lines are tested against the one-sided walls of ``state.sectors``
    (the alcoves' two-sided lines stop walking, not bullets); among those the
    harder-hitting gunmen come first (:data:`DANGER`). While a visible
    gunman is within :data:`ENGAGE` the expert stands and shoots; otherwise it
    runs down the corridor, shooting at whatever it sees on the way, and turns
    toward the vest when nothing is in sight.
    """

    name: ClassVar[str] = "deadly_corridor"
    scenarios: ClassVar[tuple[str, ...]] = ("deadly_corridor",)
    monsters: ClassVar[tuple[str, ...]] = MONSTERS

    def configure(self, game: Any) -> None:
        super().configure(game)
        enable_sectors(game)

    def reset(self, game: Any) -> None:
        super().reset(game)
        self._walls: list[Segment] | None = None
        self._seen: list[Any] = []

    def target_score(self, monster: Any, dist: float, error: float) -> float | None:
        if not any(m.id == monster.id for m in self._seen):
            return None
        score = super().target_score(monster, dist, error)
        return None if score is None else score - DANGER.get(base_actor_name(monster.name), 0.0)

    def act(self, game: Any, state: Any) -> list[int]:
        if self._walls is None:
            self._walls = solid_walls(state.sectors)
        pose = player_pose(game)
        self._seen = [
            o
            for o in objects_named(state, *MONSTERS)
            if line_of_sight(self._walls, pose.x, pose.y, o.position_x, o.position_y)
        ]
        aim = super().act(game, state)
        nearest = min((distance(pose.x, pose.y, o.position_x, o.position_y) for o in self._seen), default=None)
        if nearest is not None and nearest < ENGAGE:
            return aim
        if nearest is not None:
            return [a | f for a, f in zip(aim, self.press("MOVE_FORWARD"), strict=True)]
        goals = objects_named(state, *GOALS)
        if not goals:
            return self.press("MOVE_FORWARD")
        err = relative_bearing(pose.x, pose.y, pose.angle, goals[0].position_x, goals[0].position_y)
        turn = turn_toward(err, GOAL_DEADBAND)
        return self.press("MOVE_FORWARD", turn) if turn else self.press("MOVE_FORWARD")
