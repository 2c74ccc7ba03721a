"""Keep freed memory in the process: glibc's allocator tuned so large per-batch buffers are reused.

By default glibc serves every allocation above 128 KiB–32 MiB with its own
``mmap`` and returns it to the kernel on ``free``; a training step allocates
tens of such tensors, so every step faults fresh zeroed pages in again. On
this project's 2-core machine the kernel then took as much time as the
training itself (``bench/bench_allocator.py``: sys time, frames/s). Turning
``mmap`` off for allocations and raising the trim threshold and top pad keeps
freed memory for the next step. It is the in-process equivalent of
``MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=… MALLOC_TOP_PAD_=…``; a process
that set any ``MALLOC_*`` variable itself is left as it is.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

# mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_MAX = -1, -2, -4
#: Freed memory kept at the top of the heap before glibc gives it back, bytes.
TRIM_THRESHOLD = 1 << 40
#: Extra heap obtained with each growth, bytes.
TOP_PAD = 1 << 30


def keep_freed_memory() -> bool:
    """Tune glibc's allocator for this process (calling it again changes nothing); ``True`` when it applies.

    Does nothing off Linux/glibc, or when a ``MALLOC_*`` environment variable
    was set (the user's own tuning wins).
    """
    if not sys.platform.startswith("linux") or any(k.startswith("MALLOC_") for k in os.environ):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    ok = all(
        mallopt(param, value) == 1
        for param, value in ((_M_MMAP_MAX, 0), (_M_TRIM_THRESHOLD, TRIM_THRESHOLD), (_M_TOP_PAD, TOP_PAD))
    )
    return ok
