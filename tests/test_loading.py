"""Loading result files and sweep tables that were crafted or damaged (issue 17): one FileFormatError
naming the file and what is wrong, never another exception, never data from another file."""
from __future__ import annotations

import json
import os

import h5py
import numpy as np
import pytest

from multibody.errors import FileFormatError
from multibody.results.result import Result, Series
from multibody.sweep.table import SweepTable


def _good(path):
    t = np.linspace(0.0, 1.0, 4)
    Result(t, {"q": Series(np.c_[t, t], ("x", "y"), "m")}, {"model": "m"}, []).save(path)
    return path


def _edit(path, change):
    with h5py.File(path, "a") as h5:
        change(h5)
    return path


def _secret(tmp_path):
    secret = tmp_path / "secret.bin"
    secret.write_bytes(np.arange(8.0).tobytes())
    return secret


def _external_storage(h5, secret):
    del h5["q"]
    h5.create_dataset("q", shape=(4, 2), dtype=float, external=[(str(secret), 0, 64)])


def _virtual(h5, secret_h5):
    layout = h5py.VirtualLayout(shape=(4, 2), dtype=float)
    layout[:] = h5py.VirtualSource(str(secret_h5), "data", shape=(4, 2))
    del h5["q"]
    h5.create_virtual_dataset("q", layout)


def _bomb(h5):   # a few KB on disk, 800 MB when read
    h5.create_dataset("huge", shape=(10**8,), dtype=float, chunks=(10**6,), compression="gzip")


HOSTILE = {
    "external link": (lambda h5, tmp: h5.__setitem__("ext", h5py.ExternalLink(str(tmp / "other.h5"), "/data")),
                      "external link"),
    "soft link": (lambda h5, tmp: h5.__setitem__("loop", h5py.SoftLink("/loop")), "soft link"),
    "external storage": (lambda h5, tmp: _external_storage(h5, _secret(tmp)), "external file"),
    "virtual dataset": (lambda h5, tmp: _virtual(h5, tmp / "other.h5"), "virtual dataset"),
    "decompression bomb": (lambda h5, tmp: _bomb(h5), "declares"),
    "deep groups": (lambda h5, tmp: h5.create_group("/".join(["g"] * 12)), "nested deeper"),
    "compound type": (lambda h5, tmp: h5.create_dataset("c", data=np.zeros(2, dtype=[("a", "f8"), ("b", "i4")])),
                      "unsupported type"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_result_files_are_refused(tmp_path, name):
    with h5py.File(tmp_path / "other.h5", "w") as h5:
        h5["data"] = np.full((4, 2), 42.0)
    change, words = HOSTILE[name]
    path = _edit(_good(tmp_path / "r.h5"), lambda h5: change(h5, tmp_path))
    with pytest.raises(FileFormatError, match="refused") as info:
        Result.load(path)
    assert str(path) in str(info.value) and words in str(info.value)


MALFORMED = {
    "no time": lambda h5: h5.__delitem__("time"),
    "summary not JSON": lambda h5: h5.attrs.__setitem__("summary", "{not json"),
    "deep JSON": lambda h5: h5.attrs.__setitem__("events", "[" * 100_000 + "]" * 100_000),
    "summary a list": lambda h5: h5.attrs.__setitem__("summary", "[1, 2]"),
    "labels missing": lambda h5: h5["q"].attrs.__delitem__("labels"),
    "labels too few": lambda h5: h5["q"].attrs.__setitem__("labels", ["x"]),
    "rows differ from time": lambda h5: (h5.__delitem__("q"), h5.create_dataset("q", data=np.zeros((3, 2))),
                                         h5["q"].attrs.__setitem__("labels", ["x", "y"])),
    "text series": lambda h5: (h5.__delitem__("q"), h5.create_dataset("q", data=np.array([["a", "b"]] * 4,
                                                                                          dtype=h5py.string_dtype())),
                               h5["q"].attrs.__setitem__("labels", ["x", "y"])),
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_malformed_result_files_give_one_clean_error(tmp_path, name):
    path = _edit(_good(tmp_path / "r.h5"), MALFORMED[name])
    with pytest.raises(FileFormatError, match="malformed") as info:
        Result.load(path)
    assert str(path) in str(info.value)


def test_not_a_result_file(tmp_path):
    (tmp_path / "text.h5").write_text("hello")
    os.mkfifo(tmp_path / "fifo.h5")   # opening a FIFO would block: refused before opening
    (tmp_path / "dir.h5").mkdir()
    for name, words in (("text.h5", "not an HDF5 file"), ("fifo.h5", "not a regular file"),
                        ("dir.h5", "not a regular file"), ("missing.h5", "No such file")):
        with pytest.raises(FileFormatError, match=words):
            Result.load(tmp_path / name)
    with h5py.File(tmp_path / "other.h5", "w") as h5:
        h5["x"] = [1.0]
    with pytest.raises(FileFormatError, match="not a multibody result file"):
        Result.load(tmp_path / "other.h5")


def test_truncated_result_file(tmp_path):
    path = _good(tmp_path / "r.h5")
    data = path.read_bytes()
    for size in (0, 8, 512, len(data) // 2, len(data) - 1):
        path.write_bytes(data[:size])
        with pytest.raises(FileFormatError):
            Result.load(path)


def test_sweep_table_loading_is_guarded(tmp_path):
    path = tmp_path / "s.h5"
    SweepTable.from_rows([{"scenario": 0, "status": "ok", "error": ""}], {"model": "m"}).save(path)
    assert len(SweepTable.load(path)) == 1
    _edit(path, lambda h5: h5.attrs.__setitem__("columns", json.dumps(["scenario", "nope"])))
    with pytest.raises(FileFormatError, match="malformed"):
        SweepTable.load(path)
    _edit(path, lambda h5: h5["columns"].__setitem__("ext", h5py.ExternalLink("/etc/passwd", "/x")))
    with pytest.raises(FileFormatError, match="external link"):
        SweepTable.load(path)


def test_size_limit_from_the_environment(tmp_path, monkeypatch):
    path = _good(tmp_path / "r.h5")
    monkeypatch.setenv("MULTIBODY_MAX_LOAD_BYTES", "16")
    with pytest.raises(FileFormatError, match="MULTIBODY_MAX_LOAD_BYTES"):
        Result.load(path)
    monkeypatch.delenv("MULTIBODY_MAX_LOAD_BYTES")
    assert Result.load(path).q.shape == (4, 2)
