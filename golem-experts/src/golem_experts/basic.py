"""Expert for ``basic``: turn and strafe toward the Cacodemon, shoot once it is in the line of fire."""

from __future__ import annotations

from typing import Any, ClassVar

from golem.experts import Expert
from golem_experts.geometry import distance, lateral_offset, relative_bearing
from golem_experts.privileged import enable_objects, objects_named, player_pose

#: Sideways miss distance (map units) under which a shot hits the Cacodemon (radius 31).
HIT_OFFSET = 14.0
#: Bearing error (degrees) under which the expert stops turning (one slow turn tic).
TURN_DEADBAND = 1.0


class BasicExpert(Expert):
    """Turns and strafes to line up with the monster and shoots once lined up."""

    name: ClassVar[str] = "basic"
    scenarios: ClassVar[tuple[str, ...]] = ("basic",)

    def configure(self, game: Any) -> None:
        enable_objects(game)

    def act(self, game: Any, state: Any) -> list[int]:
        targets = objects_named(state, "Cacodemon")
        if not targets:
            return self.press()
        pose = player_pose(game)
        t = targets[0]
        side = lateral_offset(pose.x, pose.y, pose.angle, t.position_x, t.position_y)
        ahead = distance(pose.x, pose.y, t.position_x, t.position_y)
        if abs(side) <= HIT_OFFSET and ahead > 0:
            return self.press("ATTACK")
        error = relative_bearing(pose.x, pose.y, pose.angle, t.position_x, t.position_y)
        buttons = ["MOVE_LEFT" if side > 0 else "MOVE_RIGHT"]
        if abs(error) > TURN_DEADBAND:
            buttons.append("TURN_LEFT" if error > 0 else "TURN_RIGHT")
        return self.press(*buttons)
