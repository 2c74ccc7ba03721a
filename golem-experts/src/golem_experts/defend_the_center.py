"""Expert for ``defend_the_center``: turn to the most urgent monster, fire single aimed shots."""

from __future__ import annotations

from typing import Any, ClassVar

from vizdoom import GameVariable

from golem.experts import Expert, base_actor_name
from golem_experts.geometry import aim_tolerance, distance, relative_bearing, turn_deadband, turn_toward
from golem_experts.privileged import enable_objects, player_pose

MONSTERS = ("Demon", "MarineChainsawVzd")
#: Half-width (map units) of the part of a monster the aim must fall within (bodies are 20–30).
AIM_RADIUS = 6.0
#: Smallest bearing error (degrees) treated as on target: one slow turn tic is ~1.76°.
AIM_FLOOR = 0.9
#: Tics (not decisions) to keep ATTACK released after a shot, so the next one is a first (accurate) shot.
COOLDOWN = 8
#: Map units of distance that weigh as much as one degree of turning when picking a target.
UNITS_PER_DEGREE = 1.0


class DefendTheCenterExpert(Expert):
    """Picks the monster cheapest in distance-plus-turn, aims at it and taps ATTACK.

    A target is locked from the press until the shot leaves (the ammo count
    drops: the pistol fires a few tics after it takes the press), and the aim
    keeps tracking it meanwhile. (Walking monsters report zero velocity, so
    there is nothing to lead.)
    """

    name: ClassVar[str] = "defend_the_center"
    scenarios: ClassVar[tuple[str, ...]] = ("defend_the_center",)
    #: Object names the expert shoots at.
    monsters: ClassVar[tuple[str, ...]] = MONSTERS

    def configure(self, game: Any) -> None:
        enable_objects(game)

    def reset(self, game: Any) -> None:
        self._ammo = game.get_game_variable(GameVariable.AMMO2)
        self._cooldown = 0
        self._locked: int | None = None

    def shot_left(self, ammo: float) -> bool:
        """Whether the last tic's shot has left, from the ammo count now (rounds) and before."""
        return ammo < self._ammo

    def target_score(self, monster: Any, dist: float, error: float) -> float | None:
        """Cost of turning to ``monster`` (a ``state.objects`` entry) at ``dist`` map units and
        ``error`` degrees, lower first; ``None`` leaves it alone."""
        return dist + UNITS_PER_DEGREE * abs(error)

    def act(self, game: Any, state: Any) -> list[int]:
        ammo = game.get_game_variable(GameVariable.AMMO2)
        if self.shot_left(ammo):
            self._cooldown = COOLDOWN
            self._locked = None
        self._ammo = ammo
        self._cooldown = max(0, self._cooldown - self.hold)
        pose = player_pose(game)
        best: tuple[float, int, float, float] | None = None
        for o in state.objects:
            if base_actor_name(o.name) not in self.monsters:
                continue
            tx, ty = o.position_x, o.position_y
            d = distance(pose.x, pose.y, tx, ty)
            err = relative_bearing(pose.x, pose.y, pose.angle, tx, ty)
            score = self.target_score(o, d, err)
            if score is None:
                continue
            if o.id == self._locked and abs(err) < 10.0:
                score = -1.0
            if best is None or score < best[0]:
                best = (score, o.id, d, err)
        if best is None:
            self._locked = None
            return self.press()
        _, target, d, err = best
        floor = turn_deadband(self.hold, AIM_FLOOR)
        turn = turn_toward(err, floor)
        if self._locked is not None and target == self._locked:
            # Shot under way: hold ATTACK (the bullet leaves a few tics after the weapon
            # takes the press) and keep the aim on the locked target.
            return self.press("ATTACK", turn) if turn else self.press("ATTACK")
        self._locked = None
        if abs(err) <= aim_tolerance(d, AIM_RADIUS, floor=floor) and self._cooldown == 0 and ammo > 0:
            self._locked = target
            return self.press("ATTACK")
        return self.press(turn) if turn else self.press()
