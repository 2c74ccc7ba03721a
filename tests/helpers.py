"""Small helpers shared by the cross-package tests."""

from __future__ import annotations

import json
import subprocess
from typing import Any


def json_out(proc: subprocess.CompletedProcess[str]) -> Any:
    """Parse a command's ``--json`` stdout."""
    return json.loads(proc.stdout)
