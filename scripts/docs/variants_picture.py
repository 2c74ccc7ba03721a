"""Draw docs/images/variants.png: a shipped scenario and some of its variants, as the engine renders them.

    python scripts/docs/variants_picture.py                     # defend_the_center, the variants below
    python scripts/docs/variants_picture.py --scenario take_cover --out /tmp/take_cover.png

Each tile is the frame the engine shows after :data:`TICS` tics (headless,
640×480, scaled to the tile) of the original scenario or of a variant built by
``golem procgen vary`` with the modifications and seed under it. Needs golem-procgen
and ViZDoom; takes a few seconds.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: The variants drawn after the original: (modifications, seed).
VARIANTS: tuple[tuple[tuple[str, ...], int], ...] = (
    (("textures",), 1),
    (("textures", "light"), 2),
    (("monsters",), 3),
    (("textures", "monsters", "light"), 4),
    (("textures", "monsters", "items", "light", "view_height", "obstacles"), 60),
)
#: Tics played before the frame is taken (the monsters have started walking in).
TICS = 140
#: Tile size in pixels and tiles per row.
TILE = (360, 270)
COLUMNS = 3
CAPTION = 22


def main(argv: list[str] | None = None) -> int:
    from PIL import Image, ImageDraw

    from golem.scenarios import resolve_scenario
    from golem_procgen.variants import build_variant
    from golem_procgen.variants.render import first_frame

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="defend_the_center", help="a shipped scenario")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images" / "variants.png", help="PNG to write")
    args = parser.parse_args(argv)

    tiles: list[tuple[str, Image.Image]] = []
    original = resolve_scenario(args.scenario).config
    frame = first_frame(original, "RES_640X480", tics=TICS)
    tiles.append((f"{args.scenario} (original)", Image.fromarray(frame)))
    with tempfile.TemporaryDirectory(prefix="golem-variants-") as tmp:
        for mods, seed in VARIANTS:
            info = build_variant(args.scenario, mods, seed, Path(tmp) / f"v{seed}.wad")
            frame = first_frame(info.config, "RES_640X480", tics=TICS)
            label = "all" if len(mods) == 6 else "+".join(mods)
            tiles.append((f"{label}, seed {seed}", Image.fromarray(frame)))
    rows = (len(tiles) + COLUMNS - 1) // COLUMNS
    sheet = Image.new("RGB", (COLUMNS * TILE[0], rows * (TILE[1] + CAPTION)), "white")
    draw = ImageDraw.Draw(sheet)
    for i, (label, image) in enumerate(tiles):
        x, y = (i % COLUMNS) * TILE[0], (i // COLUMNS) * (TILE[1] + CAPTION)
        sheet.paste(image.resize(TILE, Image.LANCZOS), (x, y + CAPTION))
        draw.text((x + 6, y + 5), label, fill="black")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    sheet.convert("P", palette=Image.ADAPTIVE, colors=256).save(args.out, optimize=True)  # Doom draws 256 colours
    print(f"wrote {args.out.relative_to(REPO) if args.out.is_relative_to(REPO) else args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
