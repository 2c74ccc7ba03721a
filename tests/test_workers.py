"""The engine worker pool's own logic, with plain functions as workers (the engines are tested through
evaluate, record and tune): items come back one per task, a worker's error is one line, and a worker that
dies mid-batch ends the wait instead of hanging it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from golem.errors import GolemError
from golem.runtime.workers import WorkerPool, serve


def _square_or_die(tasks: Any, results: Any) -> None:
    def produce(pending: Iterator[int]) -> Iterator[int]:
        for n in pending:
            if n < 0:
                os._exit(3)  # a crash that sends nothing back (as a segfaulting engine would)
            if n == 13:
                raise GolemError("unlucky task 13")
            yield n * n

    serve(tasks, results, produce, "test")


def test_batches_go_to_the_same_workers_and_come_back_one_per_task() -> None:
    with WorkerPool(_square_or_die, (), 2, start_method="fork", what="test") as pool:
        assert sorted(pool.map([1, 2, 3])) == [1, 4, 9]
        pids = {p.pid for p in pool._procs}
        assert sorted(pool.map([4, 5])) == [16, 25]
        assert {p.pid for p in pool._procs} == pids and all(p.is_alive() for p in pool._procs)
    assert not any(p.is_alive() for p in pool._procs)  # stopped on exit


@pytest.mark.slow
def test_a_worker_error_is_one_line_and_a_dead_worker_does_not_hang_the_wait() -> None:
    with pytest.raises(GolemError, match="^unlucky task 13$"):
        with WorkerPool(_square_or_die, (), 2, start_method="fork", what="test") as pool:
            list(pool.map([1, 13, 2]))
    with pytest.raises(GolemError, match="a test worker died \\(exit code 3\\)"):
        with WorkerPool(_square_or_die, (), 2, start_method="fork", what="test") as pool:
            list(pool.map([1, -1, 2, 3]))
    assert not any(p.is_alive() for p in pool._procs)
