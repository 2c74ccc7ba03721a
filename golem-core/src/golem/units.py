"""Quantities as people read them."""

from __future__ import annotations


def human_bytes(n: int, *, short: bool = False) -> str:
    """``1.5 MiB`` (``short``: ``1.5M``)."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            text = f"{size:.0f}" if unit == "B" else f"{size:.1f}"
            return f"{text}{unit[0]}" if short else f"{text} {unit}"
        size /= 1024
    return f"{n} B"
