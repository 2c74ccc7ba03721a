"""The trajectory store: episodes of demonstrations in LMDB, read zero-copy from the memory map.

>>> with TrajectoryStore.create("demos") as store:          # doctest: +SKIP
...     eid = store.write_episode(meta, {"actions": a, "frames": f})
>>> with TrajectoryStore.open("demos") as store:            # doctest: +SKIP
...     with store.reader() as r:
...         r.read_into(batch_frames[b], eid, "frames", start)
"""

from golem.data.store.lmdb_store import DEFAULT_CHUNK_STEPS, MAP_SIZE, StoreReader, StoreStats, TrajectoryStore
from golem.data.store.schema import (
    MAX_SEED,
    SCHEMA_VERSION,
    SOURCES,
    ArraySpec,
    EpisodeInfo,
    EpisodeMeta,
    MetaModel,
)
from golem.data.store.verify import VerifyReport

__all__ = [
    "DEFAULT_CHUNK_STEPS",
    "MAP_SIZE",
    "MAX_SEED",
    "SCHEMA_VERSION",
    "SOURCES",
    "ArraySpec",
    "EpisodeInfo",
    "EpisodeMeta",
    "MetaModel",
    "StoreReader",
    "StoreStats",
    "TrajectoryStore",
    "VerifyReport",
]
