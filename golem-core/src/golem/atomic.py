"""Atomic file writes: a temporary file in the target folder, fsync, then ``os.replace``.

A reader sees the old file or the new one, never half of one; a crash or an
error mid-write leaves the old file as it was and no temporary file behind.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO


@contextmanager
def atomic_write(path: str | os.PathLike[str], mode: int = 0o644) -> Iterator[BinaryIO]:
    """Open a binary file that replaces ``path`` when the ``with`` block ends without error.

    Args:
        path: the file to write; its folder is created if missing.
        mode: permission bits of the result (``mkstemp`` alone would make 0600).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
