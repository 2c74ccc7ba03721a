"""A small pool of engine worker processes feeding results to the calling process.

Recording and evaluation both hand out tasks (seeds) to N processes, each with
its own ViZDoom engine, and consume what comes back one item at a time. The
worker side is :func:`serve`; the parent side is :func:`run_pool`, or
:class:`WorkerPool` where batch after batch goes to the same engines (tuning
plays dozens of candidates: starting two spawned workers cost seconds each).

Workers die with their parent, however it ends (``kill -9`` included): on
Linux each asks the kernel for SIGKILL when its parent dies
(``PR_SET_PDEATHSIG``), and its engine guard then takes the engine down.

Start method: ``fork`` starts in milliseconds and inherits loaded plugins, but
a process that has already run tensor maths must not fork (torch's thread pool
does not survive it and the child hangs), so callers that may follow training
in the same process ask for ``spawn``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import multiprocessing as mp
import os
import queue
import signal
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from golem.allocator import keep_freed_memory
from golem.errors import GolemError

#: ``produce(tasks) -> items``: the work one worker does on the tasks it takes.
Produce = Callable[[Iterator[Any]], Iterable[Any]]


#: ``prctl`` option: the signal the kernel sends this process when its parent dies (linux/prctl.h).
PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """Ask the kernel to SIGKILL this process when ``parent`` dies; exit now if it already has (Linux only)."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def _worker_main(parent: int, target: Callable[..., None], *args: Any) -> None:
    """A worker process's entry: tie its life to the parent's, then run ``target(*args)``."""
    die_with_parent(parent)
    keep_freed_memory()
    target(*args)


def serve(tasks: Any, results: Any, produce: Produce, what: str) -> None:
    """Worker side: run ``produce`` over tasks from ``tasks`` until ``None``; report on ``results``.

    Every item goes back as ``("item", item)``; a user error or crash as one
    ``("error", line)``; the end as ``("done", None)``.
    """

    def pending() -> Iterator[Any]:
        while (task := tasks.get()) is not None:
            yield task

    try:
        for item in produce(pending()):
            results.put(("item", item))
    except KeyboardInterrupt:
        pass
    except GolemError as exc:
        results.put(("error", str(exc)))
    except Exception as exc:  # a worker crash surfaces as one line in the parent
        results.put(("error", f"{what} worker failed: {type(exc).__name__}: {exc}"))
    finally:
        results.put(("done", None))


def run_pool(
    target: Callable[..., None],
    args: tuple[Any, ...],
    tasks: Sequence[Any],
    workers: int,
    *,
    start_method: str,
    what: str,
) -> Iterator[Any]:
    """Parent side: start ``min(workers, len(tasks))`` processes ``target(*args, tasks_q, results_q)``.

    Yields each item as it arrives. A worker's error line is raised as
    :class:`GolemError`. Closing the generator (or Ctrl-C) terminates the
    workers, whose sessions take their engines with them.
    """
    method = start_method if start_method in mp.get_all_start_methods() else "spawn"
    ctx = mp.get_context(method)
    task_q: Any = ctx.Queue()
    result_q: Any = ctx.Queue()
    n = min(workers, len(tasks))
    for task in tasks:
        task_q.put(task)
    for _ in range(n):
        task_q.put(None)
    parent = os.getpid()
    procs = [
        ctx.Process(target=_worker_main, args=(parent, target, *args, task_q, result_q), daemon=True) for _ in range(n)
    ]
    for p in procs:
        p.start()
    running = n
    try:
        while running:
            try:
                kind, payload = result_q.get(timeout=1.0)
            except queue.Empty:
                if not any(p.is_alive() for p in procs) and result_q.empty():
                    raise GolemError(f"{what} workers exited without finishing") from None
                continue
            if kind == "item":
                yield payload
            elif kind == "error":
                raise GolemError(payload)
            else:
                running -= 1
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join(timeout=10)


class WorkerPool:
    """Parent side of a pool kept open across batches: :meth:`map` hands out tasks and yields one item per task.

    The workers (``target(*args, tasks_q, results_q)``, serving with :func:`serve`
    and producing exactly one item per task) start on entry and stop on exit,
    however the block ends; a worker's error line is raised as :class:`GolemError`.
    """

    def __init__(
        self, target: Callable[..., None], args: tuple[Any, ...], workers: int, *, start_method: str, what: str
    ) -> None:
        method = start_method if start_method in mp.get_all_start_methods() else "spawn"
        self._ctx = mp.get_context(method)
        self._target, self._args, self._n, self._what = target, args, workers, what
        self._tasks: Any = None
        self._results: Any = None
        self._procs: list[Any] = []

    def __enter__(self) -> WorkerPool:
        self._tasks, self._results = self._ctx.Queue(), self._ctx.Queue()
        parent = os.getpid()
        self._procs = [
            self._ctx.Process(
                target=_worker_main, args=(parent, self._target, *self._args, self._tasks, self._results), daemon=True
            )
            for _ in range(self._n)
        ]
        try:
            for p in self._procs:
                p.start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def map(self, tasks: Sequence[Any]) -> Iterator[Any]:
        """Yield one item per task, in the order they finish."""
        for task in tasks:
            self._tasks.put(task)
        got = 0
        while got < len(tasks):
            try:
                kind, payload = self._results.get(timeout=1.0)
            except queue.Empty:
                # Workers only end on the sentinel sent at exit: one gone now took its task with it.
                dead = [p for p in self._procs if not p.is_alive()]
                if dead and self._results.empty():
                    raise GolemError(f"a {self._what} worker died (exit code {dead[0].exitcode})") from None
                continue
            if kind == "item":
                got += 1
                yield payload
            elif kind == "error":
                raise GolemError(payload)
            else:
                raise GolemError(f"a {self._what} worker stopped before its tasks were done")

    def __exit__(self, *exc: Any) -> None:
        started = [p for p in self._procs if p.pid is not None]
        for _ in started:
            self._tasks.put(None)
        done = 0
        while done < len(started) and any(p.is_alive() for p in started):  # drain: no worker blocks on a full pipe
            try:
                kind, _ = self._results.get(timeout=5.0)
            except queue.Empty:
                break
            done += kind == "done"
        for p in started:
            p.join(timeout=2)
            if p.is_alive():
                p.terminate()
                p.join(timeout=10)
