"""Integrity check of a trajectory store: every chunk present, sized right and intact."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import structlog

from golem.data.store.schema import EpisodeInfo
from golem.errors import GolemError

if TYPE_CHECKING:
    from golem.data.store.lmdb_store import TrajectoryStore

log = structlog.get_logger(__name__)


@dataclass
class VerifyReport:
    """What :func:`verify_store` found: per-episode problems and store-wide ones (orphan chunks)."""

    episodes_checked: int = 0
    chunks_checked: int = 0
    problems: dict[int, list[str]] = field(default_factory=dict)
    store_problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when nothing is wrong."""
        return not self.problems and not self.store_problems

    def add(self, episode_id: int, problem: str) -> None:
        self.problems.setdefault(episode_id, []).append(problem)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "episodes_checked": self.episodes_checked,
            "chunks_checked": self.chunks_checked,
            "problems": {str(k): v for k, v in self.problems.items()},
            "store_problems": self.store_problems,
        }


def verify_store(store: TrajectoryStore, checksums: bool = True) -> VerifyReport:
    """Walk every episode record and every chunk once (a full read when ``checksums``).

    Per episode: metadata parses and passes :class:`golem.data.store.schema.MetaModel` (the
    checks every written episode passes); arrays' lengths agree (``meta.length``);
    every chunk ``0..ceil(T/chunk_steps)-1`` of every array exists with
    exactly ``steps_in_chunk * step_bytes`` bytes; CRC-32 matches the one
    recorded at write time (when ``checksums``). Store-wide: chunks whose
    episode or array is unknown, or whose index is beyond the episode.
    """
    from golem.data.store.lmdb_store import decode_info, parse_chunk_key

    report = VerifyReport()
    infos: dict[int, EpisodeInfo] = {}
    seen: dict[tuple[int, str], set[int]] = {}
    with store._env.begin(buffers=True) as txn:
        for key, raw in txn.cursor(db=store._episodes):
            episode_id = int.from_bytes(bytes(key), "big")
            try:
                info = decode_info(episode_id, raw)
            except GolemError as exc:
                report.add(episode_id, str(exc))
                continue
            report.episodes_checked += 1
            infos[episode_id] = info
            if info.id != episode_id:
                report.add(episode_id, f"record says id {info.id}")
            if info.length < 1:
                report.add(episode_id, f"length {info.length} < 1")
            for required in ("actions", "rewards"):
                if required not in info.arrays:
                    report.add(episode_id, f"no {required!r} array")
            for name in info.arrays:
                seen[(episode_id, name)] = set()
        orphans = 0
        for key, buf in txn.cursor(db=store._chunks):
            report.chunks_checked += 1
            episode_id, name, index = parse_chunk_key(bytes(key))
            info = infos.get(episode_id)
            if info is None or name not in info.arrays:
                orphans += 1
                continue
            if index >= info.n_chunks:
                report.add(episode_id, f"{name}: unexpected chunk {index} (episode has {info.n_chunks})")
                continue
            seen[(episode_id, name)].add(index)
            steps = min(info.chunk_steps, info.length - index * info.chunk_steps)
            expected = steps * info.arrays[name].step_bytes
            if len(buf) != expected:
                report.add(episode_id, f"{name}: chunk {index} has {len(buf)} bytes, expected {expected}")
                continue
            sums = info.checksums.get(name)
            if checksums and sums is not None and index < len(sums) and zlib.crc32(buf) != sums[index]:
                report.add(episode_id, f"{name}: chunk {index} checksum mismatch (corrupted)")
        if orphans:
            report.store_problems.append(f"{orphans} chunk(s) belong to no episode")
    for (episode_id, name), indices in seen.items():
        missing = sorted(set(range(infos[episode_id].n_chunks)) - indices)
        if missing:
            shown = ", ".join(map(str, missing[:8])) + (" …" if len(missing) > 8 else "")
            report.add(episode_id, f"{name}: missing chunk(s) {shown}")
    log.info(
        "store.verified",
        path=str(store.path),
        ok=report.ok,
        episodes=report.episodes_checked,
        chunks=report.chunks_checked,
        bad_episodes=len(report.problems),
    )
    return report
