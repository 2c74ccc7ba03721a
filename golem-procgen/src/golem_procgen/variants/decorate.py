"""The engine's actor classes, read from DECORATE: who inherits whom, editor numbers, and state programs.

A variant replaces a class by one that inherits it and redeclares its states
with other sprites, so it needs each class's states *as the engine resolved
them*, inherited labels included. :func:`catalogue` reads the actors ViZDoom
ships (``vizdoom.pk3``: ``decorate.txt`` and its includes, the ``DoomEdNums`` of
its MAPINFO) plus a map's own DECORATE; :func:`flatten_states` turns a class and
its ancestors' ``States`` blocks into one block that means the same in a class
of its own: every ``Goto`` is resolved where it was written (``Super::`` and
plain labels alike) and points at an alias label that the flattened block
defines, so overriding a label in a subclass cannot change where an ancestor's
``Goto`` leads.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)

#: A label at the start of a state line (``Missile.Pistol:``), not ``Super::X``.
_LABEL = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*:(?!:)")
#: Flow keywords of a state program.
_FLOW = re.compile(r"^(loop|stop|wait|fail|goto)\b\s*(.*)$", re.IGNORECASE)
#: A ``Goto`` target: ``[Class::]Label[+offset]``.
_GOTO = re.compile(r"^(?:([A-Za-z_][A-Za-z0-9_]*)::)?([A-Za-z_][A-Za-z0-9_.]*)\s*(?:\+\s*([0-9]+))?$")
#: An actor header: ``ACTOR Name [: Parent] [replaces Other] [editor number] [native]``.
_HEADER = re.compile(
    r"^([A-Za-z0-9_]+)\s*(?::\s*([A-Za-z0-9_]+))?\s*(?:replaces\s+([A-Za-z0-9_]+))?\s*([0-9]+)?\s*(native)?\s*$",
    re.IGNORECASE,
)


#: The MAPINFO of the game ViZDoom plays with freedoom2.wad (its ``DoomEdNums`` come from its includes).
GAME_MAPINFO = "mapinfo/doom2.txt"


class NotFlattenable(ValueError):
    """A state program this module cannot restate (a jump into another class's states, an unknown label)."""


@dataclass(frozen=True)
class StateLine:
    """One state line: ``sprite`` (``TROO``, ``####``), ``frames`` (``AB``), and the rest as written
    (tics, flags, action)."""

    sprite: str
    frames: str
    rest: str


@dataclass(frozen=True)
class Flow:
    """``Loop``, ``Stop``, ``Wait``, ``Fail`` or ``Goto`` (``kind``, lower case) with its ``target`` as written."""

    kind: str
    target: str = ""


@dataclass(frozen=True)
class Segment:
    """The states from a run of labels to the next label: ``labels`` (as written) and ``items`` in order."""

    labels: tuple[str, ...]
    items: tuple[StateLine | Flow, ...]


@dataclass(frozen=True)
class ActorDef:
    """One DECORATE actor.

    Attributes:
        name: class name as written.
        parent: the class it inherits (``None``: ``Actor``).
        replaces: the class it replaces, if any.
        ednum: its editor number from the header, if any.
        monster: it declares ``Monster`` or ``+ISMONSTER`` itself (see :meth:`Catalogue.is_monster`).
        solid: it declares ``+SOLID`` (``Monster`` includes it), ``-SOLID`` gives ``False``, ``None``: neither.
        radius: its own ``Radius``, if declared.
        segments: its own ``States`` block, or ``None`` when it has none.
        source: where it was read (``vizdoom.pk3:actors/doom/doomimp.txt``, ``DECORATE``).
    """

    name: str
    parent: str | None
    replaces: str | None
    ednum: int | None
    monster: bool
    solid: bool | None
    radius: float | None
    segments: tuple[Segment, ...] | None
    source: str


@dataclass
class Catalogue:
    """Actor classes by lower-case name, and editor numbers → class names."""

    actors: dict[str, ActorDef] = field(default_factory=dict)
    ednums: dict[int, str] = field(default_factory=dict)

    def get(self, name: str) -> ActorDef | None:
        """The class ``name`` (any case), or ``None``."""
        return self.actors.get(name.lower())

    def chain(self, name: str) -> list[ActorDef]:
        """``name`` and its ancestors, root first (stops at a parent it does not know)."""
        out: list[ActorDef] = []
        seen: set[str] = set()
        actor = self.get(name)
        while actor is not None and actor.name.lower() not in seen:
            seen.add(actor.name.lower())
            out.append(actor)
            actor = self.get(actor.parent) if actor.parent else None
        return out[::-1]

    def inherits(self, name: str, ancestor: str) -> bool:
        """Whether ``name`` is ``ancestor`` or inherits from it (any case)."""
        return any(a.name.lower() == ancestor.lower() for a in self.chain(name))

    def is_monster(self, name: str) -> bool:
        """Whether ``name`` or an ancestor declares ``Monster`` / ``+ISMONSTER``."""
        return any(a.monster for a in self.chain(name))

    def is_solid(self, name: str) -> bool:
        """Whether ``name`` blocks movement (the nearest ``+SOLID`` / ``-SOLID`` / ``Monster`` up its chain)."""
        for actor in reversed(self.chain(name)):
            if actor.solid is not None:
                return actor.solid
            if actor.monster:
                return True
        return False

    def radius(self, name: str) -> float:
        """``name``'s collision radius, map units (the nearest ``Radius`` up its chain; Doom's default 20)."""
        for actor in reversed(self.chain(name)):
            if actor.radius is not None:
                return actor.radius
        return 20.0

    def canonical(self, name: str) -> str | None:
        """The class ``name`` (any case) spelt as the engine reports it, or ``None`` when there is no such class.

        The engine keeps the first spelling it met: the ``DoomEdNums`` one where the class has an editor
        number (``Zombieman``, declared ``ZombieMan``), else the declared one."""
        actor = self.get(name)
        if actor is None:
            return None
        spelt = {v.lower(): v for v in self.ednums.values()}
        return spelt.get(actor.name.lower(), actor.name)

    def with_decorate(self, text: str, source: str = "DECORATE") -> Catalogue:
        """A copy with the actors of ``text`` added (a map's own DECORATE; its classes win)."""
        out = Catalogue(actors=dict(self.actors), ednums=dict(self.ednums))
        for actor in parse_decorate(text, source):
            out.actors[actor.name.lower()] = actor
            if actor.ednum is not None:
                out.ednums[actor.ednum] = actor.name
        return out

    def with_ednums(self, text: str) -> Catalogue:
        """A copy with the ``DoomEdNums`` of MAPINFO ``text`` added (a map's own MAPINFO)."""
        out = Catalogue(actors=dict(self.actors), ednums=dict(self.ednums))
        out.ednums.update(parse_ednums(text))
        return out


def strip_comments(text: str) -> str:
    """``text`` without ``//`` and ``/* */`` comments (strings kept whole)."""

    def keep(m: re.Match[str]) -> str:
        return m.group(0) if m.group(0).startswith('"') else ("\n" * m.group(0).count("\n"))

    return re.sub(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*.*?\*/', keep, text, flags=re.DOTALL)


def _matching_brace(text: str, start: int) -> int:
    """Index of the ``}`` closing the ``{`` at ``start`` (strings skipped); ``len(text)`` if unclosed."""
    depth = 0
    i = start
    while i < len(text):
        c = text[i]
        if c == '"':
            end = text.find('"', i + 1)
            i = len(text) if end < 0 else end
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return len(text)


def parse_states(text: str) -> tuple[Segment, ...]:
    """The segments of a ``States { … }`` body (without the braces)."""
    segments: list[Segment] = []
    labels: list[str] = []
    items: list[StateLine | Flow] = []

    def close() -> None:
        if labels or items:
            segments.append(Segment(tuple(labels), tuple(items)))

    for raw in text.splitlines():
        line = raw.strip()
        while True:
            m = _LABEL.match(line)
            if m is None:
                break
            if items:
                close()
                labels, items = [], []
            labels.append(m.group(1))
            line = line[m.end() :].strip()
        if not line:
            continue
        flow = _FLOW.match(line)
        if flow:
            items.append(Flow(flow.group(1).lower(), flow.group(2).strip()))
            continue
        parts = line.split(None, 2)
        if len(parts) < 2:
            raise NotFlattenable(f"cannot read state line {line!r}")
        sprite, frames = parts[0].strip('"'), parts[1]
        rest = parts[2] if len(parts) > 2 else ""
        items.append(StateLine(sprite, frames, rest))
    close()
    return tuple(segments)


def parse_decorate(text: str, source: str = "DECORATE") -> list[ActorDef]:
    """The actors of DECORATE ``text`` (``#include`` lines are the caller's; other top-level statements
    are skipped)."""
    text = strip_comments(text)
    actors: list[ActorDef] = []
    for m in re.finditer(r"(?im)^\s*actor\s+([^{]*?)\s*\{", text):
        header = _HEADER.match(" ".join(m.group(1).split()))
        if header is None:
            log.debug("decorate_header_skipped", source=source, header=m.group(1))
            continue
        open_at = m.end() - 1
        body = text[open_at + 1 : _matching_brace(text, open_at)]
        segments = None
        states = re.search(r"(?i)\bstates\s*\{", body)
        if states:
            start = states.end() - 1
            inner = body[start + 1 : _matching_brace(body, start)]
            try:
                segments = parse_states(inner)
            except NotFlattenable:
                segments = None
            outside = body[: states.start()] + body[_matching_brace(body, start) + 1 :]
        else:
            outside = body
        props = [" ".join(line.split()).lower() for line in outside.splitlines() if line.strip()]
        monster = any(p == "monster" or p.startswith("+ismonster") for p in props)
        solid = True if any(p.startswith("+solid") for p in props) else False if "-solid" in props else None
        radius = next((float(p.split()[1]) for p in props if re.fullmatch(r"radius\s+[0-9.]+", p)), None)
        name, parent, replaces, ednum, _ = header.groups()
        actors.append(
            ActorDef(
                name=name,
                parent=parent,
                replaces=replaces,
                ednum=int(ednum) if ednum else None,
                monster=monster,
                solid=solid,
                radius=radius,
                segments=segments,
                source=source,
            )
        )
    return actors


def parse_ednums(text: str) -> dict[int, str]:
    """The ``DoomEdNums { 3001 = DoomImp … }`` entries of MAPINFO ``text``."""
    out: dict[int, str] = {}
    for block in re.finditer(r"(?is)\bdoomednums\s*\{(.*?)\}", strip_comments(text)):
        for number, name in re.findall(r"([0-9]+)\s*=\s*\"?([A-Za-z0-9_]+)\"?", block.group(1)):
            out[int(number)] = name
    return out


def engine_pk3() -> Path:
    """ViZDoom's own resource archive (its actor classes and MAPINFO)."""
    import vizdoom

    return Path(vizdoom.__file__).parent / "vizdoom.pk3"


@lru_cache(maxsize=4)
def _pk3_catalogue(path: str, size: int, mtime_ns: int) -> Catalogue:
    cat = Catalogue()
    with zipfile.ZipFile(path) as pk3:
        names = {n.lower(): n for n in pk3.namelist()}

        def read(name: str) -> str:
            return pk3.read(names[name.lower()]).decode("latin-1")

        pending = ["decorate.txt"]
        done: set[str] = set()
        while pending:
            name = pending.pop(0)
            if name.lower() in done or name.lower() not in names:
                continue
            done.add(name.lower())
            text = read(name)
            pending.extend(re.findall(r'(?im)^\s*#include\s+"([^"]+)"', text))
            for actor in parse_decorate(text, f"vizdoom.pk3:{name}"):
                cat.actors[actor.name.lower()] = actor
                if actor.ednum is not None:
                    cat.ednums[actor.ednum] = actor.name
        pending, done = [GAME_MAPINFO], set()
        while pending:  # the Doom 2 game's MAPINFO and what it includes (other games reuse the numbers)
            name = pending.pop(0)
            if name.lower() in done or name.lower() not in names:
                continue
            done.add(name.lower())
            text = read(name)
            pending.extend(re.findall(r'(?im)^\s*include\s+"([^"]+)"', text))
            cat.ednums.update(parse_ednums(text))
    return cat


def catalogue(pk3: Path | None = None) -> Catalogue:
    """The actor classes and editor numbers ViZDoom ships (read once per process)."""
    path = pk3 or engine_pk3()
    stat = path.stat()
    return _pk3_catalogue(str(path), stat.st_size, stat.st_mtime_ns)


def _alias(level: int, index: int) -> str:
    return f"Golem_L{level}S{index}"


def flatten_states(cat: Catalogue, name: str) -> list[tuple[list[str], Segment]]:
    """The states of class ``name`` with its ancestors' as one program: ``(labels to write, segment)`` pairs.

    Each segment keeps its lines; its labels are those still visible in ``name``
    (a subclass's override wins) plus an alias (``Golem_L<level>S<index>``), and
    every ``Goto`` in it names the alias of the segment it led to where it was written.

    Raises:
        NotFlattenable: a ``Goto`` into a class outside the chain, or to a label that does not exist.
    """
    chain = [a for a in cat.chain(name) if a.segments is not None]
    if not chain:
        raise NotFlattenable(f"{name} has no states")
    visible: dict[str, tuple[int, int]] = {}
    per_level: list[dict[str, tuple[int, int]]] = []
    for level, actor in enumerate(chain):
        for index, seg in enumerate(actor.segments or ()):
            for label in seg.labels:
                visible[label.lower()] = (level, index)
        per_level.append(dict(visible))
    final = per_level[-1]
    out: list[tuple[list[str], Segment]] = []
    for level, actor in enumerate(chain):
        for index, seg in enumerate(actor.segments or ()):
            labels = [label for label in seg.labels if final.get(label.lower()) == (level, index)]
            items = tuple(_resolve(item, level, chain, per_level) for item in seg.items)
            out.append(([*labels, _alias(level, index)], Segment(seg.labels, items)))
    return out


def _resolve(
    item: StateLine | Flow, level: int, chain: list[ActorDef], per_level: list[dict[str, tuple[int, int]]]
) -> StateLine | Flow:
    if not isinstance(item, Flow) or item.kind != "goto":
        return item
    m = _GOTO.match(item.target)
    if m is None:
        raise NotFlattenable(f"cannot read Goto {item.target!r}")
    owner, label, offset = m.groups()
    where = level
    if owner:
        if owner.lower() == "super":
            where = level - 1
        else:
            names = [a.name.lower() for a in chain]
            if owner.lower() not in names:
                raise NotFlattenable(f"Goto into another class: {item.target}")
            where = names.index(owner.lower())
    if where < 0 or label.lower() not in per_level[where]:
        raise NotFlattenable(f"Goto to an unknown label: {item.target}")
    target = _alias(*per_level[where][label.lower()])
    return Flow("goto", f"{target}+{offset}" if offset and int(offset) else target)


def segment_role(labels: Iterable[str]) -> str | None:
    """The part of a monster's life a segment shows, from its labels: ``walk``, ``attack``, ``pain``, ``death``,
    ``xdeath`` (``None``: no label says)."""
    words = " ".join(labels).lower()
    if "xdeath" in words:
        return "xdeath"
    for role, keys in (
        ("death", ("death", "raise", "burn", "ice", "disintegrate")),
        ("pain", ("pain",)),
        ("attack", ("melee", "missile", "attack", "fire", "heal", "shoot")),
        ("walk", ("spawn", "see", "idle", "walk", "chase")),
    ):
        if any(k in words for k in keys):
            return role
    return None


def spawn_sprite(cat: Catalogue, name: str) -> tuple[str, str] | None:
    """``(sprite, frames)`` of the first state line of ``name``'s ``Spawn`` state, or ``None``."""
    try:
        program = flatten_states(cat, name)
    except NotFlattenable:
        return None
    for index, (labels, _) in enumerate(program):
        if "spawn" in (label.lower() for label in labels):
            for _, seg in program[index:]:
                line = next((i for i in seg.items if isinstance(i, StateLine)), None)
                if line is not None:
                    return line.sprite.upper(), line.frames.strip('"').upper()
            return None
    return None


def write_states(program: Iterable[tuple[list[str], Segment]]) -> str:
    """DECORATE text of a flattened program (:func:`flatten_states`), lines indented for an ``actor`` body."""
    out: list[str] = []
    for labels, seg in program:
        out.extend(f"  {label}:" for label in labels)
        for item in seg.items:
            if isinstance(item, Flow):
                out.append(f"    {item.kind.capitalize()}{' ' + item.target if item.target else ''}")
            else:
                out.append(f"    {item.sprite} {item.frames}{' ' + item.rest if item.rest else ''}")
    return "\n".join(out)
