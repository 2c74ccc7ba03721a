"""Action profiles: the ordered buttons the agent presses, as the seeds define them."""

from __future__ import annotations

BASIC: tuple[str, ...] = (
    "MOVE_FORWARD",
    "MOVE_BACKWARD",
    "MOVE_LEFT",
    "MOVE_RIGHT",
    "TURN_LEFT",
    "TURN_RIGHT",
    "ATTACK",
    "USE",
)

PROFILES: dict[str, tuple[str, ...]] = {
    "basic": BASIC,
    "fluid": BASIC + ("SELECT_NEXT_WEAPON",),
    "classic": BASIC + ("SELECT_WEAPON2", "SELECT_WEAPON3"),
}

#: Left/right pairs swapped by mirror augmentation; every other action is unchanged.
MIRROR_PAIRS: tuple[tuple[str, str], ...] = (("MOVE_LEFT", "MOVE_RIGHT"), ("TURN_LEFT", "TURN_RIGHT"))


def mirror_permutation(actions: tuple[str, ...] | list[str]) -> list[int]:
    """Permutation swapping MOVE_LEFT↔MOVE_RIGHT and TURN_LEFT↔TURN_RIGHT in ``actions``.

    Actions without a partner in ``actions`` map to themselves, so the
    permutation is an involution: applying it twice is the identity.
    """
    index = {a: i for i, a in enumerate(actions)}
    perm = list(range(len(actions)))
    for left, right in MIRROR_PAIRS:
        if left in index and right in index:
            perm[index[left]], perm[index[right]] = index[right], index[left]
    return perm
