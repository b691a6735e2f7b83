"""The vector sidecar: slots in a growable memory-mapped file (or in memory)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import numpy as np
import pytest

from memvara import DimensionMismatchError, StoreCorruptError, StoreError
from memvara.store.sqlite._vectors import VectorFile


def rows(n: int, dim: int = 4, start: float = 1.0) -> np.ndarray:
    return (np.arange(n * dim, dtype=np.float32).reshape(n, dim) + start).astype(np.float32)


@pytest.mark.parametrize("in_file", [True, False])
def test_write_grow_read_zero(tmp_path: Path, in_file: bool) -> None:
    path = str(tmp_path / "v.vecs") if in_file else None
    vf = VectorFile(path, None)
    assert vf.dim is None and vf.capacity == 0
    assert vf.read([0, 1]).shape == (2, 0)
    vf.write([0, 1], rows(2))
    vf.write([200], rows(1, start=100.0))  # past the first capacity: grows
    assert vf.dim == 4 and vf.capacity >= 201
    np.testing.assert_array_equal(vf.read([0, 1]), rows(2))
    np.testing.assert_array_equal(vf.read([200]), rows(1, start=100.0))
    assert not vf.read([150]).any()  # never written: zeros
    vf.zero([1, 999])  # a slot past the end is ignored
    assert not vf.read([1]).any()
    vf.write([], rows(0))
    vf.zero([])
    vf.flush()
    vf.close()


def test_a_file_grows_by_an_eighth_so_its_size_stays_near_what_it_holds(tmp_path: Path) -> None:
    path = tmp_path / "v.vecs"
    vf = VectorFile(str(path), None)
    held, sizes = 0, []
    for batch in (1, 1, 100, 5, 1_000, 3, 3_000, 7):  # writes of many sizes, in slot order
        vf.write(list(range(held, held + batch)), rows(batch))
        held += batch
        sizes.append(path.stat().st_size)
        slots = (sizes[-1] - 64) // (4 * 4)  # a 64-byte header, then 4-d float32 rows
        assert slots == vf.capacity >= held
        assert slots <= max(64, held + held // 8 + 1)  # never twice what it holds
    assert sizes == sorted(sizes) and len(set(sizes)) > 4  # it grew, a step at a time
    np.testing.assert_array_equal(vf.read([held - 1]), rows(7)[-1:])
    vf.close()


def test_rows_in_memory_grow_by_doubling() -> None:
    vf = VectorFile(None, None)
    vf.write([0], rows(1))
    assert vf.capacity == 64
    vf.write([64], rows(1))
    assert vf.capacity == 128
    vf.write([1000], rows(1))
    assert vf.capacity == 1024
    np.testing.assert_array_equal(vf.read([0, 64, 1000]), np.vstack([rows(1)] * 3))


def test_a_second_mapping_sees_growth_by_another_writer(tmp_path: Path) -> None:
    path = str(tmp_path / "v.vecs")
    writer = VectorFile(path, None)
    writer.write([0], rows(1))
    reader = VectorFile(path, 4)
    writer.write([500], rows(1, start=7.0))
    reader.write([100], rows(1, start=3.0))  # maps the writer's growth instead of growing
    np.testing.assert_array_equal(writer.read([100]), rows(1, start=3.0))
    np.testing.assert_array_equal(reader.read([500]), rows(1, start=7.0))
    reader.write([600], rows(1, start=9.0))  # grows past what it mapped, via the file size
    np.testing.assert_array_equal(writer.read([600]), rows(1, start=9.0))
    reader.write([1], rows(1))  # within the remapped capacity
    writer.close()
    reader.close()


def test_reopening_reads_what_was_written(tmp_path: Path) -> None:
    path = str(tmp_path / "v.vecs")
    first = VectorFile(path, None)
    first.write([3], rows(1))
    first.close()
    again = VectorFile(path, None)
    assert again.dim == 4
    np.testing.assert_array_equal(again.read([3]), rows(1))
    again.close()


def test_widths_cannot_mix(tmp_path: Path) -> None:
    path = str(tmp_path / "v.vecs")
    vf = VectorFile(path, None)
    vf.write([0], rows(1))
    with pytest.raises(DimensionMismatchError, match="4-d"):
        vf.write([1], rows(1, dim=8))
    vf.close()
    with pytest.raises(StoreCorruptError, match="records 8-d"):
        VectorFile(path, 8)


def test_a_bad_header_is_corruption(tmp_path: Path) -> None:
    path = tmp_path / "v.vecs"
    path.write_bytes(b"\x00" * 80)
    with pytest.raises(StoreCorruptError, match="bad header"):
        VectorFile(str(path), None)


def test_an_empty_file_body_maps_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "v.vecs")
    vf = VectorFile(path, None)
    vf.write([0], rows(1))
    vf.close()
    with open(path, "r+b") as handle:
        handle.truncate(64)
    again = VectorFile(path, None)
    assert again.capacity == 0
    assert not again.read([0]).any()
    again.close()


def test_a_read_never_grows_the_file(tmp_path: Path) -> None:
    path = tmp_path / "v.vecs"
    vf = VectorFile(str(path), None)
    vf.write([0], rows(1))
    size = path.stat().st_size
    assert not vf.read([10_000]).any()
    assert path.stat().st_size == size
    vf.close()


def test_a_sidecar_whose_width_is_already_known_is_created_on_its_first_write(tmp_path: Path) -> None:
    path = str(tmp_path / "v.vecs")
    sidecar = VectorFile(path, 8)  # the store knows the width from its other sidecar
    assert not Path(path).exists()
    sidecar.write([3], np.ones((1, 8), dtype=np.float32))
    np.testing.assert_array_equal(sidecar.read([3]), np.ones((1, 8), dtype=np.float32))
    sidecar.close()
    assert VectorFile(path, 8).read([3]).sum() == 8


def test_how_many_slots_are_on_disk(tmp_path: Path) -> None:
    in_memory = VectorFile(None, 4)
    in_memory.write([9], np.ones((1, 4), dtype=np.float32))
    assert in_memory.slots_on_disk() == in_memory.capacity >= 10
    path = str(tmp_path / "v.vecs")
    on_disk = VectorFile(path, 4)
    assert on_disk.slots_on_disk() == -1  # no file yet
    on_disk.write([9], np.ones((1, 4), dtype=np.float32))
    assert on_disk.slots_on_disk() == on_disk.capacity


@pytest.mark.parametrize(("code", "kind"), [(errno.EFBIG, "StorageFullError"),
                                            (errno.ENOSPC, "StorageFullError"),
                                            (errno.EIO, "StoreError")])
def test_a_sidecar_that_cannot_grow_is_a_memvara_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, kind: str
) -> None:
    import builtins

    import memvara.store.sqlite._vectors as vectors

    sidecar = VectorFile(str(tmp_path / "v.vecs"), 4)
    sidecar.write([0], np.ones((1, 4), dtype=np.float32))
    real_open = builtins.open

    class Refusing:
        def __init__(self, *args: object) -> None:
            self.handle = real_open(*args)  # type: ignore[call-overload]

        def __enter__(self) -> Refusing:
            return self

        def __exit__(self, *exc: object) -> None:
            self.handle.close()

        def truncate(self, size: int) -> None:
            raise OSError(code, os.strerror(code))

    monkeypatch.setattr(vectors, "open", Refusing, raising=False)
    with pytest.raises(StoreError) as caught:
        sidecar.write([10_000], np.ones((1, 4), dtype=np.float32))
    assert type(caught.value).__name__ == kind
    np.testing.assert_array_equal(sidecar.read([0]), np.ones((1, 4), dtype=np.float32))
