"""Shared fixtures: the real `golem` console script and third-party plugins installed for real."""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
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
    sources = tmp_path_factory.mktemp("plugin-sources")
    for name in ("golem-example-plugin", "golem-broken-plugin", "golem-clash-plugin"):
        # Built from a copy: pip writes build/ and *.egg-info/ next to the sources, and two test
        # processes (pytest-xdist workers) building in the same folder would race.
        source = sources / name
        shutil.copytree(PLUGINS / name, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-deps",
                "--no-build-isolation",
                "--target",
                str(site),
                str(source),
            ],
            check=True,
            capture_output=True,
        )
    return site


def sigint_default() -> None:
    """``preexec_fn`` for a child a test sends Ctrl-C: SIGINT back to its default disposition.

    A shell starts background jobs (``make test &``, ``nohup``) with SIGINT ignored, children inherit
    that, and Python then installs no KeyboardInterrupt handler: the child would never see the Ctrl-C.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOLEM_")}
    env.update(extra or {})
    return env


@pytest.fixture
def golem_cli(tmp_path: Path):
    """Run the installed ``golem`` console script; returns a function ``(args, env=…, cwd=…)``."""

    def run(
        args: list[str],
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        check: bool = False,
        timeout: float = 300,
    ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [str(GOLEM), *args],
            capture_output=True,
            text=True,
            env=_clean_env(env),
            cwd=cwd or tmp_path,
            timeout=timeout,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"golem {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        return proc

    return run


def _wait_for_display(display: str, proc: subprocess.Popen[bytes], timeout: float = 15.0) -> None:
    """Wait until a client can open ``display``: once a CI run saw golem refuse ``:0`` just after Xvfb named it."""
    from golem.runtime.session import display_opens

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if display_opens(display) is not False:
            return
        if proc.poll() is not None:
            raise AssertionError(f"Xvfb on {display} exited ({proc.returncode}) before a client could connect")
        time.sleep(0.1)
    raise AssertionError(f"Xvfb named {display} but no client could open it within {timeout:g} s")


@pytest.fixture
def xvfb() -> Iterator[str]:
    """A fresh virtual screen ``:N`` (Xvfb picks a free N and reports it on a pipe); stopped at teardown."""
    xvfb_bin = shutil.which("Xvfb")
    if xvfb_bin is None:
        pytest.skip("needs Xvfb on PATH (apt-get install xvfb)")
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(
        # -noreset: an X server resets when its last client leaves, and a client connecting during the reset
        # is refused; the readiness probe below is such a last client, and golem connects right after it
        [xvfb_bin, "-displayfd", str(write_fd), "-screen", "0", "1024x768x24", "-nolisten", "tcp", "-noreset"],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    os.close(write_fd)
    try:
        ready, _, _ = select.select([read_fd], [], [], 20)
        number = os.read(read_fd, 32).decode().strip() if ready else ""
        if not number:
            proc.kill()
            _, err = proc.communicate(timeout=10)
            raise AssertionError(f"Xvfb did not start: {err.decode(errors='replace')[-500:]}")
        _wait_for_display(f":{number}", proc)
        yield f":{number}"
    finally:
        os.close(read_fd)
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
