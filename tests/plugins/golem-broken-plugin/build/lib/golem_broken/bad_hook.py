"""Imports fine but its registration hook raises."""

import golem


@golem.hookimpl
def register_losses(register) -> None:
    register("half_registered", object())
    raise RuntimeError("this plugin fails while registering")
