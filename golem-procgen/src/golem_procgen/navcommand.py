"""``golem procgen nav WAD``: build the navigation sidecar of any WAD's map, so the explorer can play it.

    golem procgen nav map.wad                      # map.nav.json beside it
    golem procgen nav doom2.wad --map MAP07 -o map07.nav.json

A WAD without the map, a map without a player start or exit, and a map whose
exit the sidecar finds no way to (keys, switches and doors included) are one
line and a non-zero exit; nothing is written then. The sidecar is written
atomically.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console

from golem.atomic import atomic_write
from golem.errors import GolemError
from golem_procgen.navigation import SUFFIX, WAD_CELL, sidecar_path


def nav_command(
    ctx: typer.Context,
    wad: Annotated[Path, typer.Argument(help="The WAD holding the map.", metavar="WAD")],
    map_name: Annotated[str, typer.Option("--map", help="Map lump (MAP01, E1M1, …).")] = "MAP01",
    out: Annotated[
        Optional[Path],
        typer.Option(
            "--out", "-o", help=f"Sidecar to write (default: beside the WAD, <name>{SUFFIX}).", metavar="PATH"
        ),
    ] = None,
    cell: Annotated[int, typer.Option("--cell", min=16, max=128, help="Cell side, map units.")] = WAD_CELL,
) -> None:
    """Build a map's navigation sidecar from its WAD, so the explorer can play it.

    The sidecar holds the map's cells and walls, its doors, keys, switches, lifts, teleports and exit. A WAD
    without the map, a map without a player start or an exit, or one whose exit cannot be reached is refused.
    """
    from golem_procgen.wadnav import nav_from_wad, solvable_or_raise

    target = out if out is not None else sidecar_path(wad)
    if not target.name.endswith(".json"):
        raise GolemError(f"--out must end in .json, got {target.name}")
    nav = nav_from_wad(wad, map_name, cell)
    solvable_or_raise(nav, f"map {nav['map']} in {wad}")
    try:
        with atomic_write(target) as fh:
            fh.write(json.dumps(nav, separators=(",", ":")).encode())
    except OSError as exc:
        raise GolemError(f"cannot write {target}: {exc.strerror or exc}") from None
    root: Any = ctx.find_root().obj
    console: Console = getattr(root, "out", None) or Console()
    kinds = Counter(s["kind"] for s in nav["sectors"])
    counts = [(kinds[k], k) for k in ("door", "lift", "lowering")]
    counts += [(len(nav["keys"]), "key"), (len(nav["switches"]), "switch"), (len(nav["jumps"]), "teleporting move")]
    parts = [f"{n} {what}" + ("" if n == 1 else "es" if what.endswith("ch") else "s") for n, what in counts if n]
    console.print(
        f"nav → {target} ({nav['width']}×{nav['height']} cells of {nav['cell']:g} units, {len(nav['sectors'])} sectors"
        + (": " + ", ".join(parts) if parts else "")
        + f"; exit by {nav['exit_trigger']})",
        highlight=False,
        soft_wrap=True,
    )
