"""How a replacement class looks: sprite sets and their frames, colour tints, and the DECORATE that says so.

A monster's sprite frames have parts (Doom's sprites share one layout): the
walk cycle, the attack, the pain flinch, the death and the gory death. To show
a class with another monster's sprite, each state line of its (flattened,
:mod:`golem_procgen.variants.decorate`) program keeps its tics and action and
gets the other sprite's frame for the same part — the part comes from the
state's label (``Missile`` → attack) or, failing that, from the frame letter —
at the same relative position (the last death frame is the corpse in both).
Items show another pickup's sprite in their ``Spawn`` state.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from golem.experts import VARIANT_SUFFIX
from golem_procgen.variants.decorate import (
    Catalogue,
    NotFlattenable,
    Segment,
    StateLine,
    flatten_states,
    segment_role,
    write_states,
)

#: Monster sprites of freedoom2 by part: frame letters in order (Doom's layout for each sprite).
MONSTER_FRAMES: dict[str, dict[str, str]] = {
    "POSS": {"walk": "ABCD", "attack": "EF", "pain": "G", "death": "HIJKL", "xdeath": "MNOPQRSTU"},
    "SPOS": {"walk": "ABCD", "attack": "EF", "pain": "G", "death": "HIJKL", "xdeath": "MNOPQRSTU"},
    "CPOS": {"walk": "ABCD", "attack": "EF", "pain": "G", "death": "HIJKLMN", "xdeath": "OPQRST"},
    "TROO": {"walk": "ABCD", "attack": "EFG", "pain": "H", "death": "IJKLM", "xdeath": "NOPQRSTU"},
    "SARG": {"walk": "ABCD", "attack": "EFG", "pain": "H", "death": "IJKLMN"},
    "HEAD": {"walk": "A", "attack": "BCD", "pain": "EF", "death": "GHIJKL"},
    "SKUL": {"walk": "AB", "attack": "CD", "pain": "E", "death": "FGHIJK"},
    "BOSS": {"walk": "ABCD", "attack": "EFG", "pain": "H", "death": "IJKLMNO"},
    "BOS2": {"walk": "ABCD", "attack": "EFG", "pain": "H", "death": "IJKLMNO"},
    "SKEL": {"walk": "ABCDEF", "attack": "GHIJK", "pain": "L", "death": "LMNOPQ"},
    "FATT": {"walk": "ABCDEF", "attack": "GHI", "pain": "J", "death": "KLMNOPQRST"},
    "BSPI": {"walk": "ABCDEF", "attack": "GH", "pain": "I", "death": "JKLMNOP"},
    "PAIN": {"walk": "ABC", "attack": "DEF", "pain": "G", "death": "HIJKLM"},
    "VILE": {"walk": "ABCDEF", "attack": "GHIJKLMNOP", "pain": "Q", "death": "QRSTUVWXYZ"},
    "CYBR": {"walk": "ABCD", "attack": "EF", "pain": "G", "death": "HIJKLMNOP"},
    "SPID": {"walk": "ABCDEF", "attack": "GH", "pain": "I", "death": "JKLMNOPQRS"},
    "SSWV": {"walk": "ABCD", "attack": "EFG", "pain": "H", "death": "IJKLM", "xdeath": "NOPQRSTUV"},
    "PLAY": {"walk": "ABCD", "attack": "EF", "pain": "G", "death": "HIJKLMN", "xdeath": "OPQRSTUVW"},
}
#: Sprites a monster may be given: man-sized walkers and floaters (not the giant bosses, the lost soul or the
#: arch-vile, whose extra frames need quoting).
MONSTER_DONORS: tuple[str, ...] = (
    "POSS",
    "SPOS",
    "CPOS",
    "TROO",
    "SARG",
    "HEAD",
    "BOSS",
    "BOS2",
    "SKEL",
    "FATT",
    "BSPI",
    "PAIN",
    "SSWV",
    "PLAY",
)
#: Parts in the order a frame letter is looked up when its state's label does not say.
PARTS = ("walk", "attack", "pain", "death", "xdeath")
#: A part a sprite lacks is drawn with this one.
PART_FALLBACK = {"xdeath": "death"}

#: Pickup sprites an item may be given: ``sprite → (frames of its Spawn loop, tics per frame)``.
ITEM_DONORS: dict[str, tuple[str, int]] = {
    "STIM": ("A", -1),
    "MEDI": ("A", -1),
    "BON1": ("ABCDCB", 6),
    "BON2": ("ABCDCB", 6),
    "ARM1": ("AB", 7),
    "ARM2": ("AB", 7),
    "CLIP": ("A", -1),
    "AMMO": ("A", -1),
    "SHEL": ("A", -1),
    "SBOX": ("A", -1),
    "ROCK": ("A", -1),
    "BROK": ("A", -1),
    "CELL": ("A", -1),
    "CELP": ("A", -1),
    "SOUL": ("ABCDCB", 6),
    "PINV": ("ABCD", 6),
    "PSTR": ("A", -1),
    "PINS": ("ABCD", 6),
    "SUIT": ("A", -1),
    "PMAP": ("ABCDCB", 6),
    "PVIS": ("AB", 6),
    "MEGA": ("ABCD", 6),
    "BPAK": ("A", -1),
}
#: Colour tints (``%[0,0,0]:[r,g,b]``: the sprite desaturated, then coloured from black to this; 1.0 = full).
TINTS: dict[str, tuple[float, float, float]] = {
    "red": (1.5, 0.35, 0.3),
    "green": (0.45, 1.35, 0.4),
    "blue": (0.45, 0.6, 1.6),
    "gold": (1.5, 1.2, 0.35),
    "purple": (1.15, 0.45, 1.4),
    "cyan": (0.4, 1.25, 1.35),
    "grey": (1.05, 1.05, 1.05),
    "orange": (1.6, 0.85, 0.3),
}
#: Bounds of a monster's drawn size (its collision box is unchanged).
SCALE_RANGE = (0.8, 1.25)
#: Chance that a monster shown with another sprite is tinted as well (a class that keeps its sprite always is).
TINT_CHANCE = 0.5


def variant_name(original: str, seed: int) -> str:
    """The replacement class of ``original`` in the variant of ``seed``: ``DoomImp`` → ``DoomImp__golem7``
    (:func:`golem.experts.base_actor_name` strips it again)."""
    return f"{original}{VARIANT_SUFFIX}{int(seed)}"


def translation(tint: str) -> str:
    """The DECORATE ``Translation`` string of a tint of :data:`TINTS`."""
    r, g, b = TINTS[tint]
    return f"0:255=%[0.00,0.00,0.00]:[{r:.2f},{g:.2f},{b:.2f}]"


@dataclass(frozen=True)
class MonsterLook:
    """A monster class's new look.

    Attributes:
        original: the class replaced.
        actor: the replacement class (inherits ``original``, :func:`variant_name`).
        from_sprite: the sprite it showed (``None``: not one of :data:`MONSTER_FRAMES`).
        sprite: the sprite it shows now (``None``: its own).
        tint: a :data:`TINTS` name, or ``None``.
        scale: drawn size relative to the original's.
    """

    original: str
    actor: str
    from_sprite: str | None
    sprite: str | None
    tint: str | None
    scale: float

    def as_dict(self) -> dict[str, object]:
        """JSON-ready."""
        return asdict(self)


@dataclass(frozen=True)
class ItemLook:
    """A pickup class's new look: the ``sprite`` (of :data:`ITEM_DONORS`) its replacement ``actor`` shows
    instead of ``from_sprite``."""

    original: str
    actor: str
    from_sprite: str | None
    sprite: str

    def as_dict(self) -> dict[str, object]:
        """JSON-ready."""
        return asdict(self)


def monster_sprite(cat: Catalogue, name: str) -> str | None:
    """The :data:`MONSTER_FRAMES` sprite class ``name``'s states show, or ``None`` (no states, or another)."""
    try:
        program = flatten_states(cat, name)
    except NotFlattenable:
        return None
    counts: dict[str, int] = {}
    for _, seg in program:
        for item in seg.items:
            if isinstance(item, StateLine) and item.sprite.upper() in MONSTER_FRAMES:
                counts[item.sprite.upper()] = counts.get(item.sprite.upper(), 0) + 1
    return max(sorted(counts), key=lambda s: counts[s]) if counts else None


def _part_of(sprite: str, letter: str, role: str | None) -> tuple[str, int, int] | None:
    """``(part, index, length)`` of ``letter`` of ``sprite``: in the part ``role`` when it has the letter, else in
    the first part that has it."""
    frames = MONSTER_FRAMES[sprite]
    order = ([role] if role in frames else []) + [p for p in PARTS if p in frames]
    for part in order:
        if letter in frames[part]:
            return part, frames[part].index(letter), len(frames[part])
    return None


def remap_frame(from_sprite: str, to_sprite: str, letter: str, role: str | None) -> str:
    """The frame of ``to_sprite`` that stands for frame ``letter`` of ``from_sprite`` in a state of part ``role``."""
    found = _part_of(from_sprite, letter, role)
    target = MONSTER_FRAMES[to_sprite]
    if found is None:
        return target["walk"][0]
    part, index, length = found
    frames = target.get(part) or target.get(PART_FALLBACK.get(part, "walk")) or target["walk"]
    position = 0 if length <= 1 else round(index * (len(frames) - 1) / (length - 1))
    return frames[position]


def restate(program: Sequence[tuple[list[str], Segment]], from_sprite: str, to_sprite: str) -> str:
    """DECORATE state text of ``program`` with every ``from_sprite`` line drawn with ``to_sprite``'s frames."""
    out: list[tuple[list[str], Segment]] = []
    for labels, seg in program:
        role = segment_role(seg.labels or labels)
        items = []
        for item in seg.items:
            if isinstance(item, StateLine) and item.sprite.upper() == from_sprite:
                letters = "".join(remap_frame(from_sprite, to_sprite, c, role) for c in item.frames.strip('"').upper())
                item = StateLine(to_sprite, letters, item.rest)
            items.append(item)
        out.append((labels, Segment(seg.labels, tuple(items))))
    return write_states(out)


def draw_monster_looks(cat: Catalogue, classes: Iterable[str], seed: int, rng: random.Random) -> list[MonsterLook]:
    """A look for each monster class (sorted), drawn from ``rng``.

    Each class that shows a sprite of :data:`MONSTER_FRAMES` gets another monster's sprite, never one a class of
    the map shows and never the same as another class's (so two classes never look alike), tinted with
    :data:`TINT_CHANCE`; a class whose states cannot be restated keeps its sprite and is tinted. Every class
    gets a scale in :data:`SCALE_RANGE`.
    """
    names = sorted(set(classes))
    shown = {monster_sprite(cat, n) for n in names}
    pool = [s for s in MONSTER_DONORS if s not in shown]
    looks = []
    for name in names:
        own = monster_sprite(cat, name)
        sprite = None
        if own is not None and pool:
            sprite = pool.pop(rng.randrange(len(pool)))
        tinted = sprite is None or rng.random() < TINT_CHANCE
        tint = rng.choice(sorted(TINTS)) if tinted else None
        scale = round(rng.uniform(*SCALE_RANGE), 2)
        looks.append(MonsterLook(name, variant_name(name, seed), own, sprite, tint, scale))
    return looks


def monster_decorate(cat: Catalogue, look: MonsterLook) -> str:
    """The DECORATE actor of ``look``: inherits the original (behaviour, sounds, health), replaces it, and
    redeclares its states with the new sprite."""
    lines = [f"actor {look.actor} : {look.original} replaces {look.original}", "{"]
    lines.append(f"  Scale {look.scale:.2f}")
    if look.tint is not None:
        lines.append(f'  Translation "{translation(look.tint)}"')
    if look.sprite is not None and look.from_sprite is not None:
        lines += ["  States", "  {", restate(flatten_states(cat, look.original), look.from_sprite, look.sprite), "  }"]
    lines.append("}")
    return "\n".join(lines) + "\n"


def draw_item_looks(
    classes: Iterable[str], sprites: dict[str, str | None], taken: Iterable[str], seed: int, rng: random.Random
) -> list[ItemLook]:
    """A pickup sprite for each item class (sorted): never one shown by ``taken`` (the sprites of the map's
    things) and never two classes the same one.

    Args:
        classes: the item classes.
        sprites: each class's own sprite (``None``: unknown).
        taken: sprites no replacement may show.
        seed: the variant's seed (names the replacements).
        rng: the knob's random draws.
    """
    names = sorted(set(classes))
    used = set(taken) | {s for s in sprites.values() if s}
    pool = [s for s in ITEM_DONORS if s not in used]
    looks = []
    for name in names:
        if not pool:
            break
        sprite = pool.pop(rng.randrange(len(pool)))
        looks.append(ItemLook(name, variant_name(name, seed), sprites.get(name), sprite))
    return looks


def item_decorate(look: ItemLook) -> str:
    """The DECORATE actor of an item's look: inherits the original (what it gives), replaces it, shows the
    donor sprite."""
    frames, tics = ITEM_DONORS[look.sprite]
    flow = "Stop" if tics < 0 else "Loop"
    return (
        f"actor {look.actor} : {look.original} replaces {look.original}\n{{\n  States\n  {{\n  Spawn:\n"
        f"    {look.sprite} {frames} {tics}\n    {flow}\n  }}\n}}\n"
    )


def player_decorate(actor: str, base: str, view_height: int) -> str:
    """The DECORATE player class ``actor``: ``base`` (``DoomPlayer``) with its eyes ``view_height`` map units
    above its feet."""
    return f"actor {actor} : {base}\n{{\n  Player.ViewHeight {int(view_height)}\n}}\n"
