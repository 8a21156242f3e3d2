"""The kernel cache is dropped when any kernel source changes (multibody.fast.kernel_cache): numba keys a cached
kernel on its own file only, so a caller's cache would keep the inlined code of a changed callee."""
from multibody.fast.kernel_cache import DIGEST_FILE, drop_if_changed, sources_digest


def _tree(tmp_path):
    dirs = [tmp_path / "fast", tmp_path / "integrate"]
    for d in dirs:
        (d / "__pycache__").mkdir(parents=True)
        (d / "k.py").write_text("x = 1\n")
        (d / "__pycache__" / "k.f-1.py311.nbi").write_bytes(b"index")
        (d / "__pycache__" / "k.f-1.py311.1.nbc").write_bytes(b"code")
        (d / "__pycache__" / "k.cpython-311.pyc").write_bytes(b"pyc")
    return dirs


def _numba_files(dirs):
    return sorted(p.name for d in dirs for p in (d / "__pycache__").iterdir() if p.suffix in (".nbi", ".nbc"))


def test_a_changed_callee_drops_every_cached_kernel_and_nothing_else(tmp_path):
    dirs = _tree(tmp_path)
    assert drop_if_changed(dirs)                 # no digest yet: the caches cannot be vouched for
    assert _numba_files(dirs) == []
    assert (dirs[0] / "__pycache__" / "k.cpython-311.pyc").exists()
    assert (dirs[0] / "__pycache__" / DIGEST_FILE).read_text() == sources_digest(dirs)

    (dirs[0] / "__pycache__" / "k.g-2.py311.nbi").write_bytes(b"index")    # compiled against these sources
    assert not drop_if_changed(dirs)             # unchanged sources: the cache stays
    assert _numba_files(dirs) == ["k.g-2.py311.nbi"]

    (dirs[1] / "k.py").write_text("x = 2\n")     # a callee in the other directory changes
    assert drop_if_changed(dirs)
    assert _numba_files(dirs) == []


def test_the_digest_depends_on_contents_and_names(tmp_path):
    dirs = _tree(tmp_path)
    before = sources_digest(dirs)
    (dirs[0] / "k.py").write_text("x = 1\n")     # same contents written again: same digest
    assert sources_digest(dirs) == before
    (dirs[0] / "k.py").rename(dirs[0] / "j.py")
    assert sources_digest(dirs) != before
