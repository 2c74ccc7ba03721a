"""The ``golem`` console script of this interpreter's environment, as the benchmarks run it, and their resumable
stages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def golem(*args: str, cwd: Path | None = None) -> str:
    """Run ``golem --log-level warning *args``; its stdout, or exit with the command's stderr tail on failure."""
    exe = Path(sys.executable).with_name("golem")
    proc = subprocess.run([str(exe), "--log-level", "warning", *args], cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"golem {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc.stdout


def json_stage(path: Path, make: Any) -> Any:
    """``make()``'s JSON, kept at ``path`` once made (written whole, then renamed): a rerun skips a finished stage."""
    if path.exists():
        return json.loads(path.read_text())
    value = make()
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(value, indent=2) + "\n")
    tmp.replace(path)
    return value
