"""UDMF ``TEXTMAP`` text ↔ blocks: parse a map's things, vertices, lines, sides and sectors, edit them, write them.

A TEXTMAP is a list of global assignments (``namespace = "zdoom";``) and blocks
(``thing { x = 64.0; type = 1; }``). :func:`parse_textmap` keeps every value as
written (``"BRICK12"`` with its quotes, ``64.000``, ``true``) so that writing it
back changes nothing but what was edited; keys are lower-cased (UDMF keys are
case-insensitive) and comments are dropped. :func:`write_textmap` gives the
same text for the same blocks (deterministic), and ``parse_textmap(write_textmap(m))``
equals ``m``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from golem.errors import GolemError

#: One token of UDMF text: comments and blanks (skipped), strings, numbers, words, punctuation.
_TOKEN = re.compile(
    r"""
    (?P<skip>\s+|//[^\n]*|/\*.*?\*/)
    |(?P<string>"(?:[^"\\]|\\.)*")
    |(?P<number>[+-]?(?:0[xX][0-9A-Fa-f]+|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?))
    |(?P<word>[A-Za-z_][A-Za-z0-9_]*)
    |(?P<punct>[{}=;])
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass
class Block:
    """One UDMF block: its ``kind`` (``thing``, ``vertex``, ``linedef``, ``sidedef``, ``sector``, …) and its
    fields, key (lower case) → value as written (strings keep their quotes)."""

    kind: str
    fields: dict[str, str] = field(default_factory=dict)

    def text(self, key: str, default: str | None = None) -> str | None:
        """A string field without its quotes (escapes resolved), or ``default``."""
        raw = self.fields.get(key)
        if raw is None:
            return default
        if raw.startswith('"'):
            return re.sub(r"\\(.)", r"\1", raw[1:-1])
        return raw

    def number(self, key: str, default: float = 0.0) -> float:
        """A numeric field, or ``default``."""
        raw = self.fields.get(key)
        if raw is None:
            return default
        try:
            return float(int(raw, 0)) if raw.lower().lstrip("+-").startswith("0x") else float(raw)
        except ValueError:
            raise GolemError(f"TEXTMAP: {self.kind} field {key} is not a number: {raw}") from None

    def flag(self, key: str) -> bool:
        """A boolean field (absent: false)."""
        return self.fields.get(key, "false").lower() == "true"

    def set_text(self, key: str, value: str) -> None:
        """Set a string field (quoted and escaped here)."""
        self.fields[key] = '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'

    def set_int(self, key: str, value: int) -> None:
        """Set an integer field."""
        self.fields[key] = str(int(value))


@dataclass
class Textmap:
    """A parsed TEXTMAP: global assignments (``namespace`` first, as written) and blocks in file order."""

    assignments: dict[str, str]
    blocks: list[Block]

    @property
    def namespace(self) -> str:
        """The map's namespace (``zdoom``, ``doom``, …), lower case; empty when none is given."""
        raw = self.assignments.get("namespace", "")
        return raw.strip('"').lower()

    def of_kind(self, kind: str) -> list[Block]:
        """The blocks of one kind in file order (their index is their number: ``linedef.v1`` names a vertex)."""
        return [b for b in self.blocks if b.kind == kind]


def parse_textmap(text: str) -> Textmap:
    """Parse UDMF text.

    Raises:
        GolemError: one line naming the TEXTMAP line that is not UDMF.
    """
    tokens: list[tuple[str, str, int]] = []
    pos = 0
    line = 1
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise GolemError(f"TEXTMAP line {line}: unexpected {text[pos : pos + 12]!r}")
        kind = m.lastgroup or ""
        if kind != "skip":
            tokens.append((kind, m.group(), line))
        line += m.group().count("\n")
        pos = m.end()
    assignments: dict[str, str] = {}
    blocks: list[Block] = []
    i = 0

    def expect(index: int, value: str) -> None:
        if index >= len(tokens) or tokens[index][1] != value:
            where = tokens[index][2] if index < len(tokens) else line
            got = tokens[index][1] if index < len(tokens) else "the end"
            raise GolemError(f"TEXTMAP line {where}: expected {value!r}, got {got!r}")

    def value_at(index: int) -> str:
        if index >= len(tokens) or tokens[index][0] not in ("string", "number", "word"):
            where = tokens[index][2] if index < len(tokens) else line
            raise GolemError(f"TEXTMAP line {where}: expected a value")
        return tokens[index][1]

    while i < len(tokens):
        kind, word, where = tokens[i]
        if kind != "word":
            raise GolemError(f"TEXTMAP line {where}: expected a key or a block name, got {word!r}")
        if i + 1 < len(tokens) and tokens[i + 1][1] == "=":
            assignments[word.lower()] = value_at(i + 2)
            expect(i + 3, ";")
            i += 4
            continue
        expect(i + 1, "{")
        block = Block(word.lower())
        i += 2
        while i < len(tokens) and tokens[i][1] != "}":
            if tokens[i][0] != "word":
                raise GolemError(f"TEXTMAP line {tokens[i][2]}: expected a field name, got {tokens[i][1]!r}")
            key = tokens[i][1].lower()
            expect(i + 1, "=")
            block.fields[key] = value_at(i + 2)
            expect(i + 3, ";")
            i += 4
        expect(i, "}")
        blocks.append(block)
        i += 1
    return Textmap(assignments=assignments, blocks=blocks)


def write_textmap(textmap: Textmap) -> str:
    """The UDMF text of ``textmap``: assignments, then one block after another (no comments)."""
    out = [f"{key} = {value};" for key, value in textmap.assignments.items()]
    out.append("")
    for block in textmap.blocks:
        out.append(block.kind)
        out.append("{")
        out.extend(f"{key} = {value};" for key, value in block.fields.items())
        out.append("}")
        out.append("")
    return "\n".join(out)
