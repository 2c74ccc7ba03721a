"""The stateful stratified batch sampler ("stateful"): B parallel streams for stateful BPTT.

Every (episode, mirrored) pair of the pointer map is one *stream*: its windows
in order of ``start`` (0, L, 2L, ...). The sampler keeps ``B`` rows; row ``b``
walks one stream window by window, so row ``b`` of batch ``k + 1`` is the exact
continuation of row ``b`` of batch ``k`` (same episode, same mirrored flag,
``start + L``). When a row's stream runs out it takes the next stream of its
pool, and that row's window has ``is_first`` set (start 0).

Rows ``0 .. R-1`` read the recovery pool, rows ``R .. B-1`` the base pool:

* ``R = round(B * recovery_ratio)``, at least 1 when the ratio is positive and
  recovery windows exist, at most ``B - 1``; 0 without recovery windows.
* The recovery pool is recycled endlessly, reshuffled at every cycle.
* The base pool holds every base stream (a mirrored twin is its own stream)
  once per epoch, shuffled per epoch. When a base row needs a stream and none
  is left, the epoch ends; the partial batch is not yielded. So no base window
  appears twice in an epoch, and the only base windows an epoch skips are the
  unread tails of streams still in flight when it ends (each epoch's shuffle
  differs, so these differ too). With one base row every base window appears
  exactly once per epoch.

When the data holds fewer base streams than base rows (a small recording), the
sampler keeps one row per base stream instead, lowers :attr:`batch_size` to
match and logs a warning (``sampler.fewer_streams``); the trainer reads
``batch_size`` from the sampler.

Shuffles are drawn from ``numpy.random.default_rng([seed, epoch, pool])``, so
an epoch's batches depend only on the seed and the epoch number.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import structlog

from golem.errors import GolemError

if TYPE_CHECKING:
    from golem.settings import GolemSettings, TrainingSettings

log = structlog.get_logger(__name__)


def _streams(pointers: np.ndarray, mask: np.ndarray) -> list[np.ndarray]:
    """Window indices of each (episode, mirrored) stream among ``pointers[mask]``, each sorted by start.

    Streams are listed by (episode, mirrored), so the order is deterministic.
    """
    idx = np.flatnonzero(mask)
    if idx.size == 0:
        return []
    sub = pointers[idx]
    order = np.lexsort((sub["start"], sub["mirrored"], sub["episode"]))
    idx, sub = idx[order], sub[order]
    key_change = (sub["episode"][1:] != sub["episode"][:-1]) | (sub["mirrored"][1:] != sub["mirrored"][:-1])
    cuts = np.flatnonzero(key_change) + 1
    return np.split(idx, cuts)


class StatefulStratifiedSampler:
    """Batches of ``B`` window indices forming ``B`` continuous streams, a share of them on recovery data.

    Args:
        pointers: a pointer map (:data:`golem.data.dataset.POINTER_DTYPE` array with
            fields ``episode``, ``start``, ``mirrored``, ``recovery``) or any object
            with a ``pointers`` attribute holding one (a :class:`golem.data.dataset.SequenceDataset`).
        settings: :class:`GolemSettings` or its ``training`` group; uses
            ``batch_size`` (B), ``recovery_ratio`` and ``seed``.

    Iterating yields ``list[int]`` of length :attr:`batch_size` (indices into
    the pointer map); each ``iter()`` runs the next epoch (0, 1, 2, ...; see
    :meth:`set_epoch`). :attr:`batch_size` is ``training.batch_size``, or fewer
    when the data holds fewer base streams than base rows.

    Raises:
        GolemError: there is no base stream at all.
    """

    def __init__(self, pointers: Any, settings: GolemSettings | TrainingSettings) -> None:
        training = getattr(settings, "training", settings)
        pmap = getattr(pointers, "pointers", pointers)
        if not isinstance(pmap, np.ndarray) or pmap.dtype.names is None:
            raise GolemError("the stateful sampler needs a pointer map (a SequenceDataset or its .pointers)")
        self.pointers = pmap
        self.batch_size = int(training.batch_size)
        self.recovery_ratio = float(training.recovery_ratio)
        self.seed = int(training.seed)
        recovery = pmap["recovery"] if "recovery" in pmap.dtype.names else np.zeros(len(pmap), dtype=bool)
        self.base_streams = _streams(pmap, ~recovery)
        self.recovery_streams = _streams(pmap, recovery)
        B = self.batch_size
        n_rec = 0
        if self.recovery_ratio > 0 and self.recovery_streams:
            n_rec = min(max(int(round(B * self.recovery_ratio)), 1), B - 1)
            if n_rec == 0:
                log.warning("sampler.no_recovery_rows", batch_size=B, recovery_ratio=self.recovery_ratio)
        elif self.recovery_ratio > 0:
            log.warning("sampler.no_recovery_data", recovery_ratio=self.recovery_ratio)
        n_base = B - n_rec
        if not self.base_streams:
            raise GolemError("there is no training episode to sample from; record some with `golem run record`")
        if len(self.base_streams) < n_base:
            # One row per stream: with fewer rows than requested, every base window is still read once per epoch.
            n_base = len(self.base_streams)
            if n_rec:  # keep the requested share: R / (base + R) = recovery_ratio
                n_rec = max(int(round(n_base * self.recovery_ratio / (1.0 - self.recovery_ratio))), 1)
            log.warning(
                "sampler.fewer_streams",
                requested_batch_size=B,
                batch_size=n_base + n_rec,
                base_streams=len(self.base_streams),
                hint="each batch row follows one episode; record more episodes for full batches",
            )
            self.batch_size = B = n_base + n_rec
        self.n_recovery = n_rec
        self.n_base = n_base
        self._epoch = 0
        log.debug(
            "sampler.ready",
            batch_size=B,
            recovery_rows=n_rec,
            base_streams=len(self.base_streams),
            recovery_streams=len(self.recovery_streams),
        )

    # --- epochs --------------------------------------------------------------

    @property
    def epoch(self) -> int:
        """The epoch the next ``iter()`` runs."""
        return self._epoch

    def set_epoch(self, epoch: int) -> None:
        """Make the next ``iter()`` run epoch ``epoch`` (e.g. when resuming)."""
        self._epoch = int(epoch)

    def _rng(self, epoch: int, pool: int) -> np.random.Generator:
        return np.random.default_rng([self.seed, epoch, pool])

    def _base_order(self, epoch: int) -> np.ndarray:
        return self._rng(epoch, 0).permutation(len(self.base_streams))

    def _base_pool(self, epoch: int) -> list[np.ndarray]:
        """The base streams epoch ``epoch`` reads, in order (a subclass may repeat or weight them)."""
        return [self.base_streams[i] for i in self._base_order(epoch)]

    def __iter__(self) -> Iterator[list[int]]:
        epoch = self._epoch
        self._epoch += 1
        return self._run(epoch)

    def __len__(self) -> int:
        """Exact number of batches the next ``iter()`` yields (epoch :attr:`epoch`)."""
        lengths = [len(stream) for stream in self._base_pool(self._epoch)]
        if len(lengths) < self.n_base:
            return 0
        ends = lengths[: self.n_base]
        heapq.heapify(ends)
        for n in lengths[self.n_base :]:
            heapq.heapreplace(ends, ends[0] + n)
        return int(ends[0])

    def _run(self, epoch: int) -> Iterator[list[int]]:
        B, R = self.batch_size, self.n_recovery
        base_pool = self._base_pool(epoch)[::-1]  # pop() from the end
        rec_rng = self._rng(epoch, 1)
        rec_pool: list[np.ndarray] = []

        def next_recovery() -> np.ndarray:
            if not rec_pool:
                rec_pool.extend(self.recovery_streams[i] for i in rec_rng.permutation(len(self.recovery_streams)))
                rec_pool.reverse()
            return rec_pool.pop()

        streams: list[list[int]] = [[] for _ in range(B)]
        pos = [0] * B
        batches = 0
        while True:
            batch: list[int] = []
            for b in range(B):
                if pos[b] >= len(streams[b]):
                    if b < R:
                        streams[b] = next_recovery().tolist()
                    elif base_pool:
                        streams[b] = base_pool.pop().tolist()
                    else:
                        log.debug("sampler.epoch_end", epoch=epoch, batches=batches)
                        return
                    pos[b] = 0
                batch.append(streams[b][pos[b]])
                pos[b] += 1
            batches += 1
            yield batch

    @property
    def recovery_rows(self) -> range:
        """Rows of every batch that read recovery episodes."""
        return range(self.n_recovery)


__all__ = ["StatefulStratifiedSampler"]
