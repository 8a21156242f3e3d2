"""Opening HDF5 files from elsewhere (results, sweep tables) without trusting them (issue 17).

:func:`open_checked` refuses, before any data is read, with one :class:`~multibody.errors.FileFormatError`
naming the file and what is wrong:

- a path that is not a regular file (a FIFO or device would block or stream forever);
- external links and soft links (HDF5 follows them into other files or loops), external raw storage
  (a dataset whose bytes live in another file, e.g. ``/etc/passwd``) and virtual datasets (mapped
  from other files);
- more than MAX_OBJECTS objects or groups nested deeper than MAX_DEPTH;
- datasets of a type that is neither numeric nor text, and datasets or attributes declaring more bytes
  than the limit :func:`max_bytes` (MULTIBODY_MAX_LOAD_BYTES, default 2 GiB) or more than
  MAX_INFLATION times the file's size plus INFLATION_SLACK bytes (a compressed "bomb": a 9.6 KB file
  declaring gigabytes).

Corrupt metadata can make the HDF5 library itself loop or crash where no Python handler runs (a damaged
global heap: reading one string attribute never returned, and ignored SIGALRM, SIGINT and SIGTERM).
Where ``os.fork`` exists, :func:`open_checked` therefore first reads the file in a forked child
(:func:`probe`: the checks above, then every attribute and every dataset of at most PROBE_DATA_BYTES)
and refuses the file when that child does not end within :func:`probe_timeout` seconds
(MULTIBODY_LOAD_TIMEOUT, default 30; 0: no probe) or is killed by a signal.

:func:`malformed` turns the exceptions of reading a structurally wrong file (missing dataset or
attribute, bad JSON, wrong shapes) into the same error class.
"""
from __future__ import annotations

import os
import stat
from contextlib import contextmanager
from pathlib import Path

from ..errors import FileFormatError

MAX_OBJECTS = 100_000
MAX_DEPTH = 8
MAX_INFLATION = 64
INFLATION_SLACK = 64 * 2**20
DEFAULT_MAX_BYTES = 2 * 2**30
#: datasets larger than this are not read by the probe (their metadata and attributes are)
PROBE_DATA_BYTES = 64 * 2**20
DEFAULT_PROBE_TIMEOUT_S = 30.0
#: exceptions that mean "this file does not have the layout it claims"
MALFORMED = (KeyError, ValueError, TypeError, IndexError, AttributeError, RecursionError, RuntimeError,
             UnicodeDecodeError, OverflowError, MemoryError)


def max_bytes() -> int:
    """The most bytes a loaded file may declare (env MULTIBODY_MAX_LOAD_BYTES, default 2 GiB)."""
    try:
        return int(float(os.environ.get("MULTIBODY_MAX_LOAD_BYTES", DEFAULT_MAX_BYTES)))
    except ValueError:
        return DEFAULT_MAX_BYTES


def _refuse(path, what: str, why: str) -> FileFormatError:
    return FileFormatError(f"{what} '{path}' is refused: {why}")


def _check_dataset(path, what, name, ds) -> int:
    import h5py

    if ds.external:
        raise _refuse(path, what, f"dataset '{name}' keeps its data in an external file ({ds.external[0][0]!r}).")
    if ds.is_virtual:
        raise _refuse(path, what, f"dataset '{name}' is a virtual dataset mapped from other files.")
    dt = ds.dtype
    if not (dt.kind in "fiub" or h5py.check_string_dtype(dt) is not None or dt.kind == "S"):
        raise _refuse(path, what, f"dataset '{name}' has the unsupported type {dt}.")
    if ds.shape is None:
        return 0
    return int(ds.size) * max(int(dt.itemsize), 1)


def _attr_bytes(obj) -> int:
    import h5py

    total = 0
    for key in obj.attrs:
        attr = h5py.h5a.open(obj.id, key.encode() if isinstance(key, str) else key)
        if attr.get_space().get_simple_extent_npoints() == 0:
            continue        # an empty attribute (a model without constraints: no multiplier labels) stores nothing,
            # and HDF5 reports its storage size 0 as an error
        total += attr.get_storage_size()
    return total


def _walk(path, what, group, depth: int, budget: dict) -> None:
    import h5py

    if depth > MAX_DEPTH:
        raise _refuse(path, what, f"groups nested deeper than {MAX_DEPTH} levels (or a loop of hard links).")
    budget["bytes"] += _attr_bytes(group)
    for name in group:
        budget["objects"] += 1
        if budget["objects"] > MAX_OBJECTS:
            raise _refuse(path, what, f"more than {MAX_OBJECTS} objects.")
        link = group.get(name, getlink=True)
        where = f"{group.name.rstrip('/')}/{name}"
        if isinstance(link, h5py.ExternalLink):
            raise _refuse(path, what, f"'{where}' is an external link to '{link.filename}'.")
        if isinstance(link, h5py.SoftLink):
            raise _refuse(path, what, f"'{where}' is a soft link to '{link.path}'.")
        obj = group[name]
        if isinstance(obj, h5py.Group):
            _walk(path, what, obj, depth + 1, budget)
        elif isinstance(obj, h5py.Dataset):
            budget["bytes"] += _check_dataset(path, what, where, obj) + _attr_bytes(obj)
        else:
            raise _refuse(path, what, f"'{where}' is a named type, not data.")


def probe_timeout() -> float:
    """Seconds the probe of a file may take (env MULTIBODY_LOAD_TIMEOUT, default 30; 0: no probe)."""
    try:
        return max(float(os.environ.get("MULTIBODY_LOAD_TIMEOUT", DEFAULT_PROBE_TIMEOUT_S)), 0.0)
    except ValueError:
        return DEFAULT_PROBE_TIMEOUT_S


def _touch(h5) -> None:
    """Read every attribute and every dataset of at most PROBE_DATA_BYTES of the open file ``h5``."""
    import h5py

    def visit(_name, obj):
        for key in obj.attrs:
            obj.attrs[key]
        if isinstance(obj, h5py.Dataset) and obj.shape and obj.size * obj.dtype.itemsize <= PROBE_DATA_BYTES:
            obj[()]
    visit("/", h5)
    h5.visititems(visit)


def _probe_child(path, what: str) -> None:
    """In the forked child: the checks and reads; never returns (exit 0 whatever a check found: the
    parent repeats the checks and reports their error itself)."""
    try:
        import faulthandler

        import h5py

        faulthandler.disable()      # a crash here is the parent's finding, not a dump on the user's terminal

        with h5py.File(path, "r") as h5:
            _walk(path, what, h5, 0, {"objects": 0, "bytes": 0})
            _touch(h5)
    except BaseException:       # noqa: BLE001 - only a hang or a crash is the probe's finding
        pass
    os._exit(0)


def probe(path, what: str = "result file") -> None:
    """Read ``path`` in a forked child first (module docstring); FileFormatError when the child does not
    end within :func:`probe_timeout` seconds or dies of a signal (the HDF5 library crashed)."""
    import time

    limit = probe_timeout()
    if limit <= 0 or not hasattr(os, "fork"):
        return
    pid = os.fork()
    if pid == 0:
        _probe_child(path, what)
    deadline, status = time.monotonic() + limit, None
    try:
        while status is None and time.monotonic() < deadline:
            done, code = os.waitpid(pid, os.WNOHANG)
            status = code if done else None
            if status is None:
                time.sleep(0.005)
    finally:
        if status is None:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
    if status is None:
        raise _refuse(path, what, f"reading it did not finish within {limit:g} s: the HDF5 library loops on its "
                                  "damaged content (MULTIBODY_LOAD_TIMEOUT sets the limit in seconds).")
    if os.WIFSIGNALED(status):
        raise _refuse(path, what, f"reading it crashed the HDF5 library (signal {os.WTERMSIG(status)}): its "
                                  "content is damaged.")


@contextmanager
def open_checked(path, what: str = "result file"):
    """The h5py.File at ``path`` opened read-only after the checks of the module docstring."""
    import h5py

    p = Path(path)
    try:
        st = os.stat(p)
    except OSError as exc:
        raise FileFormatError(f"cannot read {what} '{path}': {exc.strerror}.") from None
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(path, what, "it is not a regular file.")
    probe(p, what)
    try:
        h5 = h5py.File(p, "r")
    except OSError as exc:
        raise FileFormatError(f"cannot read {what} '{path}': not an HDF5 file ({' '.join(str(exc).split())}).") \
            from None
    with h5:
        budget = {"objects": 0, "bytes": 0}
        try:
            _walk(path, what, h5, 0, budget)
        except FileFormatError:
            raise
        except (OSError, *MALFORMED) as exc:
            raise FileFormatError(f"{what} '{path}' is damaged: {type(exc).__name__}: {exc}") from None
        limit = min(max_bytes(), MAX_INFLATION * st.st_size + INFLATION_SLACK)
        if budget["bytes"] > limit:
            raise _refuse(path, what, f"it declares {budget['bytes']:,} bytes of data in a file of {st.st_size:,} "
                                      f"bytes (limit here {limit:,}; MULTIBODY_MAX_LOAD_BYTES sets the limit).")
        yield h5


@contextmanager
def malformed(path, what: str = "result file"):
    """Inside: a reading error of a wrongly structured file becomes one FileFormatError naming ``path``."""
    try:
        yield
    except FileFormatError:
        raise
    except (OSError, *MALFORMED) as exc:
        detail = f"missing {exc}" if isinstance(exc, KeyError) else f"{type(exc).__name__}: {exc}"
        raise FileFormatError(f"{what} '{path}' is malformed: {' '.join(detail.split())[:300]}") from None

