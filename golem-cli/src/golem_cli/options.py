"""Options shared by many commands, each defined once.

An alias (``StoreOpt``) is an option whose flags and help are the same in every
command; a factory (``episodes_option("Episodes to play.")``) is one whose flags
are the same and whose help names what the command does with it. Options that
always travel together are resolved by one helper: :func:`game_flags` (scenario,
seed, frame skip as settings keys), :func:`store_path`, :class:`ProcgenChoice`
(``--procgen-phase``, ``--maps``, ``--generator``) and
:func:`golem_cli.player.choose_player` (``--model`` with the game options).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

if TYPE_CHECKING:
    from golem.registry import Registry
    from golem.settings import GolemSettings

# --- settings and plugins -----------------------------------------------------

PluginOpt = Annotated[
    Optional[list[str]],
    typer.Option(
        "--plugin",
        "-p",
        help="Select a component by name (loss, model, sampler, sensor, augmentation); no:NAME disables a sensor "
        "or augmentation. Repeatable.",
        metavar="NAME",
    ),
]
SetOpt = Annotated[
    Optional[list[str]],
    typer.Option(
        "--set", help="Override a setting, e.g. --set training.batch_size=16. Repeatable.", metavar="KEY=VALUE"
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for machines instead of a table.")]
DeviceOpt = Annotated[
    Optional[str],
    typer.Option("--device", help="auto (CUDA, then MPS, then CPU), cpu, cuda or mps (training.device)."),
]

# --- the store ------------------------------------------------------------------

StoreOpt = Annotated[
    Optional[Path],
    typer.Option("--store", help="Store directory (default: data.store from the settings).", metavar="PATH"),
]
TagOpt = Annotated[
    Optional[list[str]], typer.Option("--tag", help="Label stored with each recorded episode. Repeatable.")
]


def store_path(settings: GolemSettings, store: Path | None) -> Path:
    """The store a command uses: ``--store`` when given, else ``data.store`` of the settings."""
    return store if store is not None else settings.store_path()


# --- the model ------------------------------------------------------------------


def checkpoint_option(doing: str = "", *, short: bool = True) -> Any:
    """``--model PATH`` (and ``-m`` unless the command's ``-m`` is ``--module``): the checkpoint to ``doing``.

    ``checkpoint_option("to play")`` → "Checkpoint to play (default: the profile's active model)."
    """
    what = f"Checkpoint {doing}".rstrip()
    return typer.Option(
        "--model", *(["-m"] if short else []), help=f"{what} (default: the profile's active model).", metavar="PATH"
    )


# --- the game -------------------------------------------------------------------

ModelScenarioOpt = Annotated[
    Optional[str],
    typer.Option("--scenario", "-s", help="Scenario name, .cfg or .wad (default: the model's, else game.scenario)."),
]
ExpertScenarioOpt = Annotated[
    Optional[str], typer.Option("--scenario", "-s", help="Scenario name, .cfg or .wad (default: the expert's own).")
]
FrameSkipOpt = Annotated[
    Optional[int],
    typer.Option(
        "--frame-skip",
        min=1,
        max=35,
        help="Tics each decision holds its buttons (game.frame_skip); "
        "the model integrates them unless game.timespans=unit.",
    ),
]
WorkersOpt = Annotated[int, typer.Option("--workers", "-w", min=1, max=64, help="Parallel engine processes.")]
MaxStepsOpt = Annotated[Optional[int], typer.Option("--max-steps", min=1, help="Cut episodes after this many tics.")]


class Decisions(StrEnum):
    """``--decisions``: how a model chooses its buttons in play."""

    threshold = "threshold"
    sample = "sample"


DecisionsOpt = Annotated[
    Optional[Decisions],
    typer.Option(
        "--decisions",
        help="How the model chooses its buttons: threshold = press where the probability passes the "
        "checkpoint's thresholds, sample = draw each button from its probability (seeded by the episode's "
        "seed). Default: as the checkpoint says (cloned models threshold; fine-tuned ones as rl.decisions).",
    ),
]


TemperatureOpt = Annotated[
    float,
    typer.Option(
        "--temperature",
        metavar="T",
        help="With sampled decisions, draw each button from sigmoid(logit / T): below 1 the draws follow the "
        "likelier value more often, above 1 less (1: the model's own probabilities).",
    ),
]


def sampled(decisions: Decisions | None) -> bool | None:
    """``--decisions`` as ``load_agent``'s ``sample``: ``None`` (the checkpoint's way) when not given."""
    return None if decisions is None else decisions is Decisions.sample


def episodes_option(help: str) -> Any:
    """``--episodes`` / ``-n`` (at least 1) with the command's own ``help``."""
    return typer.Option("--episodes", "-n", min=1, help=help)


def seed_option(help: str = "Seed of the first episode; episode i uses seed+i.") -> Any:
    """``--seed`` (at least 0) with the command's own ``help``."""
    return typer.Option("--seed", min=0, help=help)


def workers_option(help: str = "Parallel engine processes.") -> Any:
    """``--workers`` / ``-w`` (1 to 64) with the command's own ``help``."""
    return typer.Option("--workers", "-w", min=1, max=64, help=help)


def game_flags(scenario: str | None = None, seed: int | None = None, frame_skip: int | None = None) -> dict[str, Any]:
    """``--scenario``, ``--seed`` and ``--frame-skip`` as the settings keys they set (``None``: not given)."""
    return {"game.scenario": scenario, "game.seed": seed, "game.frame_skip": frame_skip}


# --- generated maps -------------------------------------------------------------

ProcgenPhaseOpt = Annotated[
    Optional[int],
    typer.Option(
        "--procgen-phase",
        help="Play generated maps of this curriculum phase (1, 2, 3) instead of one scenario; "
        "one episode per map (golem-procgen).",
        metavar="P",
    ),
]
MapsOpt = Annotated[int, typer.Option("--maps", min=1, help="Generated maps to play with --procgen-phase.")]
GeneratorOpt = Annotated[
    str, typer.Option("--generator", help="Map generator for --procgen-phase (see `golem plugins list`).")
]


@dataclass(frozen=True)
class ProcgenChoice:
    """``--procgen-phase``, ``--maps`` and ``--generator`` together; ``phase is None``: one scenario instead."""

    phase: int | None
    maps: int = 10
    generator: str = "builtin"

    @property
    def given(self) -> bool:
        return self.phase is not None

    def build(self, settings: GolemSettings, registry: Registry, first_seed: int) -> list[Any]:
        """The generated maps (built once under ``<data.root>/maps/``), map seeds from ``first_seed``."""
        from golem.runtime.generated import generated_maps

        assert self.phase is not None
        return generated_maps(settings, registry, self.phase, self.maps, first_seed, self.generator)


# --- output files ---------------------------------------------------------------


def check_suffixes(paths: list[Path] | None, suffixes: tuple[str, ...], hint: str) -> None:
    """A usage error (exit 2) naming the first of ``paths`` that ends in none of ``suffixes``."""
    for path in paths or []:
        if path.suffix.lower() not in suffixes:
            allowed = " or ".join(suffixes)
            raise typer.BadParameter(f"{path.name}: must end in {allowed}", param_hint=hint)


def module_option(verb: str) -> Any:
    """``--module`` / ``-m``: ``verb`` episodes of one scenario or tag (``module_option("Train on")``)."""
    return typer.Option("--module", "-m", help=f"{verb} episodes of this scenario or tag.")
