"""Recovery: rebuild the state of a data directory from its snapshot and WAL.

Kubernetes v1.0 piece: etcd's startup (etcdserver/storage.go readWAL + snap.Load): load the
newest snapshot, replay the WAL written after it, repair a torn tail. Kept apart from the
store so the read-only inspector (`minikube-py storage ...`) recovers a data directory the
same way without opening it for writing or touching its files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .datadir import DataDir
from .mvcc import MVCCState
from .snapshot import list_snapshots, load_snapshot
from .wal import TornTail, list_segments, read_segments


@dataclass
class Recovered:
    state: MVCCState
    #: The segment new records should be appended to.
    wal_seq: int
    #: The segment the snapshot covers up to (older segments are obsolete).
    snapshot_wal_seq: int
    replayed_records: int
    torn_tail: TornTail | None


def recover(data_dir: DataDir, *, history_max_events: int) -> Recovered:
    """Load the newest snapshot and replay every later WAL record. Pure reading: nothing on
    disk changes (see `repair` for the writer's clean-up)."""
    state, snap_seq = load_newest_snapshot(data_dir, history_max_events=history_max_events)
    replayed, torn, last_seq = 0, None, snap_seq
    for seq, records, segment_torn in read_segments(data_dir.wal, snap_seq):
        for record in records:
            state.apply(record)
        replayed += len(records)
        torn = segment_torn or torn
        last_seq = seq
    return Recovered(state, last_seq, snap_seq, replayed, torn)


def load_newest_snapshot(data_dir: DataDir, *, history_max_events: int) -> tuple[MVCCState, int]:
    """State from the newest snapshot (or an empty store) and the first WAL segment to replay."""
    snapshots = list_snapshots(data_dir.snap)
    if snapshots:
        return load_snapshot(snapshots[-1][1], history_max_events=history_max_events)
    return MVCCState(history_max_events=history_max_events), 1


def repair(data_dir: DataDir, recovered: Recovered) -> None:
    """Make the directory match what was recovered: cut a torn tail off the last segment and
    delete files a finished snapshot made obsolete (a crash can leave them behind)."""
    if recovered.torn_tail is not None:
        os.truncate(recovered.torn_tail.path, recovered.torn_tail.offset)
    remove_obsolete(data_dir, recovered.snapshot_wal_seq)
    for path in data_dir.snap.glob("*.tmp"):
        path.unlink()


def remove_obsolete(data_dir: DataDir, covered_seq: int) -> None:
    """Delete WAL segments and snapshots that the snapshot covering segments < covered_seq
    replaces. Called only once that snapshot is durable."""
    for seq, path in list_segments(data_dir.wal):
        if seq < covered_seq:
            path.unlink(missing_ok=True)
    for seq, path in list_snapshots(data_dir.snap):
        if seq < covered_seq:
            path.unlink(missing_ok=True)
