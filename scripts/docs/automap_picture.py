"""Draw docs/images/automap.png: what an agent sees on a generated map — its frame and its automap — as the
scout walks to the exit.

    python scripts/docs/automap_picture.py                       # phase-1 map of seed 10,002
    python scripts/docs/automap_picture.py --seed 7 --out /tmp/automap.png

The scout (``golem run record --expert scout``) plays the map, deciding every four tics; at :data:`SHOTS`
the picture takes the two arrays the sensors store for the model — the visual sensor's RGB ``[3, 64, 64]`` and
the automap sensor's ``[1, 64, 64]`` — and draws them side by side, scaled up. Needs golem-procgen,
golem-sensors-automap and ViZDoom; takes a few seconds.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: Decisions (of four tics) after which a pair is drawn.
SHOTS = (0, 25, 50, 75)
#: Side of a drawn 64×64 array, pixels; height of a caption.
SIDE = 192
CAPTION = 22


def main(argv: list[str] | None = None) -> int:
    import tempfile

    from PIL import Image, ImageDraw

    from golem.plugins import load_plugins
    from golem.profiles import PROFILES
    from golem.runtime.generated import WorldPlan, build_world
    from golem.runtime.session import Session
    from golem.settings import GolemSettings
    from golem_procgen.scout import ScoutExpert
    from golem_sensors_automap import AutomapSensor

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=10_002, help="seed of the phase-1 map (builtin generator)")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images" / "automap.png", help="PNG to write")
    args = parser.parse_args(argv)

    host = load_plugins()
    with tempfile.TemporaryDirectory(prefix="golem-automap-") as tmp:
        settings = GolemSettings.model_validate({"data": {"root": tmp}, "game": {"frame_skip": 4}})
        world = build_world(settings, host.registry, WorldPlan(generator="builtin", phase=1), args.seed)
        visual = host.registry.get("sensors", "visual").obj(settings)
        automap = AutomapSensor(settings)
        scout = ScoutExpert(PROFILES[settings.brain.profile], settings)
        pairs: list[tuple[int, Image.Image, Image.Image]] = []
        with Session(settings, [visual, automap], scenario=world.scenario, configurers=[scout]) as session:
            session.new_episode(args.seed)
            scout.reset(session.game)
            for decision in range(max(SHOTS) + 1):
                if session.game.is_episode_finished():
                    break
                if decision in SHOTS:
                    seen = session.observe()
                    frame = Image.fromarray(seen[visual.key].transpose(1, 2, 0))
                    drawn = Image.fromarray(seen[automap.key][0])
                    pairs.append((decision * 4, frame, drawn))
                session.act(scout.act(session.game, session.game.get_state()))
    sheet = Image.new("RGB", (2 * SIDE * len(pairs) + 8 * (len(pairs) - 1), SIDE + CAPTION), "white")
    draw = ImageDraw.Draw(sheet)
    for i, (tic, frame, drawn) in enumerate(pairs):
        x = i * (2 * SIDE + 8)
        sheet.paste(frame.resize((SIDE, SIDE), Image.NEAREST), (x, CAPTION))
        sheet.paste(drawn.convert("RGB").resize((SIDE, SIDE), Image.NEAREST), (x + SIDE, CAPTION))
        draw.text((x + 6, 5), f"tic {tic}: frame | automap", fill="black")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(args.out, optimize=True)
    print(f"wrote {args.out.relative_to(REPO) if args.out.is_relative_to(REPO) else args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
