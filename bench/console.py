"""The ``golem`` console script of this interpreter's environment, as the benchmarks run it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def golem(*args: str, cwd: Path | None = None) -> str:
    """Run ``golem --log-level warning *args``; its stdout, or exit with the command's stderr tail on failure."""
    exe = Path(sys.executable).with_name("golem")
    proc = subprocess.run([str(exe), "--log-level", "warning", *args], cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"golem {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc.stdout
