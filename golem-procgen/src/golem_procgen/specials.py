"""What a line special does for a player finding the way: doors, locks, lifts, lowering floors, teleports, exits.

:func:`line_action` reads one line of a map (:class:`golem_procgen.mapdata.Line`)
in its dialect — Doom numbering (vanilla and Boom's generalised specials) or
Hexen/ZDoom numbering — and says what it does to whom: it opens the door
behind it (``local``) or the sectors tagged ``tag``, it needs a key (``lock``),
it is used, walked over or shot (``trigger``), it lowers a lift or a floor, it
teleports or it ends the level. Specials that change nothing on the way
(lights, scrollers, crushers, stairs, scripts) are ``None``.

Doom-format teleports 125 and 126 move monsters only; they are not the
player's way anywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

from golem_procgen.mapdata import Line

#: Key colours by Doom editor number (cards and skulls open the same doors in Doom).
KEY_THINGS: dict[int, str] = {5: "blue", 40: "blue", 6: "yellow", 39: "yellow", 13: "red", 38: "red"}
#: Key colours by the engine's actor names (``state.objects``).
KEY_ACTORS: dict[str, str] = {
    "BlueCard": "blue",
    "BlueSkull": "blue",
    "YellowCard": "yellow",
    "YellowSkull": "yellow",
    "RedCard": "red",
    "RedSkull": "red",
}
COLOURS = ("blue", "yellow", "red")


@dataclass(frozen=True)
class Action:
    """What a line does.

    Attributes:
        kind: ``door`` (raises a ceiling), ``floor`` (lowers a floor), ``lift``, ``teleport`` or ``exit``.
        trigger: ``use``, ``cross`` or ``shoot``.
        local: it acts on the sector behind the line (a door's own lines), not on ``tag``.
        tag: the sectors it acts on (teleports: the sector of the destination; ``0`` with ``tid``).
        lock: a key it needs: ``blue``, ``yellow``, ``red``, ``any`` or ``all``; ``None``: none.
        target: where a lowering floor stops: ``lowest`` or ``highest`` neighbouring floor.
        tid: a Hexen teleport's destination thing id (``0``: any destination in ``tag``).
        repeat: it can fire again.
    """

    kind: str
    trigger: str
    local: bool = False
    tag: int = 0
    lock: str | None = None
    target: str = "lowest"
    tid: int = 0
    repeat: bool = False


# --- Doom numbering ------------------------------------------------------------------------------

#: Manual doors (the sector behind the line): special → (lock, repeat).
DOOM_LOCAL_DOORS: dict[int, tuple[str | None, bool]] = {
    1: (None, True),
    26: ("blue", True),
    27: ("yellow", True),
    28: ("red", True),
    31: (None, False),
    32: ("blue", False),
    33: ("red", False),
    34: ("yellow", False),
    117: (None, True),
    118: (None, False),
}
#: Doors opened by tag: special → (trigger, lock).
DOOM_REMOTE_DOORS: dict[int, tuple[str, str | None]] = {
    **{s: ("cross", None) for s in (2, 4, 86, 90, 105, 106, 108, 109)},
    **{s: ("use", None) for s in (29, 103, 61, 63, 111, 112, 114, 115)},
    46: ("shoot", None),
    99: ("use", "blue"),
    133: ("use", "blue"),
    134: ("use", "red"),
    135: ("use", "red"),
    136: ("use", "yellow"),
    137: ("use", "yellow"),
}
#: Floors lowered by tag: special → (trigger, where they stop).
DOOM_FLOORS: dict[int, tuple[str, str]] = {
    **{s: ("cross", "lowest") for s in (38, 82, 37, 84)},
    **{s: ("use", "lowest") for s in (23, 60)},
    **{s: ("cross", "highest") for s in (19, 83, 36, 98)},
    **{s: ("use", "highest") for s in (102, 45, 70, 71)},
}
#: Lifts lowered by tag: special → trigger.
DOOM_LIFTS: dict[int, str] = {10: "cross", 88: "cross", 120: "cross", 121: "cross"} | {
    21: "use",
    62: "use",
    122: "use",
    123: "use",
}
#: Player teleports (to the destination thing in the tagged sector): special → trigger.
DOOM_TELEPORTS: dict[int, str] = {39: "cross", 97: "cross", 207: "cross", 208: "cross", 174: "use", 195: "use"}
#: Exits: special → trigger.
DOOM_EXITS: dict[int, str] = {11: "use", 51: "use", 52: "cross", 124: "cross", 197: "shoot", 198: "shoot"}
#: Boom generalised specials: first number of each range.
GEN_FLOOR, GEN_LIFT, GEN_LOCKED, GEN_DOOR = 0x6000, 0x3400, 0x3800, 0x3C00
#: Boom generalised triggers (bits 0–2): trigger, and whether it is manual (the sector behind the line).
GEN_TRIGGERS: tuple[tuple[str, bool], ...] = (
    ("cross", False),
    ("cross", False),
    ("use", False),
    ("use", False),
    ("shoot", False),
    ("shoot", False),
    ("use", True),
    ("use", True),
)
#: Boom generalised lock kinds (bits 6–8 of a locked door).
GEN_LOCKS = ("any", "red", "blue", "yellow", "red", "blue", "yellow", "all")


def _doom(line: Line) -> Action | None:
    s, tag = line.special, line.tag
    if s in DOOM_LOCAL_DOORS:
        lock, repeat = DOOM_LOCAL_DOORS[s]
        return Action("door", "use", local=True, lock=lock, repeat=repeat)
    if s in DOOM_REMOTE_DOORS:
        trigger, lock = DOOM_REMOTE_DOORS[s]
        return Action("door", trigger, tag=tag, lock=lock)
    if s in DOOM_FLOORS:
        trigger, target = DOOM_FLOORS[s]
        return Action("floor", trigger, tag=tag, target=target)
    if s in DOOM_LIFTS:
        return Action("lift", DOOM_LIFTS[s], tag=tag, repeat=True)
    if s in DOOM_TELEPORTS:
        return Action("teleport", DOOM_TELEPORTS[s], tag=tag, repeat=True)
    if s in DOOM_EXITS:
        return Action("exit", DOOM_EXITS[s])
    if s >= GEN_FLOOR:
        trigger, manual = GEN_TRIGGERS[s & 7]
        down = not (s >> 6) & 1
        target = (s >> 7) & 7  # 0 highest neighbour floor, 1 lowest, 2 next, 3 lowest neighbour ceiling, …
        if down and target in (0, 1, 2):
            return Action("floor", trigger, local=manual, tag=tag, target="highest" if target == 0 else "lowest")
        return None
    if GEN_DOOR <= s < GEN_FLOOR:
        trigger, manual = GEN_TRIGGERS[s & 7]
        kind = (s >> 5) & 3
        return Action("door", trigger, local=manual, tag=tag) if kind in (0, 1) else None
    if GEN_LOCKED <= s < GEN_DOOR:
        trigger, manual = GEN_TRIGGERS[s & 7]
        return Action("door", trigger, local=manual, tag=tag, lock=GEN_LOCKS[(s >> 6) & 7])
    if GEN_LIFT <= s < GEN_LOCKED:
        trigger, manual = GEN_TRIGGERS[s & 7]
        return Action("lift", trigger, local=manual, tag=tag, repeat=True)
    return None


# --- Hexen / ZDoom numbering ---------------------------------------------------------------------

#: Doors: special → index of the lock argument (``None``: no lock).
HEXEN_DOORS: dict[int, int | None] = {11: None, 12: None, 13: 3, 14: 3, 105: None, 202: 4}
#: Floors that lower: special → where they stop.
HEXEN_FLOORS: dict[int, str] = {20: "lowest", 21: "lowest", 22: "lowest", 242: "highest"}
#: Lifts (Plat_DownWaitUpStay, …, Generic_Lift).
HEXEN_LIFTS = frozenset({60, 62, 63, 206, 203})
#: Teleports to a thing id (arg0) in a sector tag (arg1).
HEXEN_TELEPORTS = frozenset({70, 71})
#: Exit_Normal, Exit_Secret, Teleport_NewMap, Teleport_EndGame.
HEXEN_EXITS = frozenset({243, 244, 74, 75})
#: ZDoom lock numbers → key colour.
ZDOOM_LOCKS: dict[int, str] = {
    1: "red",
    2: "blue",
    3: "yellow",
    4: "red",
    5: "blue",
    6: "yellow",
    129: "red",
    130: "blue",
    131: "yellow",
    132: "red",
    133: "blue",
    134: "yellow",
    100: "any",
    101: "all",
    229: "all",
}


def _hexen(line: Line) -> Action | None:
    s, args = line.special, line.args
    trigger = {"use": "use", "cross": "cross", "shoot": "shoot", "push": "use"}.get(line.activation)
    if trigger is None:
        return None  # monster or projectile activation: nothing the player does
    if s in HEXEN_DOORS:
        lock_arg = HEXEN_DOORS[s]
        lock = ZDOOM_LOCKS.get(args[lock_arg]) if lock_arg is not None and args[lock_arg] else None
        if lock_arg is not None and args[lock_arg] and lock is None:
            lock = "any"
        return Action("door", trigger, local=args[0] == 0, tag=args[0], lock=lock, repeat=line.repeat)
    if s in HEXEN_FLOORS:
        return Action("floor", trigger, local=args[0] == 0, tag=args[0], target=HEXEN_FLOORS[s])
    if s in HEXEN_LIFTS:
        return Action("lift", trigger, local=args[0] == 0, tag=args[0], repeat=True)
    if s in HEXEN_TELEPORTS:
        return Action("teleport", trigger, tag=args[1], tid=args[0], repeat=True)
    if s in HEXEN_EXITS:
        return Action("exit", trigger)
    return None


def line_action(line: Line, dialect: str) -> Action | None:
    """What ``line`` does for a player (see the module docstring); ``None``: nothing that matters on the way.

    Args:
        dialect: ``doom`` or ``hexen`` (:attr:`golem_procgen.mapdata.MapData.dialect`).
    """
    if not line.special:
        return None
    return _doom(line) if dialect == "doom" else _hexen(line)


#: Damaging floors: Doom sector specials (5/10/20 % … per 32 tics), and ZDoom's Hexen-numbered ones.
DOOM_DAMAGE = frozenset({4, 5, 7, 11, 16})
ZDOOM_DAMAGE = frozenset({69, 71, 72, 73, 74, 75, 82, 83, 84, 85, 105, 115, 116})


def damaging(special: int, dialect: str) -> bool:
    """Whether a sector with ``special`` hurts a player standing in it (Boom's generalised damage bits included)."""
    if dialect == "doom":
        return special in DOOM_DAMAGE or (special >= 32 and bool(special & 0x60))
    return (special & 0xFF) in ZDOOM_DAMAGE or bool(special & 0x300)
