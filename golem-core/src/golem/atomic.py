"""Atomic file writes: a temporary file in the target folder, fsync, then ``os.replace``.

A reader sees the old file or the new one, never half of one; an error mid-write
leaves the old file as it was and no temporary file behind. A process killed
mid-write leaves its temporary file (``.<name>.golem-<pid>-<random>.tmp``);
:func:`clean_stale_temps` removes such files once their writer is gone, and every
write runs it on its folder.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

import structlog

log = structlog.get_logger(__name__)

#: A temporary file of :func:`atomic_write`: ``.<target>.golem-<pid>-<random>.tmp``.
_TEMP = re.compile(r"^\..+\.golem-(\d+)-[A-Za-z0-9_]+\.tmp$")
#: A temporary file of older writers, without the pid: ``.<target>.<8 random>.tmp``.
_OLD_TEMP = re.compile(r"^\..+\.[a-z0-9_]{8}\.tmp$")
#: Age in seconds after which a temporary file is stale whoever wrote it (its pid may be reused,
#: or it was written on another machine sharing the folder); no atomic write takes this long.
STALE_AFTER_S = 24 * 3600.0
#: Age in seconds after which an older writer's temporary file (no pid to ask) is stale.
OLD_STALE_AFTER_S = 3600.0


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def clean_stale_temps(folder: str | os.PathLike[str], *, now: float | None = None) -> list[Path]:
    """Remove the temporary files of :func:`atomic_write` in ``folder`` whose writer is gone; return them.

    A file named with a pid is stale when no process has that pid (or it is older than
    :data:`STALE_AFTER_S`); one without (older writers) when older than :data:`OLD_STALE_AFTER_S`.
    A file another live process is writing is never removed. Errors (a file removed meanwhile,
    no permission) are skipped.

    Args:
        folder: the folder to clean (not recursive); missing folders are fine.
        now: the time in seconds since the epoch to judge ages by (default: now).
    """
    now = time.time() if now is None else now
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        match = _TEMP.match(entry.name)
        if match is None and not _OLD_TEMP.match(entry.name):
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            age = now - entry.stat(follow_symlinks=False).st_mtime
            if match is not None:
                pid = int(match.group(1))
                stale = age > STALE_AFTER_S or (pid != os.getpid() and not _pid_alive(pid))
            else:
                stale = age > OLD_STALE_AFTER_S
            if stale:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            continue
    if removed:
        log.info("stale_temp_files_removed", folder=str(folder), files=[p.name for p in removed])
    return removed


@contextmanager
def atomic_write(path: str | os.PathLike[str], mode: int = 0o644) -> Iterator[BinaryIO]:
    """Open a binary file that replaces ``path`` when the ``with`` block ends without error.

    Temporary files that killed writers left in the folder are removed first (:func:`clean_stale_temps`).

    Args:
        path: the file to write; its folder is created if missing.
        mode: permission bits of the result (``mkstemp`` alone would make 0600).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_temps(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.golem-{os.getpid()}-", suffix=".tmp", dir=path.parent)
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
