"""Shared fixtures: the real `golem` console script and third-party plugins installed for real."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = Path(__file__).resolve().parent / "plugins"
GOLEM = Path(sys.executable).with_name("golem")


@pytest.fixture(scope="session")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A site directory into which pip really installed the test plugin distributions.

    Putting it on PYTHONPATH makes their entry points visible exactly as an
    installed third-party plugin's would be, without touching the venv.
    """
    site = tmp_path_factory.mktemp("plugin-site")
    for name in ("golem-example-plugin", "golem-broken-plugin", "golem-clash-plugin"):
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             "--no-deps", "--no-build-isolation", "--target", str(site), str(PLUGINS / name)],
            check=True,
            capture_output=True,
        )
    return site


def _clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOLEM_")}
    env.update(extra or {})
    return env


@pytest.fixture
def golem_cli(tmp_path: Path):
    """Run the installed ``golem`` console script; returns a function ``(args, env=…, cwd=…)``."""

    def run(args: list[str], env: dict[str, str] | None = None, cwd: Path | None = None, check: bool = False,
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [str(GOLEM), *args], capture_output=True, text=True, env=_clean_env(env), cwd=cwd or tmp_path,
            timeout=timeout,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"golem {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        return proc

    return run
