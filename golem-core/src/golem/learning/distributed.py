"""Data-parallel training with ``torch.distributed``: ranks, their share of each batch, launching them.

Every rank builds the same dataset and the same sampler (same seed), so each
global batch of ``B`` stream indices is known everywhere; rank ``r`` of ``W``
loads and trains on its contiguous block of ``B / W`` streams and keeps its
own streams' carried state. ``DistributedDataParallel`` averages the gradients
(gloo on CPU, NCCL on CUDA). Each rank's loss is scaled by its share of the
batch's recorded steps, so the averaged gradient is the gradient of the loss
over the whole global batch, padding included (:func:`loss_scale`). Only rank
0 validates, logs and writes checkpoints.

Two ways to start ranks:

* ``golem run train --nproc N`` (:func:`spawn_ranks`): this process is rank 0
  and starts ``N − 1`` more on this machine over loopback;
* ``torchrun … -m golem_cli run train`` on one or several machines: every
  process finds ``RANK``/``WORLD_SIZE``/``MASTER_ADDR`` in its environment
  (:func:`init_from_environment`).

A rank that dies makes the others fail at their next gradient exchange;
:func:`peer_failure` turns that into one line.
"""

from __future__ import annotations

import datetime as _dt
import os
import socket
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import structlog
import torch
import torch.distributed as dist

from golem.errors import GolemError
from golem.threads import thread_share

log = structlog.get_logger(__name__)

#: Seconds rank 0 waits for the other ranks to exit once it is done, before terminating them.
JOIN_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Ranks:
    """This process's place in the group: ``rank`` of ``world`` (1: not distributed)."""

    rank: int = 0
    world: int = 1

    @property
    def main(self) -> bool:
        """Rank 0: the one that validates, logs and saves."""
        return self.rank == 0

    @classmethod
    def current(cls) -> Ranks:
        """The initialised process group's rank and size, else ``Ranks()``."""
        if dist.is_available() and dist.is_initialized():
            return cls(dist.get_rank(), dist.get_world_size())
        return cls()

    def shard(self, indices: Sequence[int] | np.ndarray) -> np.ndarray:
        """This rank's contiguous block of a global batch's ``[B]`` indices (``B`` divisible by ``world``)."""
        idx = np.asarray(indices)
        per = idx.shape[0] // self.world
        return idx[self.rank * per : (self.rank + 1) * per]


def check_divisible(batch_size: int, ranks: Ranks) -> None:
    """One-line error unless the ``batch_size`` streams split evenly over the ranks."""
    if ranks.world > 1 and batch_size % ranks.world:
        raise GolemError(
            f"training.batch_size {batch_size} does not split over {ranks.world} processes (--nproc); "
            f"use a multiple of {ranks.world}"
        )


def loss_scale(local_steps: int, global_steps: int, ranks: Ranks) -> float:
    """Factor for this rank's mean loss so that DDP's gradient average is the whole batch's gradient.

    With ``n_r`` recorded steps here and ``N`` in the global batch, the global
    mean loss is ``Σ_r (n_r / N) · loss_r``; DDP averages over ``W`` ranks, so
    each rank back-propagates ``W · n_r / N · loss_r`` (1 without padding).
    """
    if ranks.world == 1 or global_steps == 0:
        return 1.0
    return ranks.world * local_steps / global_steps


def peer_failure(exc: BaseException, ranks: Ranks) -> GolemError:
    """The one line for a collective that failed because another rank stopped or timed out."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if text.startswith("[") and "] " in text:  # gloo prefixes its source file: "[…/pair.cc:545] Read error …"
        text = text.split("] ", 1)[1]
    return GolemError(
        f"rank {ranks.rank} of {ranks.world}: another training process stopped or stopped answering "
        f"({text[:160]}); nothing was saved by this run"
    )


def backend_for(device: torch.device) -> str:
    """``nccl`` for CUDA, ``gloo`` otherwise."""
    return "nccl" if device.type == "cuda" else "gloo"


def rank_device(device: torch.device) -> torch.device:
    """On CUDA, this process's GPU (``LOCAL_RANK``, as torchrun sets it); otherwise ``device``."""
    if device.type == "cuda":
        local = int(os.environ.get("LOCAL_RANK", Ranks.current().rank))
        torch.cuda.set_device(local)
        return torch.device("cuda", local)
    return device


def init_from_environment(timeout_s: float, backend: str = "gloo") -> Ranks:
    """Join the group torchrun describes (``WORLD_SIZE`` > 1 in the environment); else ``Ranks()``.

    Raises:
        GolemError: the rendezvous failed or timed out.
    """
    world = int(os.environ.get("WORLD_SIZE", "1") or 1)
    if world <= 1 or dist.is_initialized():
        return Ranks.current()
    try:
        dist.init_process_group(backend, timeout=_dt.timedelta(seconds=timeout_s))
    except Exception as exc:  # noqa: BLE001 — rendezvous errors come in many types
        raise GolemError(f"could not join the training group of {world} processes: {exc}") from None
    return Ranks.current()


def close_group() -> None:
    """Leave the process group, if this process is in one."""
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def free_port() -> int:
    """A TCP port free on loopback right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _join(rank: int, world: int, port: int, timeout_s: float, backend: str) -> None:
    os.environ.update(
        {
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": str(port),
            "RANK": str(rank),
            "WORLD_SIZE": str(world),
            "LOCAL_RANK": str(rank),
        }
    )
    dist.init_process_group(backend, rank=rank, world_size=world, timeout=_dt.timedelta(seconds=timeout_s))


def _child(
    rank: int,
    world: int,
    port: int,
    timeout_s: float,
    backend: str,
    threads: int,
    target: Callable[..., Any],
    args: tuple[Any, ...],
) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is rank 0's to handle; it then closes the group
    torch.set_num_threads(threads)
    from golem.allocator import keep_freed_memory

    keep_freed_memory()
    _join(rank, world, port, timeout_s, backend)
    try:
        target(*args)
    except GolemError as exc:  # rank 0 reports the run's error; this says what this rank saw
        import sys

        print(f"rank {rank}: {exc}", file=sys.stderr, flush=True)  # noqa: T201
        raise SystemExit(1) from None
    finally:
        close_group()


@contextmanager
def spawn_ranks(
    world: int,
    target: Callable[..., Any],
    args: tuple[Any, ...],
    *,
    timeout_s: float,
    backend: str = "gloo",
    daemon: bool = True,
) -> Iterator[Ranks]:
    """Make this process rank 0 of ``world`` on this machine; ranks 1… run ``target(*args)`` in spawned processes.

    Each process gets an equal share of the cores (:func:`golem.threads.thread_share`). On leaving, the group
    is closed and the other ranks are joined (terminated after
    :data:`JOIN_TIMEOUT_S`); none outlives this one. ``daemon=False`` lets a rank start processes of its
    own (multiprocessing refuses children to a daemon), as golem-rl's ranks start their rollout workers.

    Raises:
        GolemError: the group did not form within ``timeout_s``.
    """
    import multiprocessing as mp

    if world < 2:
        yield Ranks()
        return
    threads = thread_share(world)  # OMP_NUM_THREADS of the user's, else the cores shared out
    port = free_port()
    ctx = mp.get_context("spawn")
    children = [
        ctx.Process(
            target=_child,
            args=(r, world, port, timeout_s, backend, threads, target, args),
            daemon=daemon,
            name=f"golem-rank-{r}",
        )
        for r in range(1, world)
    ]
    for child in children:
        child.start()
    torch.set_num_threads(threads)
    try:
        try:
            _join(0, world, port, timeout_s, backend)
        except Exception as exc:  # noqa: BLE001
            raise GolemError(
                f"the {world} training processes did not connect within {timeout_s:.0f} s: "
                f"{str(exc).splitlines()[0][:160]}"
            ) from None
        log.info("distributed.started", world=world, backend=backend, threads_per_rank=threads, port=port)
        yield Ranks.current()
    finally:
        close_group()
        for child in children:  # they finish their last step with rank 0 and save nothing: seconds at most
            child.join(timeout=JOIN_TIMEOUT_S)
            if child.is_alive():
                child.terminate()
                child.join(5)
        dead = [(c.name, c.exitcode) for c in children if c.exitcode not in (0, None)]
        if dead:
            log.warning("distributed.rank_exit", ranks=dict(dead))
