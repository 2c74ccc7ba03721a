"""Contract checks for plugin commands, for plugin authors' tests.

A plugin that adds commands needs the CLI, so its check lives here;
``golem.testing.assert_command_contract`` is the same function.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def assert_command_contract(plugin: Any, command: Sequence[str], *, name: str = "under-test") -> str:
    """Check that ``plugin``'s ``register_commands`` adds ``command`` to the ``golem`` app and that its help runs.

    ``command`` is the path below ``golem`` (``["procgen", "sample"]``). The
    plugin is loaded with the core alone, the real ``golem`` application (from
    ``golem-cli``, which a plugin with commands needs) is assembled with it, and
    ``golem COMMAND --help`` must exit 0 and print a usage line.

    Returns the help text.
    """
    from typer.testing import CliRunner

    from golem.testing.plugins import load_with
    from golem_cli.app import build_app

    host = load_with(plugin, name)
    info = next(p for p in host.plugins if p.name == name)
    assert not info.broken, f"plugin is broken: {info.error}"
    app = build_app(host)
    result = CliRunner().invoke(app, [*command, "--help"])
    assert not info.broken, f"register_commands failed: {info.error}"
    assert result.exit_code == 0, f"golem {' '.join(command)} --help exited {result.exit_code}: {result.output}"
    assert "Usage" in result.output, f"golem {' '.join(command)} --help printed no usage: {result.output}"
    return result.output
