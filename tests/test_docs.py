"""The plugin documentation keeps up with the code: every hook, its arguments and every contract helper."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

import golem.hookspecs
import golem.testing
from golem.registry import CATEGORIES

DOCS = (Path(__file__).resolve().parents[1] / "docs" / "plugins.md").read_text()
HOOKS = [
    (name, fn) for name, fn in inspect.getmembers(golem.hookspecs, inspect.isfunction) if hasattr(fn, "golem_spec")
]


def test_every_category_has_a_hook():
    assert {name for name, _ in HOOKS} == {f"register_{c}" for c in CATEGORIES} | {"register_commands"}


@pytest.mark.parametrize(("name", "hook"), HOOKS, ids=[name for name, _ in HOOKS])
def test_hook_and_its_arguments_are_documented(name, hook):
    heading = re.search(rf"^### `{name}\((.*)\)`$", DOCS, re.MULTILINE)
    assert heading, f"docs/plugins.md has no section for {name}"
    documented = [a.strip() for a in heading.group(1).split(",") if a.strip()]
    assert documented == list(inspect.signature(hook).parameters), f"{name}: arguments differ from the hookspec"
    assert hook.__doc__ and len(hook.__doc__.strip()) > 40, f"{name} needs a docstring"


@pytest.mark.parametrize("helper", golem.testing.__all__)
def test_contract_helpers_are_documented(helper):
    assert f"`{helper}`" in DOCS, f"docs/plugins.md does not mention golem.testing.{helper}"
