"""Expert for deathmatch (``cig``, ``multi_duel``; ``deathmatch``'s monsters): roam, turn to the nearest visible foe, shoot.

It reads the engine's labels (which players are on screen, and where), so its
demonstrations in ``golem run match --agents expert:deathmatch --record`` are
``source = expert``. It only sees what is on screen, as the agent does; the
labels just spare it the vision.
"""

from __future__ import annotations

from typing import Any, ClassVar

from vizdoom import GameVariable

from golem.experts import Expert

#: Label names of players (people, agents and the engine's bots alike).
PLAYER_LABELS = ("DoomPlayer", "Player")
#: Label names of Doom's monsters (cooperative play, the single-player ``deathmatch`` scenario).
MONSTER_LABELS = (
    "Zombieman", "ShotgunGuy", "ChaingunGuy", "DoomImp", "Demon", "Spectre", "LostSoul", "Cacodemon",
    "HellKnight", "BaronOfHell", "Arachnotron", "PainElemental", "Revenant", "Fatso", "Archvile",
    "SpiderMastermind", "Cyberdemon", "WolfensteinSS", "MarineChainsawVzd",
)
FOES = PLAYER_LABELS + MONSTER_LABELS
#: Fraction of the screen width around the centre counted as on target.
AIM_BAND = 0.04
#: Tics without moving more than :data:`STUCK_UNITS` map units that mean a wall is in the way.
STUCK_TICS = 8
STUCK_UNITS = 4.0
#: Tics spent turning away from a wall.
TURN_TICS = 12


class DeathmatchExpert(Expert):
    """Roams forward, turns away from walls it is stuck on, and shoots the largest (nearest) visible foe:
    another player, or a monster."""

    name: ClassVar[str] = "deathmatch"
    scenarios: ClassVar[tuple[str, ...]] = ("cig", "multi_duel", "deathmatch")

    def configure(self, game: Any) -> None:
        game.set_labels_buffer_enabled(True)
        game.set_objects_info_enabled(True)  # only to tell its own body's label from the others'

    def reset(self, game: Any) -> None:
        self._trail: list[tuple[float, float]] = []
        self._turning = 0
        self._turn = "TURN_RIGHT"
        self._t = 0

    def _target(self, state: Any, x: float, y: float) -> tuple[float, float] | None:
        """``(x offset from the screen centre as a fraction of the width, label area)`` of the nearest foe on
        screen, the player standing at ``(x, y)`` excluded (the engine labels its own body too)."""
        buffer = getattr(state, "labels_buffer", None)
        if buffer is None or not state.labels:
            return None
        own = {o.id for o in (state.objects or ()) if o.name in PLAYER_LABELS
               and abs(o.position_x - x) < 1.0 and abs(o.position_y - y) < 1.0}
        width = float(buffer.shape[-1])
        best: tuple[float, float] | None = None
        for label in state.labels:
            if label.object_name not in FOES or label.object_id in own:
                continue
            area = float(label.width * label.height)
            centre = (label.x + label.width / 2.0) / width - 0.5
            if best is None or area > best[1]:
                best = (centre, area)
        return best

    def act(self, game: Any, state: Any) -> list[int]:
        self._t += 1
        x = game.get_game_variable(GameVariable.POSITION_X)
        y = game.get_game_variable(GameVariable.POSITION_Y)
        target = self._target(state, x, y)
        if target is not None:
            offset, _ = target
            if abs(offset) <= AIM_BAND:
                return self.press("ATTACK", "MOVE_FORWARD")
            turn = "TURN_RIGHT" if offset > 0 else "TURN_LEFT"
            return self.press(turn, "ATTACK") if abs(offset) < 2 * AIM_BAND else self.press(turn)
        if self._turning:
            self._turning -= 1
            return self.press(self._turn)
        self._trail = [*self._trail[-(STUCK_TICS - 1):], (x, y)]
        if len(self._trail) == STUCK_TICS:
            (x0, y0) = self._trail[0]
            if abs(x - x0) + abs(y - y0) < STUCK_UNITS:
                self._turning = TURN_TICS
                self._turn = "TURN_LEFT" if (self._t // 97) % 2 else "TURN_RIGHT"
                self._trail = []
                return self.press(self._turn)
        return self.press("MOVE_FORWARD")
