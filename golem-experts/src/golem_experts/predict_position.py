"""Expert for ``predict_position``: lead the moving Cacodemon and fire the one rocket at the intercept."""

from __future__ import annotations

import itertools
import math
from collections import deque
from typing import Any, ClassVar

from golem.experts import Expert
from golem_experts.geometry import (
    aim_tolerance,
    bearing,
    distance,
    relative_bearing,
    turn_toward,
    wrap_angle,
)
from golem_experts.privileged import enable_objects, objects_named, player_pose

TARGETS = ("Cacodemon",)
#: The ends of the monster's patrol: it turns (and wanders) there.
LEG_ENDS = ("PatrolPoint",)
#: Rocket speed, map units per tic.
ROCKET_SPEED = 20.0
#: Tics from the ATTACK press until the rocket is, in effect, leaving the player's position.
LAUNCH_DELAY = 7.5
#: The monster steps every STEP tics, so its velocity is measured over whole steps.
STEP = 3
#: Steps that must agree (within STEADY map units) before the walk counts as straight.
STEADY_STEPS = 3
STEADY = 2.0
#: Map units short of a patrol point the monster must still be when the rocket arrives.
LEG_MARGIN = 48.0
#: Largest angle (degrees) between the monster's walk and the direction to a patrol point for the
#: walk to count as a patrol leg; away from the legs it wanders and its course cannot be led.
LEG_CONE = 10.0
#: Tics before the time-out from which any straight walk is shot at (a rocket fired on a wander
#: hits now and then; one never fired never does).
LATE = 90
#: Half-width (map units) of the part of the Cacodemon (radius 31) the aim must fall within.
AIM_RADIUS = 12.0
#: Smallest bearing error (degrees) treated as on target: one slow turn tic is ~1.76°.
AIM_FLOOR = 0.9


class PredictPositionExpert(Expert):
    """Estimates the Cacodemon's walking velocity and aims where rocket and monster meet.

    The monster walks straight legs toward one of two patrol points,
    wandering unpredictably near their ends, and moves in steps of a few
    tics (its reported velocity is zero), so the velocity is the displacement
    over the last few steps, trusted only when they agree. Each tic the
    expert solves for the tic the rocket would reach the monster's
    straight-line position, turns toward that point and fires once it is
    lined up, the monster is on a patrol leg (walking at a patrol point) and
    it will not yet have reached the leg's end (or, :data:`LATE` tics before
    the time-out, on any straight walk). Until the rocket leaves, the
    aim keeps tracking the intercept (the launch takes the heading at that
    moment).
    """

    name: ClassVar[str] = "predict_position"
    scenarios: ClassVar[tuple[str, ...]] = ("predict_position",)

    def configure(self, game: Any) -> None:
        enable_objects(game)

    def reset(self, game: Any) -> None:
        self._track: deque[tuple[float, float]] = deque(maxlen=STEADY_STEPS * STEP + 1)
        self._pressed: int | None = None

    def _velocity(self) -> tuple[float, float] | None:
        """Map units per tic over the last :data:`STEADY_STEPS` steps, or ``None`` until they agree."""
        if len(self._track) < STEADY_STEPS * STEP + 1:
            return None
        points = [self._track[k * STEP] for k in range(STEADY_STEPS + 1)]
        steps = [(b[0] - a[0], b[1] - a[1]) for a, b in itertools.pairwise(points)]
        if steps[0] == (0.0, 0.0):
            return None
        if any(abs(s[0] - steps[0][0]) > STEADY or abs(s[1] - steps[0][1]) > STEADY for s in steps[1:]):
            return None
        (x0, y0), (x1, y1) = points[0], points[-1]
        n = STEADY_STEPS * STEP
        return (x1 - x0) / n, (y1 - y0) / n

    @staticmethod
    def _leg_left(state: Any, x: float, y: float, vx: float, vy: float) -> float | None:
        """Map units the monster at ``(x, y)`` walking ``(vx, vy)`` has left to the patrol point it walks
        toward, or ``None`` when it is not walking toward one (within :data:`LEG_CONE`)."""
        heading = math.degrees(math.atan2(vy, vx))
        left = None
        for p in objects_named(state, *LEG_ENDS):
            off = abs(wrap_angle(bearing(x, y, p.position_x, p.position_y) - heading))
            if off <= LEG_CONE:
                d = distance(x, y, p.position_x, p.position_y)
                left = d if left is None else min(left, d)
        return left

    def act(self, game: Any, state: Any) -> list[int]:
        targets = objects_named(state, *TARGETS)
        if not targets:
            return self.press()
        t = targets[0]
        self._track.append((t.position_x, t.position_y))
        pose = player_pose(game)
        velocity = self._velocity()
        vx, vy = velocity if velocity is not None else (0.0, 0.0)
        delay = LAUNCH_DELAY if self._pressed is None else max(0.0, LAUNCH_DELAY - self._pressed)
        # Fixed point of: the monster's position after the flight is what the flight is aimed at.
        hx, hy = t.position_x, t.position_y
        for _ in range(6):
            flight = delay + distance(pose.x, pose.y, hx, hy) / ROCKET_SPEED
            hx, hy = t.position_x + vx * flight, t.position_y + vy * flight
        err = relative_bearing(pose.x, pose.y, pose.angle, hx, hy)
        turn = turn_toward(err, AIM_FLOOR)
        if self._pressed is not None:
            self._pressed += 1
            return self.press(turn) if turn else self.press()
        on_target = abs(err) <= aim_tolerance(distance(pose.x, pose.y, hx, hy), AIM_RADIUS, floor=AIM_FLOOR)
        if on_target and velocity is not None:
            left = self._leg_left(state, t.position_x, t.position_y, vx, vy)
            in_leg = left is not None and distance(t.position_x, t.position_y, hx, hy) + LEG_MARGIN < left
            timeout = game.get_episode_timeout()
            late = timeout > 0 and timeout - game.get_episode_time() <= LATE
        else:
            in_leg = late = False
        if in_leg or late:
            self._pressed = 0
            return self.press("ATTACK")
        return self.press(turn) if turn else self.press()
