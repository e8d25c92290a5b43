"""WAL frames and recovery rules: what is a torn tail, what is corruption."""

from __future__ import annotations

from pathlib import Path

import pytest

from minikube_py.storage.mvcc import PUT
from minikube_py.storage.wal import WALCorruptError, encode_frame, read_segment

RECORDS = [(PUT, 2 + i, f"/k{i}", b"v" * i, 0) for i in range(4)]


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def frames() -> list[bytes]:
    return [encode_frame(r) for r in RECORDS]


def test_round_trip(tmp_path: Path):
    path = write(tmp_path / "1.wal", b"".join(frames()))
    records, torn = read_segment(path, last=True)
    assert records == RECORDS and torn is None


@pytest.mark.parametrize("cut", [1, 5, 11, 12, 13])
def test_record_cut_short_at_the_end_is_a_torn_tail(tmp_path: Path, cut: int):
    fs = frames()
    good = b"".join(fs[:3])
    path = write(tmp_path / "1.wal", good + fs[3][:cut])
    records, torn = read_segment(path, last=True)
    assert records == RECORDS[:3]
    assert torn is not None and torn.offset == len(good)


def test_bad_checksum_on_the_final_record_is_torn(tmp_path: Path):
    fs = frames()
    last = bytearray(fs[3])
    last[-1] ^= 0xFF
    path = write(tmp_path / "1.wal", b"".join(fs[:3]) + bytes(last))
    records, torn = read_segment(path, last=True)
    assert records == RECORDS[:3] and torn is not None


def test_zeros_after_the_last_record_are_torn(tmp_path: Path):
    path = write(tmp_path / "1.wal", b"".join(frames()) + b"\0" * 100)
    records, torn = read_segment(path, last=True)
    assert records == RECORDS and torn is not None


@pytest.mark.parametrize("where", ["payload", "length", "header-crc"])
def test_damage_in_the_middle_is_corruption(tmp_path: Path, where: str):
    fs = frames()
    damaged = bytearray(fs[1])
    index = {"payload": 14, "length": 0, "header-crc": 9}[where]
    damaged[index] ^= 0x5A
    path = write(tmp_path / "1.wal", fs[0] + bytes(damaged) + fs[2] + fs[3])
    with pytest.raises(WALCorruptError) as err:
        read_segment(path, last=True)
    assert err.value.offset == len(fs[0]) and err.value.path == path
    assert f"{path} at offset {len(fs[0])}" in str(err.value)


def test_a_cut_record_in_an_older_segment_is_corruption(tmp_path: Path):
    fs = frames()
    path = write(tmp_path / "1.wal", fs[0] + fs[1][:5])
    with pytest.raises(WALCorruptError):
        read_segment(path, last=False)
