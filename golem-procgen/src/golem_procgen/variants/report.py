"""One line per modification of a built variant, for people (``golem procgen vary``'s output)."""

from __future__ import annotations

from typing import Any

#: Renamings shown before "…".
SHOWN = 4


def _pairs(mapping: dict[str, str]) -> str:
    items = [f"{a}→{b}" for a, b in mapping.items()]
    return ", ".join(items[:SHOWN]) + (f", … ({len(items)} in all)" if len(items) > SHOWN else "")


def describe(modification: str, details: Any) -> str:
    """What ``modification`` changed, from its entry of :attr:`VariantInfo.details`."""
    if details is None:
        return "nothing"
    if modification == "textures":
        walls, flats = details.get("walls", {}), details.get("flats", {})
        text = f"{len(walls)} wall texture(s), {len(flats)} flat(s) replaced"
        changed = _pairs({**walls, **flats})
        return text + (f": {changed}" if changed else "")
    if modification in ("monsters", "items"):
        if "note" in details:
            return details["note"]
        parts = []
        for original, look in details.items():
            bits = [f"sprite {look['sprite']}" if look.get("sprite") else "own sprite"]
            if look.get("tint"):
                bits.append(f"tint {look['tint']}")
            if look.get("scale") is not None:
                bits.append(f"scale {look['scale']:.2f}")
            parts.append(f"{original} → {look['actor']} ({', '.join(bits)})")
        return "; ".join(parts)
    if modification == "light":
        levels = ", ".join(f"{a}→{b}" for a, b in details.get("levels", {}).items())
        return f"×{details['scale']:.2f} {details['shift']:+d}: {levels}"
    if modification == "view_height":
        return f"eyes at {details['view_height']} (Doom: {details['default']}), player class {details['player']}"
    if modification == "obstacles":
        return ", ".join(f"{o['class']} at ({o['x']}, {o['y']})" for o in details)
    return str(details)
