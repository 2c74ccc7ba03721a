"""``golem procgen …``: sample configurations, build maps, draw them, vary a shipped scenario's look.

    golem procgen sample --phase 1 --seed 7 [--json]
    golem procgen build --phase 2 --seed 7 [--backend builtin] [--out map.wad]
    golem procgen preview map.wad --out map.png
    golem procgen nav any.wad [--map MAP01] [-o any.nav.json]
    golem procgen curriculum --phases 1,2,3 --maps-per-round 20
    golem procgen vary take_cover --seed 7 --textures --monsters [-o variants/] [--screenshot v.png]

Recording and evaluation on generated maps are options of the core commands:
``golem run record --expert explorer --procgen-phase 1 --maps 50`` and
``golem run evaluate --procgen-phase 2 --maps 20``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console
from rich.table import Table

from golem.errors import GolemError
from golem_procgen.navcommand import nav_command
from golem_procgen.space import PARAMETERS, PRIORS, phase_constraints

app = typer.Typer(
    help="Procedural maps: sample a curriculum phase, build a map, preview it, vary a scenario's look.",
    no_args_is_help=True,
)

PhaseOpt = Annotated[
    int, typer.Option("--phase", help="Curriculum phase: 1 (simple), 2 (expansion), 3 (the full space).")
]
SeedOpt = Annotated[int, typer.Option("--seed", min=0, help="Seed of the configuration draw and of the map.")]
SetOpt = Annotated[
    Optional[list[str]],
    typer.Option("--set", help='Override a setting, e.g. procgen.space.size=["micro"].', metavar="KEY=VALUE"),
]


def _root(ctx: typer.Context) -> Any:
    return ctx.find_root().obj


def _generator(ctx: typer.Context, backend: str, set_: list[str] | None) -> tuple[Any, Any]:
    """The generator ``backend`` built for the run's settings; it must sample curriculum phases."""
    root = _root(ctx)
    settings = root.resolve(set_=set_).settings
    registry = root.host.registry
    generator = registry.get("map_generators", backend).obj(settings)
    if not callable(getattr(generator, "sample", None)):
        hint = " (variants: golem procgen vary)" if backend == "vary" else ""
        raise GolemError(f"map generator {backend!r} cannot sample curriculum phases{hint}")
    return generator, root


@app.command("sample")
def sample_command(
    ctx: typer.Context,
    phase: PhaseOpt = 1,
    seed: SeedOpt = 0,
    backend: Annotated[
        str, typer.Option("--backend", help="Generator whose space is sampled (builtin, oblige).")
    ] = "builtin",
    json_: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    set_: SetOpt = None,
) -> None:
    """Draw one map configuration of a curriculum phase (the phase's bounds, then the conditional priors)."""
    generator, root = _generator(ctx, backend, set_)
    config = generator.sample(phase, seed)
    out: Console = getattr(root, "out", Console())
    if json_:
        out.print_json(json.dumps(config.as_dict()))
        return
    bounds = phase_constraints(phase, generator.settings.space)
    table = Table(title=f"phase {phase}, seed {seed}", show_edge=False)
    table.add_column("parameter")
    table.add_column("value")
    table.add_column(f"phase {phase} allows")
    for name in PARAMETERS:
        table.add_row(name, config.params[name], ", ".join(bounds[name]))
    out.print(table)
    for name in config.priors:
        out.print(f"prior fired: {name} — {PRIORS[name]}", highlight=False)


@app.command("build")
def build_command(
    ctx: typer.Context,
    phase: PhaseOpt = 1,
    seed: SeedOpt = 0,
    backend: Annotated[
        str, typer.Option("--backend", help="Map generator: builtin, or oblige (after `make oblige`).")
    ] = "builtin",
    out: Annotated[
        Optional[Path],
        typer.Option(
            "--out",
            "-o",
            help="WAD to write (default: procgen-p<P>-s<S>.wad); its .nav.json and .cfg are written beside it.",
            metavar="PATH",
        ),
    ] = None,
    set_: SetOpt = None,
) -> None:
    """Sample a configuration of PHASE from SEED and build its map (WAD + navigation sidecar + scenario config)."""
    generator, root = _generator(ctx, backend, set_)
    config = generator.sample(phase, seed)
    target = out if out is not None else Path(f"procgen-p{phase}-s{seed}.wad")
    if target.suffix.lower() != ".wad":
        raise GolemError(f"--out must end in .wad, got {target.name}")
    try:
        info = generator.build(config.as_dict(), seed, target)
    except OSError as exc:  # an unwritable folder, a path through a file, a full disk
        where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(target) else ""
        raise GolemError(f"cannot write {target}: {exc.strerror or exc}{where}") from None
    console: Console = getattr(root, "out", Console())
    params = ", ".join(f"{k}={v}" for k, v in config.params.items())
    console.print(f"built {info.path} ({info.map}, {backend}): {params}", highlight=False, soft_wrap=True)
    if config.priors:
        console.print(f"priors fired: {', '.join(config.priors)}", highlight=False)
    console.print(f"play it: golem run play --scenario {info.config}", highlight=False, soft_wrap=True)


@app.command("preview")
def preview_command(
    ctx: typer.Context,
    wad: Annotated[Path, typer.Argument(help="The map's WAD.", metavar="MAP.wad")],
    out: Annotated[Path, typer.Option("--out", "-o", help="PNG to write.", metavar="PATH")] = Path("map.png"),
    map_name: Annotated[str, typer.Option("--map", help="Map lump.")] = "MAP01",
    size: Annotated[int, typer.Option("--size", min=128, max=4096, help="Image side, pixels.")] = 768,
) -> None:
    """Draw the map from above: walls, doors, exit, teleporters, start, monsters, items."""
    from golem_procgen.preview import write_preview

    if out.suffix.lower() != ".png":
        raise GolemError(f"--out must end in .png, got {out.name}")
    write_preview(wad, out, map_name, size)
    console: Console = getattr(_root(ctx), "out", Console())
    console.print(f"preview → {out}", highlight=False, soft_wrap=True)


app.command("nav")(nav_command)


@app.command("curriculum")
def curriculum_command(
    ctx: typer.Context,
    phases: Annotated[str, typer.Option("--phases", help="Phases in order, comma-separated.")] = "1,2,3",
    maps_per_round: Annotated[
        int, typer.Option("--maps-per-round", min=1, help="Fresh maps the expert plays per round.")
    ] = 20,
    rounds: Annotated[
        int, typer.Option("--rounds", min=1, help="Rounds a phase may take before it is promoted anyway.")
    ] = 2,
    promote_at: Annotated[
        float, typer.Option("--promote-at", min=0.0, max=1.0, help="Held-out completion rate that promotes a phase.")
    ] = 0.5,
    eval_maps: Annotated[
        int, typer.Option("--eval-maps", min=1, help="Held-out maps (seeds 10000…) per evaluation.")
    ] = 10,
    updates_per_round: Annotated[
        Optional[int],
        typer.Option("--updates-per-round", min=1, help="Optimiser steps per round (default: training.epochs)."),
    ] = None,
    backend: Annotated[str, typer.Option("--backend", help="Map generator.")] = "builtin",
    expert: Annotated[str, typer.Option("--expert", "-e", help="Demonstrator (plays generated maps).")] = "explorer",
    workers: Annotated[
        int, typer.Option("--workers", "-w", min=1, max=64, help="Engine processes recording each round's maps.")
    ] = 1,
    resume: Annotated[
        bool, typer.Option("--resume", help="Fine-tune the profile's active model from the first round on.")
    ] = False,
    store: Annotated[
        Optional[Path], typer.Option("--store", help="Store directory (default: data.store).", metavar="PATH")
    ] = None,
    json_: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    plugin: Annotated[
        Optional[list[str]],
        typer.Option("--plugin", "-p", help="Select a component by name. Repeatable.", metavar="NAME"),
    ] = None,
    set_: SetOpt = None,
) -> None:
    """Train through the curriculum: each phase records fresh maps with the expert and fine-tunes on all of them.

    A phase is promoted when the model reaches the exit on --promote-at of its held-out maps, or after --rounds
    rounds (forced). The profile's active model is the result.
    """
    from golem_procgen.curriculum import CurriculumPlan, curriculum

    try:
        order = tuple(int(p) for p in phases.split(",") if p.strip())
    except ValueError:
        raise GolemError(f"--phases takes comma-separated phase numbers, e.g. 1,2,3; got {phases!r}") from None
    root = _root(ctx)
    settings = root.resolve(plugin=plugin, set_=set_).settings
    out: Console = getattr(root, "out", Console())
    err: Console = getattr(root, "err", Console(stderr=True))
    plan = CurriculumPlan(
        phases=order,
        maps_per_round=maps_per_round,
        max_rounds=rounds,
        promote_at=promote_at,
        eval_maps=eval_maps,
        updates_per_round=updates_per_round,
        generator=backend,
        expert=expert,
        resume=resume,
        store=store,
        workers=workers,
    )

    def on_round(row) -> None:
        verdict = {"passed": "promoted", "forced": "promoted (rounds used up)", None: "another round"}[row.promoted]
        err.print(
            f"phase {row.phase} round {row.round}: expert exits {row.expert_exits:.0%} of {len(row.map_seeds)} "
            f"maps, {row.updates} updates, model reaches the exit on {row.completion:.0%} held out → {verdict}",
            highlight=False,
        )

    report = curriculum(
        settings, root.host.registry, plan, on_round=on_round, on_stage=lambda t: err.print(t, highlight=False)
    )
    if json_:
        out.print_json(json.dumps(report.to_dict()))
        return
    table = Table(title="curriculum", show_edge=False)
    for col in (
        "phase",
        "round",
        "maps",
        "frames",
        "expert exits",
        "updates",
        "val loss",
        "held-out exits",
        "promoted",
    ):
        table.add_column(col)
    for r in report.rounds:
        table.add_row(
            str(r.phase),
            str(r.round),
            str(len(r.map_seeds)),
            str(r.frames),
            f"{r.expert_exits:.0%}",
            str(r.updates),
            "–" if r.val_loss is None else f"{r.val_loss:.4f}",
            "–" if r.completion is None else f"{r.completion:.0%}",
            r.promoted or "–",
        )
    out.print(table)
    out.print(f"model → {report.model}" + (" (interrupted)" if report.interrupted else ""), highlight=False)
    if report.interrupted:
        raise typer.Exit(130)


def _knob(flag: str, text: str) -> Any:
    return typer.Option(flag, help=text)


@app.command("vary")
def vary_command(
    ctx: typer.Context,
    scenario: Annotated[str, typer.Argument(help="A shipped scenario (take_cover, …) or a scenario .cfg.")],
    seed: Annotated[
        int, typer.Option("--seed", min=0, help="Seed of the variant's draws (the same seed gives the same files).")
    ] = 0,
    textures: Annotated[bool, _knob("--textures", "Replace wall textures and flats by others of the IWAD.")] = False,
    monsters: Annotated[
        bool, _knob("--monsters", "Show each monster class with another monster's sprites, tinted, scaled.")
    ] = False,
    items: Annotated[
        bool, _knob("--items", "Show each health/armour/ammo pickup with another pickup's sprite.")
    ] = False,
    light: Annotated[bool, _knob("--light", "Scale and shift the sectors' light levels (128-255).")] = False,
    view_height: Annotated[
        bool, _knob("--view-height", "Move the player's eyes to 32-48 map units (Doom: 41).")
    ] = False,
    obstacles: Annotated[bool, _knob("--obstacles", "Place 2-4 solid decorations where they cut nothing off.")] = False,
    all_: Annotated[bool, typer.Option("--all", help="Every modification.")] = False,
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder to write the variant's .wad and .cfg to.", metavar="DIR")
    ] = Path("."),
    screenshot: Annotated[
        Optional[Path],
        typer.Option("--screenshot", help="Save the first frame the engine renders of the variant.", metavar="PNG"),
    ] = None,
    json_: Annotated[bool, typer.Option("--json", help="Print what was built as JSON.")] = False,
) -> None:
    """Write a variant of SCENARIO: the same layout and rules, another look (textures, monsters, items, light,
    view height, obstacles), as <scenario>-<modifications>-seed<NNNNNN>.wad and .cfg in --out.

    The same scenario, modifications and seed give the same files. Play it with
    `golem run play --scenario <the .cfg>`; experts play it as they play the scenario.
    """
    from golem_procgen.variants.build import MODIFICATIONS, build_variant, normalise_modifications, variant_stem

    chosen = {
        "textures": textures,
        "monsters": monsters,
        "items": items,
        "light": light,
        "view_height": view_height,
        "obstacles": obstacles,
    }
    names = list(MODIFICATIONS) if all_ else [name for name, on in chosen.items() if on]
    if not names:
        raise GolemError(
            "choose at least one modification: --"
            + ", --".join(m.replace("_", "-") for m in MODIFICATIONS)
            + " or --all"
        )
    if screenshot is not None and screenshot.suffix.lower() != ".png":
        raise GolemError(f"--screenshot must end in .png, got {screenshot.name}")
    mods = normalise_modifications(names)
    stem = variant_stem(Path(scenario).stem if scenario.lower().endswith(".cfg") else scenario, mods, seed)
    target = out / f"{stem}.wad"
    try:
        info = build_variant(scenario, mods, seed, target)
    except OSError as exc:  # an unwritable folder, a path through a file, a full disk
        raise GolemError(f"cannot write {target}: {exc.strerror or exc}") from None
    if screenshot is not None:
        from golem_procgen.variants.render import save_first_frame

        save_first_frame(info.config, screenshot)
    console: Console = getattr(_root(ctx), "out", Console())
    if json_:
        data = info.as_dict() | {"screenshot": str(screenshot) if screenshot is not None else None}
        console.print_json(json.dumps(data))
        return
    from golem_procgen.variants.report import describe

    console.print(
        f"variant {info.path} ({info.map} of {info.scenario}, seed {info.seed})", highlight=False, soft_wrap=True
    )
    for mod in info.modifications:
        console.print(f"  {mod}: {describe(mod, info.details.get(mod))}", highlight=False, soft_wrap=True)
    if screenshot is not None:
        console.print(f"first frame → {screenshot}", highlight=False, soft_wrap=True)
    console.print(f"play it: golem run play --scenario {info.config}", highlight=False, soft_wrap=True)
