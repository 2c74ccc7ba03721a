"""What the commands print for people: shared number formats and the per-action score table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table

from golem.units import human_bytes  # noqa: F401  (re-exported: the commands import it from here)


def number(value: float | None, fmt: str = ".3f") -> str:
    """``value`` formatted, or an em dash where it is undefined (0/0)."""
    return "—" if value is None else format(value, fmt)


def action_scores(title: str, actions: Mapping[str, Any], caption: str, *, support: str = "support") -> Table:
    """Per action: precision, recall, F1 (``—`` where 0/0), steps pressed and steps predicted."""
    table = Table(title=title)
    for col in ("action", "precision", "recall", "F1", support, "predicted"):
        table.add_column(col, justify="left" if col == "action" else "right")
    for name, s in actions.items():
        table.add_row(name, number(s.precision), number(s.recall), number(s.f1), str(s.support), str(s.predicted))
    table.caption = caption
    return table
