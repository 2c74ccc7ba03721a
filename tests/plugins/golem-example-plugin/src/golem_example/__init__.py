"""A third-party plugin written the way the README tells plugin authors to."""

from __future__ import annotations

import torch
from torch import nn

import golem


class L1Loss(nn.Module):
    """Mean absolute error between sigmoid(logits[B, T, A]) and targets[B, T, A]."""

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return (torch.sigmoid(logits) - targets).abs().mean()


def build_l1(settings, n_actions: int) -> nn.Module:
    return L1Loss()


@golem.hookimpl
def register_losses(register) -> None:
    register("example_l1", build_l1)
    register("example_scaled_l1", build_scaled_l1, settings=ScaledL1Settings)


@golem.hookimpl
def register_commands(app) -> None:
    import typer

    @app.command("example-hello")
    def hello(name: str = typer.Option("world")) -> None:
        """Say hello (a command added by a plugin)."""
        typer.echo(f"hello {name} from golem-example-plugin")


# --- a component with its own validated settings -----------------------------

from pydantic import Field  # noqa: E402

from golem.settings import ComponentSettings, section  # noqa: E402


class ScaledL1Settings(ComponentSettings):
    """``loss.example_scaled_l1``: a third party's validated settings, without touching the core."""

    key = "loss.example_scaled_l1"
    scale: float = Field(1.0, gt=0.0, description="factor on the mean absolute error")


class ScaledL1Loss(L1Loss):
    def __init__(self, scale: float) -> None:
        super().__init__()
        self.scale = scale

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return self.scale * super().forward(logits, targets)


def build_scaled_l1(settings, n_actions: int) -> nn.Module:
    return ScaledL1Loss(section(settings, ScaledL1Settings).scale)


# --- a map generator: one square room with a player start ---------------------

import struct  # noqa: E402
from pathlib import Path  # noqa: E402


class BoxGenerator:
    """Writes a classic-format MAP01: a square room of side ``config["size"]`` map units, the player in the middle."""

    def __init__(self, settings) -> None:
        self.settings = settings

    def build(self, config, seed: int, path: Path) -> dict:
        from golem.atomic import atomic_write
        from golem.wad import build_wad

        half = int(config.get("size", 512)) // 2
        corners = [(-half, -half), (-half, half), (half, half), (half, -half)]
        vertexes = b"".join(struct.pack("<hh", x, y) for x, y in corners)
        linedefs = b"".join(struct.pack("<HHHHHHH", i, (i + 1) % 4, 1, 0, 0, i, 0xFFFF) for i in range(4))
        sidedefs = b"".join(struct.pack("<hh8s8s8sH", 0, 0, b"-", b"-", b"STARTAN3", 0) for _ in range(4))
        sectors = struct.pack("<hh8s8shHH", 0, 128, b"FLOOR4_8", b"CEIL3_5", 192, 0, 0)
        things = struct.pack("<hhHHH", 0, 0, (seed * 45) % 360, 1, 7)
        data = build_wad(
            [
                ("MAP01", b""),
                ("THINGS", things),
                ("LINEDEFS", linedefs),
                ("SIDEDEFS", sidedefs),
                ("VERTEXES", vertexes),
                ("SECTORS", sectors),
            ]
        )
        with atomic_write(Path(path)) as fh:
            fh.write(data)
        return {"map": "MAP01", "path": str(path)}


@golem.hookimpl
def register_map_generators(register) -> None:
    register("example_box", BoxGenerator)


# --- an expert that thinks slowly: the multiplayer lockstep test's slow player ---------

import time as _time  # noqa: E402
from typing import Any, ClassVar  # noqa: E402

from golem.experts import Expert  # noqa: E402


class SluggishSettings(ComponentSettings):
    """``experts.sluggish``: how long each decision takes."""

    key = "experts.sluggish"
    delay_ms: float = Field(4.0, ge=0.0, description="milliseconds each decision takes")


class SluggishExpert(Expert):
    """Walks forward, taking ``experts.sluggish.delay_ms`` per decision (a slow network in a test)."""

    name: ClassVar[str] = "sluggish"
    scenarios: ClassVar[tuple[str, ...]] = ("cig",)
    settings_model: ClassVar[Any] = SluggishSettings

    def act(self, game: Any, state: Any) -> list[int]:
        _time.sleep(section(self.settings, SluggishSettings).delay_ms / 1000.0)
        return self.press("MOVE_FORWARD")


@golem.hookimpl
def register_experts(register) -> None:
    register("sluggish", SluggishExpert)
