"""`pip install golem-sensors-audio` adds a modality, as a user outside this repository lives it.

Wheels of golem-core, golem-cli, golem-experts and golem-sensors-audio are
built from the workspace; a fresh virtual environment gets the core and the
CLI only (with the constraints file; the pip cache makes that a couple of
minutes here): it has no scripted experts and says which distribution has
them; with the experts' wheel it has no audio sensor, and refuses `--plugin
audio` listing what it knows; after installing the audio wheel the sensor is
listed and records.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.slow, pytest.mark.engine]


def _run(args: list[str], cwd: Path, timeout: float = 600, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOLEM_", "PYTHON", "VIRTUAL_ENV"))}
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def _wheel(folder: str, out: Path) -> Path:
    """Build the distribution in ``folder`` from a clean copy (setuptools would leave build/ in the workspace)."""
    source = out.parent / "sources" / folder
    shutil.copytree(ROOT / folder, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--disable-pip-version-check",
            "-w",
            str(out),
            str(source),
        ],
        cwd=out.parent,
    )
    name = folder.split("/")[-1].replace("-", "_")
    name = {"audio": "golem_sensors_audio"}.get(name, name)
    (wheel,) = out.glob(f"{name}-*.whl")
    return wheel


def test_fresh_environment_gains_the_audio_sensor_from_its_wheel(tmp_path: Path):
    wheels = tmp_path / "wheels"
    core, cli, experts, audio = (
        _wheel(f, wheels) for f in ("golem-core", "golem-cli", "golem-experts", "golem-sensors/audio")
    )
    for wheel in (core, cli, experts, audio):
        assert wheel.name.endswith("-0.1.0-py3-none-any.whl"), wheel.name
    env_dir = tmp_path / "venv"
    try:
        _install_and_check(env_dir, core, cli, experts, audio, tmp_path)
    finally:  # torch makes the environment several GiB: do not leave it to pytest's kept temp folders
        shutil.rmtree(env_dir, ignore_errors=True)


def _install_and_check(env_dir: Path, core: Path, cli: Path, experts: Path, audio: Path, tmp_path: Path) -> None:
    """Core and CLI alone: no experts (named where to get them); with them, no audio sensor until its wheel."""
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python, golem = env_dir / "bin" / "python", env_dir / "bin" / "golem"
    pip = [
        str(python),
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "-c",
        str(ROOT / "constraints.txt"),
    ]
    _run([*pip, str(core), str(cli)], cwd=tmp_path, timeout=900)
    work = tmp_path / "work"
    work.mkdir()
    no_expert = _run([str(golem), "run", "record", "--expert", "basic", "--episodes", "1"], cwd=work, check=False)
    errors = [line for line in no_expert.stderr.splitlines() if line.strip()]
    assert no_expert.returncode != 0 and len(errors) == 1, no_expert.stderr
    assert "pip install golem-experts" in errors[0], no_expert.stderr
    _run([*pip, str(experts)], cwd=tmp_path, timeout=900)

    listed = json.loads(_run([str(golem), "plugins", "list", "--json"], cwd=work).stdout)
    names = {p["plugin"] for p in listed["plugins"]}
    assert names == {"core", "experts"}, names
    refused = _run(
        [str(golem), "run", "record", "--expert", "basic", "--episodes", "1", "--plugin", "audio"],
        cwd=work,
        check=False,
    )
    assert refused.returncode != 0
    errors = [line for line in refused.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and "unknown" in errors[0] and "'audio'" in errors[0] and "visual" in errors[0], (
        refused.stderr
    )

    _run([*pip, str(audio)], cwd=tmp_path, timeout=900)
    listed = json.loads(_run([str(golem), "plugins", "list", "--json"], cwd=work).stdout)
    audio_plugin = next(p for p in listed["plugins"] if p["plugin"] == "audio")
    assert audio_plugin["distribution"] == "golem-sensors-audio" and audio_plugin["components"] == {
        "sensors": ["audio"]
    }
    _run(
        [str(golem), "run", "record", "--expert", "basic", "--episodes", "1", "--max-steps", "20", "--plugin", "audio"],
        cwd=work,
    )
    info = json.loads(_run([str(golem), "data", "info", "0", "--json"], cwd=work).stdout)
    assert "audios" in json.dumps(info) and "audio" in info["meta"]["sensors"], info
