"""The shape of the product: import contracts, the core's size and dependencies, optional extras."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from golem.errors import GolemError
from golem.extras import EXTRAS, require
from golem.plugins import load_plugins
from golem.registry import PROVIDERS, Registry
from golem.settings import GolemSettings

ROOT = Path(__file__).resolve().parents[1]

#: The core's required dependencies may not grow past this.
MAX_CORE_DEPENDENCIES = 12
#: The core's share of the package code may not grow past this (the target, 0.40, is reached: the Farama
#: formats and the explaining diagnostics became golem-farama and golem-explain; the limit only goes down).
MAX_CORE_SHARE = 0.40


def package_lines() -> dict[str, int]:
    """Lines of Python under each distribution's ``src/`` folder, keyed by folder (``golem-core``, …)."""
    out = {}
    for project in sorted(ROOT.glob("golem-*/pyproject.toml")) + sorted(ROOT.glob("golem-sensors/*/pyproject.toml")):
        src = project.parent / "src"
        out[str(project.parent.relative_to(ROOT))] = sum(
            len(f.read_text(encoding="utf-8").splitlines()) for f in src.rglob("*.py")
        )
    return out


def test_import_contracts_hold() -> None:
    """data <- learning <- runtime <- diagnostics <- workflows; the API imports no stage; the core no plugin."""
    run = subprocess.run(
        [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports())"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "3 kept, 0 broken" in run.stdout, run.stdout[-2000:]


def test_core_dependencies_stay_few() -> None:
    project = tomllib.loads((ROOT / "golem-core" / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    required = project["dependencies"]
    assert len(required) <= MAX_CORE_DEPENDENCIES, required
    for name in ("captum", "torchinfo", "matplotlib", "pynput", "gymnasium", "minari", "scipy"):
        assert not any(dep.startswith(name) for dep in required), f"{name} must be optional, not required"
    extras = project["optional-dependencies"]
    for module, extra in EXTRAS.items():
        assert extra in extras, f"{module} names the extra {extra!r}, which golem-core does not declare"


def test_core_share_of_package_code_does_not_grow() -> None:
    lines = package_lines()
    share = lines["golem-core"] / sum(lines.values())
    assert share <= MAX_CORE_SHARE, f"golem-core is {share:.1%} of the package code ({lines})"


def test_setting_defaults_name_installed_components_or_say_what_to_install() -> None:
    """Every component a default setting names is the core's own, or its distribution is known."""
    settings = GolemSettings()
    defaults = {
        ("models", settings.brain.model),
        ("losses", settings.training.loss),
        ("samplers", settings.training.sampler),
    }
    core_only = Registry()
    host = load_plugins()
    core = next(p for p in host.plugins if p.name == "core")
    for comp in host.registry:
        if comp.owner.plugin == core.name:
            core_only.add(comp.category, comp.name, comp.obj, owner=comp.owner)
    for category, name in defaults:
        if name in core_only.names(category):
            continue
        assert (category, name) in PROVIDERS, f"default {category} {name!r} is neither the core's nor in PROVIDERS"
        with pytest.raises(GolemError, match=rf"pip install {PROVIDERS[(category, name)]}"):
            core_only.get(category, name)


def test_a_missing_extra_is_one_line_naming_it() -> None:
    """``golem run summary`` without torchinfo: one line naming the distribution that brings it, a non-zero exit,
    no traceback."""
    code = (
        "import sys; sys.modules['torchinfo'] = None\n"  # an import of torchinfo now raises ImportError
        "from golem_cli.app import main\n"
        "sys.argv = ['golem', 'run', 'summary']\n"
        "main()\n"
    )
    env = {**os.environ, "GOLEM_DATA__ROOT": "/nonexistent-golem-root"}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode != 0, run.stderr
    assert run.stderr.strip().splitlines() == ["error: golem run summary needs torchinfo: pip install golem-explain"], (
        run.stderr
    )


def test_require_passes_other_import_errors_through() -> None:
    """An ImportError inside an installed optional library is not reported as a missing extra."""
    with pytest.raises(ModuleNotFoundError):
        require("no_such_module_anywhere", "a feature")
    assert require("json", "a feature").dumps([1]) == "[1]"


def test_a_plugin_command_says_what_to_install_when_its_plugin_is_missing() -> None:
    """``golem run match`` with the core alone names golem-match; with the plugin it is the match command."""
    from typer.testing import CliRunner

    import golem_match.plugin
    from golem_cli.app import build_app

    alone = CliRunner().invoke(build_app(load_plugins(only=[])), ["run", "match", "--agents", "random"])
    assert alone.exit_code != 0
    assert "comes with the golem-match plugin: pip install golem-match" in alone.output, alone.output
    with_plugin = build_app(load_plugins(only=[], extra=[("match", golem_match.plugin)]))
    helped = CliRunner().invoke(with_plugin, ["run", "match", "--help"])
    assert helped.exit_code == 0 and "--agents" in helped.output, helped.output


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["run", "examine", "--episode", "0"], "`golem run examine` comes with the golem-explain plugin"),
        (["run", "summary"], "`golem run summary` comes with the golem-explain plugin"),
        (
            ["data", "export", "x/y-v0", "--format", "minari"],
            "unknown data format 'minari' (it comes with golem-farama",
        ),
        (["run", "audit", "--chart", "a.png"], "unknown chart 'audit' (it comes with golem-explain"),
    ],
)
def test_the_moved_features_say_what_to_install(args: list[str], line: str, tmp_path: Path) -> None:
    """The core alone: each feature that left it is one line naming its distribution (``pip install …``)."""
    from typer.testing import CliRunner

    from golem_cli.app import build_app

    app = build_app(load_plugins(only=[]))
    result = CliRunner().invoke(app, ["--set", f"data.root={tmp_path}", *args])
    assert result.exit_code != 0
    assert result.output.strip().splitlines() == [result.output.strip()], result.output
    assert line in result.output and "pip install golem-" in result.output, result.output


def test_the_moved_features_come_back_with_their_plugins() -> None:
    """With golem-explain and golem-farama their commands, data format, chart and environment are there again."""
    from typer.testing import CliRunner

    import golem_explain.plugin
    import golem_farama.plugin
    from golem_cli.app import build_app

    host = load_plugins(only=[], extra=[("explain", golem_explain.plugin), ("farama", golem_farama.plugin)])
    assert host.registry.names("data_formats") == ["minari", "npz"]
    assert host.registry.names("charts") == ["audit"] and "vizdoom" in host.registry.names("environments")
    for command, option in (("examine", "--episode"), ("summary", "--depth")):
        helped = CliRunner().invoke(build_app(host), ["run", command, "--help"])
        assert helped.exit_code == 0 and option in helped.output, helped.output
