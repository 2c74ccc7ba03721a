"""Options shared by many commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

PluginOpt = Annotated[
    Optional[list[str]],
    typer.Option(
        "--plugin",
        "-p",
        help="Select a component by name (loss, model, sampler, sensor); no:NAME disables a sensor. Repeatable.",
        metavar="NAME",
    ),
]
SetOpt = Annotated[
    Optional[list[str]],
    typer.Option("--set", help="Override a setting, e.g. --set training.batch_size=16. Repeatable.", metavar="KEY=VALUE"),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for machines instead of a table.")]
WorkersOpt = Annotated[int, typer.Option("--workers", "-w", min=1, max=64, help="Parallel engine processes.")]
MaxStepsOpt = Annotated[Optional[int], typer.Option("--max-steps", min=1, help="Cut episodes after this many tics.")]
StoreOpt = Annotated[
    Optional[Path],
    typer.Option("--store", help="Store directory (default: data.store from the settings).", metavar="PATH"),
]
DeviceOpt = Annotated[
    Optional[str],
    typer.Option("--device", help="auto (CUDA, then MPS, then CPU), cpu, cuda or mps (training.device)."),
]
ProcgenPhaseOpt = Annotated[
    Optional[int],
    typer.Option("--procgen-phase", help="Play generated maps of this curriculum phase (1, 2, 3) instead of one scenario; "
                 "one episode per map (golem-procgen).", metavar="P"),
]
MapsOpt = Annotated[int, typer.Option("--maps", min=1, help="Generated maps to play with --procgen-phase.")]
GeneratorOpt = Annotated[
    str, typer.Option("--generator", help="Map generator for --procgen-phase (see `golem plugins list`).")
]
