"""The ``experts`` plugin: registers one scripted expert per shipped scenario through the expert hook."""

from __future__ import annotations

from golem.plugins import hookimpl


@hookimpl
def register_experts(register) -> None:
    from golem_experts import EXPERTS

    for name, cls in EXPERTS.items():
        register(name, cls)
