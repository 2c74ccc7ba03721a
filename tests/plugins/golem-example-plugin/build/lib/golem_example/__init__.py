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


@golem.hookimpl
def register_commands(app) -> None:
    import typer

    @app.command("example-hello")
    def hello(name: str = typer.Option("world")) -> None:
        """Say hello (a command added by a plugin)."""
        typer.echo(f"hello {name} from golem-example-plugin")
