"""CPU threads per process: OpenMP threads that sleep while they wait, and each process its share of the cores.

Torch's CPU kernels run on an OpenMP pool (GNU libgomp here). By default an idle
libgomp thread *spins* for a while before it sleeps, and a parallel region ends
at a barrier that waits for every thread of the pool. When more threads want the
cores than there are cores — two trainings side by side, training beside
recording or evaluation, ranks of one run — a spinning thread holds a core its
partner needs, and each barrier waits a scheduler time slice for a thread that
is not running. Training runs thousands of small parallel regions per update
(a CfC core unrolled over a window, its backward), so it loses most of its speed:
``bench/bench_threads.py`` measures one job alone and two side by side.
``OMP_WAIT_POLICY=PASSIVE`` makes waiting threads sleep at once; it must be in
the environment before libgomp starts, so :func:`wait_passively` runs when
``golem`` is imported, before torch is.

Each process also sets its intra-op threads to its share of the cores
(:func:`set_threads`): ``training.threads`` where set, else the user's own
``OMP_NUM_THREADS``, else the cores this process may use divided by the processes
Golem runs side by side (ranks of one training, engine workers).
"""

from __future__ import annotations

import os
import sys

#: The environment variable that makes waiting OpenMP threads sleep instead of spin.
WAIT_POLICY = "OMP_WAIT_POLICY"


def wait_passively() -> bool:
    """Make OpenMP threads sleep while they wait (``OMP_WAIT_POLICY=PASSIVE``) for this process and its children.

    A value the user set is kept; after torch is imported it is too late for this
    process (its children still inherit it). Returns whether the variable is now ``PASSIVE``.
    """
    if WAIT_POLICY not in os.environ and "torch" not in sys.modules:
        os.environ[WAIT_POLICY] = "PASSIVE"
    return os.environ.get(WAIT_POLICY, "").upper() == "PASSIVE"


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity, else the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def user_threads() -> int | None:
    """The user's own ``OMP_NUM_THREADS`` when it is a positive integer, else ``None``."""
    try:
        value = int(os.environ.get("OMP_NUM_THREADS", ""))
    except ValueError:
        return None
    return value if value > 0 else None


def thread_share(processes: int = 1, requested: int | None = None) -> int:
    """Intra-op threads for one of ``processes`` processes running side by side on this machine.

    ``requested`` (``training.threads``) wins, then ``OMP_NUM_THREADS``, then
    ``available_cores() // processes`` (at least 1).
    """
    if requested is not None and requested > 0:
        return int(requested)
    return user_threads() or max(1, available_cores() // max(1, processes))


def set_threads(processes: int = 1, requested: int | None = None) -> int:
    """Set torch's intra-op threads to :func:`thread_share` for this process; returns the number set."""
    import torch

    threads = thread_share(processes, requested)
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return threads


__all__ = ["WAIT_POLICY", "available_cores", "set_threads", "thread_share", "user_threads", "wait_passively"]
