"""Numba's on-disk cache of this package's kernels, dropped whenever any kernel source changed.

numba (0.68) keys a cached kernel on the stamp (modification time, size) of the file that defines it, not on the
kernels it calls: a kernel whose own file is unchanged keeps the machine code it was compiled with, including the
inlined code of a callee in another file that has changed since. When the callee's arguments or buffer layout
changed, that stale code reads and writes outside its arrays (issue 16, session 7: a stale ``nullspace_rk`` cache
segfaulted after ``nullspace_rhs_kernels`` changed its buffer layout). A fresh install writes every file anew, so it
is not affected; a checkout that switches branches is.

:func:`drop_if_changed` keeps a digest of all kernel sources (``*.py`` of the kernel directories) next to their
caches and, when it differs, deletes the cache files (``*.nbi``, ``*.nbc``) of those directories before any kernel
is loaded, so every kernel is compiled again against its current callees. It runs once per process, on the first
import of :mod:`multibody.fast`.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

#: the directories whose modules define cached numba kernels (fast, and integrate's generalized-alpha kernels)
KERNEL_DIRS = (Path(__file__).parent, Path(__file__).parent.parent / "integrate")
DIGEST_FILE = "multibody-kernels.digest"


def sources_digest(dirs) -> str:
    """SHA-256 over the names and contents of the ``*.py`` files of ``dirs`` (sorted, so the same sources give the
    same digest)."""
    h = hashlib.sha256()
    for d in dirs:
        for f in sorted(Path(d).glob("*.py")):
            h.update(f.name.encode())
            h.update(f.read_bytes())
    return h.hexdigest()


def drop_if_changed(dirs=KERNEL_DIRS) -> bool:
    """Delete the numba cache files in the ``__pycache__`` of ``dirs`` if their sources' digest differs from the one
    recorded there (or none is); record the current one. True if files were dropped. Unwritable directories (a
    read-only install) are left alone: numba then caches elsewhere, per file, and the install's files are all new."""
    digest = sources_digest(dirs)
    caches = [Path(d) / "__pycache__" for d in dirs]
    stamp = caches[0] / DIGEST_FILE
    try:
        if stamp.read_text() == digest:
            return False
    except OSError:
        pass
    try:
        for cache in caches:
            for f in list(cache.glob("*.nbi")) + list(cache.glob("*.nbc")):
                f.unlink(missing_ok=True)
        caches[0].mkdir(exist_ok=True)
        stamp.write_text(digest)
    except OSError:
        return False
    return True
