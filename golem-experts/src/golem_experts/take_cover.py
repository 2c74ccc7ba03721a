"""Expert for ``take_cover``: move so that no fireball's predicted path crosses the player's."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from golem.experts import Expert, base_actor_name
from golem.settings import ComponentSettings, section
from golem_experts.geometry import PLAYER_RADIUS, blocking_walls, relative_bearing
from golem_experts.privileged import VelocityMeter, enable_objects, enable_sectors, player_pose

PROJECTILES = ("DoomImpBall",)
#: Fireball radius, map units.
BALL_RADIUS = 6.0
#: Walking model, per axis: ``v' = FRICTION * v + THRUST * direction`` (map units/tic).
FRICTION = 0.90625
THRUST = 0.78
#: Tics simulated ahead when scoring a plan.
HORIZON = 60
#: Tics a plan's first move is held before its follow-up move.
SWITCH = 12
#: Clearance (map units) beyond contact that counts as fully safe.
SAFE_MARGIN = 24.0
#: Score per map unit of room to the nearer side wall at the end of a plan (capped at ROOM_CAP).
ROOM_WEIGHT = 0.05
ROOM_CAP = 160.0
#: Distance to a side wall (map units) at which the preferred strafe direction flips.
TURN_BACK = 160.0
#: How far (map units) from the back wall the player may step toward the imps.
MAX_ADVANCE = 96.0
#: Score bonus for a plan that keeps strafing the way the player is already going.
KEEP_HEADING = 0.5


class TakeCoverSettings(ComponentSettings):
    """``experts.take_cover``: which fireballs the expert dodges."""

    key = "experts.take_cover"
    view: float | None = Field(
        None,
        gt=0.0,
        le=180.0,
        description="dodge only fireballs within this bearing of the heading, degrees (45: what the screen "
        "shows); none: every fireball in the room",
    )
    memory: bool = Field(
        False,
        description="with view: keep dodging a fireball once it has been within the view (what a player "
        "who remembers the screen knows)",
    )


def _plans() -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Candidate plans: ((lateral, forward) for SWITCH tics, (lateral, forward) afterwards)."""
    moves = list(itertools.product((-1, 0, 1), (-1, 0, 1)))
    return [(first, (then, 0)) for first in moves for then in (-1, 0, 1)]


def _displacements(plans: list[tuple[tuple[int, int], tuple[int, int]]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per plan and tic, lateral and forward displacement from rest, plus the coast factor.

    Returns ``(lateral [P, T], forward [P, T], coast [T])`` in map units, where a
    starting velocity ``v0`` adds ``v0 * coast[t]`` to the displacement at tic ``t``.
    """
    n = len(plans)
    lat = np.zeros((n, HORIZON))
    fwd = np.zeros((n, HORIZON))
    for p, (first, then) in enumerate(plans):
        vl = vf = yl = yf = 0.0
        for t in range(HORIZON):
            dl, df = first if t < SWITCH else then
            vl = FRICTION * vl + THRUST * dl
            vf = FRICTION * vf + THRUST * df
            yl += vl
            yf += vf
            lat[p, t], fwd[p, t] = yl, yf
    coast = np.cumsum(FRICTION ** np.arange(1, HORIZON + 1))
    return lat, fwd, coast


class TakeCoverExpert(Expert):
    """Simulates walking plans against every fireball's straight path and keeps the safest.

    Plans combine a strafe and a step toward or away from the imps for a few
    tics, then a strafe. The room's extent comes from ``state.sectors``. Among
    equally safe plans the expert keeps strafing the way it goes, turning back
    near a side wall (imps aim where the player is, so a moving player is
    missed), and prefers ending away from the walls.
    """

    name: ClassVar[str] = "take_cover"
    scenarios: ClassVar[tuple[str, ...]] = ("take_cover",)
    settings_model: ClassVar[Any] = TakeCoverSettings

    def __init__(self, action_names: Sequence[str], settings: Any = None) -> None:
        super().__init__(action_names, settings)
        self._plans = _plans()
        self._lat, self._fwd, self._coast = _displacements(self._plans)
        self._ticks = np.arange(1, HORIZON + 1, dtype=float)
        own = section(self.settings, TakeCoverSettings)
        self._view, self._memory = own.view, own.memory

    def configure(self, game: Any) -> None:
        enable_objects(game)
        enable_sectors(game)

    def reset(self, game: Any) -> None:
        self._bounds: tuple[float, float, float, float] | None = None
        self._velocity = VelocityMeter()
        self._heading = 1
        self._seen: set[int] = set()

    def _dodged(self, pose: Any, objects: Any) -> list[Any]:
        """The fireballs among ``objects`` this expert dodges: all, those in its view, or (``memory``)
        those that have been in it this episode."""
        balls = [o for o in objects if base_actor_name(o.name) in PROJECTILES]
        if self._view is None:
            return balls
        seen = [
            o
            for o in balls
            if abs(relative_bearing(pose.x, pose.y, pose.angle, o.position_x, o.position_y)) <= self._view
        ]
        if not self._memory:
            return seen
        self._seen.update(o.id for o in seen)
        return [o for o in balls if o.id in self._seen]

    def _room(self, state: Any) -> tuple[float, float, float, float]:
        """``(x_lo, x_hi, y_lo, y_hi)`` reachable by the player's centre, map units."""
        if self._bounds is None:
            walls = blocking_walls(state.sectors)
            xs = [v for w in walls for v in (w.x1, w.x2)]
            ys = [v for w in walls for v in (w.y1, w.y2)]
            pad = PLAYER_RADIUS + 1.0
            self._bounds = (min(xs) + pad, max(xs) - pad, min(ys) + pad, max(ys) - pad)
        return self._bounds

    def act(self, game: Any, state: Any) -> list[int]:
        pose = player_pose(game)
        x_lo, _, y_lo, y_hi = self._room(state)
        x_hi = x_lo + MAX_ADVANCE
        vx, vy = self._velocity.read(pose, state.tic)  # per tic, whatever the frame skip
        # The plans' axes in map coordinates: forward along the heading, lateral to its left.
        rad = math.radians(pose.angle)
        fx, fy = math.cos(rad), math.sin(rad)
        lx, ly = -fy, fx
        v_fwd, v_lat = vx * fx + vy * fy, vx * lx + vy * ly
        lat = self._lat + v_lat * self._coast
        fwd = self._fwd + v_fwd * self._coast
        px = np.clip(pose.x + fwd * fx + lat * lx, x_lo, x_hi)
        py = np.clip(pose.y + fwd * fy + lat * ly, y_lo, y_hi)
        score = np.full(len(self._plans), SAFE_MARGIN)
        contact = PLAYER_RADIUS + BALL_RADIUS
        for o in self._dodged(pose, state.objects):
            bx = o.position_x + o.velocity_x * self._ticks
            by = o.position_y + o.velocity_y * self._ticks
            gap = np.maximum(np.abs(px - bx), np.abs(py - by)) - contact
            score = np.minimum(score, gap.min(axis=1))
        end_y = py[:, -1]
        score = score + ROOM_WEIGHT * np.minimum(np.minimum(end_y - y_lo, y_hi - end_y), ROOM_CAP)
        if pose.y - y_lo < TURN_BACK:
            self._heading = 1
        elif y_hi - pose.y < TURN_BACK:
            self._heading = -1
        heading_sign = 1 if ly >= 0 else -1
        keep = np.array([KEEP_HEADING if first[0] * heading_sign == self._heading else 0.0 for first, _ in self._plans])
        (lateral, forward), _ = self._plans[int(np.argmax(score + keep))]
        if lateral:
            self._heading = lateral * heading_sign
        buttons = []
        if lateral:
            buttons.append("MOVE_LEFT" if lateral > 0 else "MOVE_RIGHT")
        if forward:
            buttons.append("MOVE_FORWARD" if forward > 0 else "MOVE_BACKWARD")
        return self.press(*buttons)
