"""The ``farama`` plugin: the ``vizdoom`` Gymnasium environment and the ``minari`` data format."""

from __future__ import annotations

from golem.plugins import hookimpl


@hookimpl
def register_environments(register) -> None:
    from golem_farama.env import make_vizdoom_env

    register("vizdoom", make_vizdoom_env)


@hookimpl
def register_data_formats(register) -> None:
    from golem_farama.minari_format import MinariFormat

    register("minari", MinariFormat())
