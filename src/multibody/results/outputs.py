"""Output files written safely (issue 17): every path checked before a run, all-or-nothing writes.

- :func:`check_file` / :func:`check_dir` refuse, before anything is computed, an output path whose
  parent is a file, that lies in /proc, /sys or /dev (except /dev/shm), that names a directory, a
  device, a pipe or a socket (``--out /dev/null`` would otherwise be replaced by a regular file), whose
  name is too long for its file system (with room for the temporary name), whose directory cannot be
  written (read-only file system, permissions: probed by creating and removing a file) or whose
  extension is not the format's. The message names the option and the path (exit 2).
- :func:`atomic_write` writes into a temporary file ``.NAME.mbtmp-PID-XXXX.tmp`` in the target's own
  directory, flushes it to disk (``os.fsync``), gives it the mode of the file it replaces (or the
  umask's for a new file), renames it over the target (``os.replace``: a reader sees the old or the
  new file, never half of one) and syncs the directory. A symbolic link is written through: its target
  is replaced, the link stays. On any error, and on SIGTERM/SIGHUP (:func:`exit_on_signals` turns
  them into SystemExit so that ``finally`` runs) the temporary file is removed; a full disk (ENOSPC)
  is one clean error and the earlier file is untouched. Temporary files left by a killed process
  (SIGKILL cannot be caught) are removed by the next check of that path (:func:`sweep_stale`).
- :class:`Outputs` does the same for several files and a figure directory at once: everything is
  staged first and renamed only when every part was written (a failed CSV leaves the HDF5 file of an
  earlier run in place).
"""
from __future__ import annotations

import errno
import os
import shutil
import stat
from contextlib import contextmanager
from pathlib import Path

from ..errors import MultibodyError
from .tempfiles import TMP_EXTRA, sweep_stale, sweep_stale_dirs, temp_name

#: file systems that are not storage: writing there is refused
PSEUDO_ROOTS = ("/proc", "/sys", "/dev")
#: ... except these (tmpfs)
ALLOWED_UNDER_PSEUDO = ("/dev/shm",)
#: the oldest HDF5 file format written: 1.8 (dense attribute storage for large label lists)
HDF5_LIBVER = ("v108", "latest")
#: extensions of an HDF5 result file
HDF5_SUFFIXES = (".h5", ".hdf5", ".hdf", ".he5", ".nc")


def _fail(option: str | None, path, why: str) -> MultibodyError:
    where = f"{option} '{path}'" if option else f"'{path}'"
    return MultibodyError(f"{where}: {why}")


def _real(path: Path) -> Path:
    """The file actually written: a symbolic link's target (followed to the end), else the path."""
    return Path(os.path.realpath(path)) if path.is_symlink() else Path(os.path.abspath(path))


def _pseudo(path: Path) -> bool:
    text = os.path.realpath(path)
    if any(text == a or text.startswith(a + "/") for a in ALLOWED_UNDER_PSEUDO):
        return False
    return any(text == r or text.startswith(r + "/") for r in PSEUDO_ROOTS)


def _existing_ancestor(path: Path) -> Path:
    p = path
    while not os.path.lexists(p) and p != p.parent:
        p = p.parent
    return p


def _probe_writable(option, path, directory: Path) -> None:
    """Create and remove a file in ``directory``: catches read-only file systems, permissions, quotas."""
    probe = directory / f".mbtmp-{os.getpid()}-probe0000.tmp"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise _fail(option, path, f"cannot write in the directory '{directory}': {exc.strerror}.") from None


def _check_parent(option, path, parent: Path) -> None:
    """The nearest existing ancestor of ``parent`` is a writable directory on a storage file system."""
    anc = _existing_ancestor(parent)
    if _pseudo(anc) or _pseudo(parent):
        raise _fail(option, path, "lies in /proc, /sys or /dev, which are not storage; choose another directory.")
    if not anc.is_dir():
        raise _fail(option, path, f"'{anc}' is a file, not a directory.")
    for part in parent.relative_to(anc).parts if anc != parent else ():
        _check_name(option, path, part, anc, extra=0)
    _probe_writable(option, path, anc)


def _check_name(option, path, name: str, directory: Path, extra: int) -> None:
    try:
        limit = os.pathconf(directory, "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    size = len(os.fsencode(name))
    if size + extra > limit:
        raise _fail(option, path, f"the name '{name[:40]}...' is {size} bytes long; this file system takes "
                                  f"names of at most {limit - extra} bytes here.")


def _check_text(option, path) -> Path:
    text = str(path)
    if not text.strip():
        raise _fail(option, path, "the path is empty.")
    if "\0" in text:
        raise _fail(option, text.replace("\0", "\\0"), "the path contains a NUL character.")
    if len(os.fsencode(text)) > 4000:
        raise _fail(option, text[:60] + "...", "the path is longer than 4,000 bytes.")
    p = Path(os.path.expanduser(text))
    for part in p.parts:
        if len(os.fsencode(part)) > 255:
            raise _fail(option, text[:60] + "...", f"the name '{part[:40]}...' is {len(os.fsencode(part))} bytes "
                                                   "long; file systems take names of at most 255 bytes.")
    return p


def check_file(option: str | None, path, suffixes: tuple = ()) -> Path:
    """Check an output file before the run (module docstring); returns the path as given (a Path)."""
    try:
        return _check_file(option, path, suffixes)
    except OSError as exc:   # a path the checks did not foresee (loops of links, ...): still one message
        raise _fail(option, path, f"cannot be written: {exc.strerror or exc}.") from None


def _check_file(option, path, suffixes) -> Path:
    p = _check_text(option, path)
    if p.name in ("", ".", "..") or str(path).endswith(os.sep):
        raise _fail(option, path, "names a directory, not a file.")
    if suffixes and p.suffix.lower() not in suffixes:
        raise _fail(option, path, f"the file name must end in {' or '.join(suffixes)}.")
    real = _real(p)
    if os.path.lexists(real):
        st = os.stat(real) if real.exists() else None
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise _fail(option, path, "is a directory, not a file.")
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise _fail(option, path, "is not a regular file (a device, pipe or socket); it is never replaced.")
        if st is not None and not os.access(real, os.W_OK) and os.geteuid() != 0:
            raise _fail(option, path, "exists and is read-only.")
    _check_parent(option, path, real.parent)
    _check_name(option, path, real.name, _existing_ancestor(real.parent), extra=TMP_EXTRA)
    if real.parent.is_dir():
        sweep_stale(real)
    return p


def check_dir(option: str | None, path) -> Path:
    """Check an output directory (created when missing) before the run; returns it as a Path."""
    try:
        return _check_dir(option, path)
    except OSError as exc:
        raise _fail(option, path, f"cannot be written: {exc.strerror or exc}.") from None


def _check_dir(option, path) -> Path:
    p = _check_text(option, path)
    real = Path(os.path.realpath(p))
    if os.path.lexists(real) and not real.is_dir():
        raise _fail(option, path, "is a file, not a directory.")
    if real.is_dir():
        if _pseudo(real):
            raise _fail(option, path, "lies in /proc, /sys or /dev, which are not storage; choose another directory.")
        _probe_writable(option, path, real)
        sweep_stale_dirs(real)
    else:
        _check_parent(option, path, real)
    return p


def check_distinct(named: dict) -> None:
    """No two output options name the same file ({option: path}; None entries ignored)."""
    seen = {}
    for option, path in named.items():
        if path is None:
            continue
        real = _real(Path(path))
        if real in seen:
            raise MultibodyError(f"{seen[real]} and {option} both name '{path}'; give each output its own file.")
        seen[real] = option


def _new_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _sync(path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sync_dir(directory: Path) -> None:
    try:
        _sync(directory)
    except OSError:     # some file systems cannot sync a directory; the rename itself is atomic
        pass


def _io_error(option, path, exc: OSError) -> MultibodyError:
    full = exc.errno in (errno.ENOSPC, errno.EDQUOT) or "No space left" in str(exc)
    why = "the disk is full (no space left on device)" if full else (exc.strerror or str(exc))
    return _fail(option, path, f"cannot write: {why}; nothing was replaced (an earlier file is unchanged).")


def _finish(tmp: Path, real: Path) -> None:
    """fsync, mode (the replaced file's, else the umask's), rename over ``real``."""
    _sync(tmp)
    mode = stat.S_IMODE(os.stat(real).st_mode) if real.exists() else _new_mode()
    os.chmod(tmp, mode)
    os.replace(tmp, real)


def atomic_write(path, write, option: str | None = None) -> Path:
    """``write(tmp)`` fills a temporary file, which then replaces ``path`` (module docstring). Returns
    ``path``. OSError (disk full, read-only, ...) becomes MultibodyError naming the option and path."""
    path = Path(path)
    real = _real(path)
    real.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(real)
    try:
        write(tmp)
        _finish(tmp, real)
    except OSError as exc:
        raise _io_error(option, path, exc) from None
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)
    _sync_dir(real.parent)
    return path


def write_hdf5(path, fill) -> None:
    """``fill(h5)`` builds an HDF5 file in memory, whose bytes are then written to ``path`` by plain
    Python I/O: a full disk is then one OSError (the HDF5 library itself, failing to write mid-file,
    raised a second error while closing and crashed the interpreter at exit: segfault, exit 139).
    The file format of HDF5 1.8 (HDF5_LIBVER) stores attributes over 64 KB (the labels of a model
    with 1,000 joints) in dense storage; the format of 1.6 refused them ("object header message is
    too large"). netCDF-4 is HDF5 1.8 as well."""
    import io

    import h5py

    buf = io.BytesIO()
    with h5py.File(buf, "w", libver=HDF5_LIBVER) as h5:
        fill(h5)
    with open(path, "wb") as f:
        f.write(buf.getbuffer())


# ----------------------------------------------------------------------------- several outputs at once
class Outputs:
    """Files (``file``) and figure directories (``directory``) written all or nothing: checked on
    registration, then inside ``with outputs.staging():`` each writer writes a staged temporary
    (``stage(option)`` / ``stage_dir(option)``); on leaving the block without error everything is
    synced and renamed into place, otherwise every temporary is removed."""

    def __init__(self):
        self.files: dict[str, Path] = {}
        self.dirs: dict[str, Path] = {}
        self._tmp: dict[str, Path] = {}
        self._current = None

    def file(self, option: str, path, suffixes: tuple = ()) -> Path:
        self.files[option] = check_file(option, path, suffixes)
        check_distinct({**self.files})
        return self.files[option]

    def directory(self, option: str, path) -> Path:
        self.dirs[option] = check_dir(option, path)
        return self.dirs[option]

    def stage(self, option: str) -> Path:
        real = _real(self.files[option])
        real.parent.mkdir(parents=True, exist_ok=True)
        self._tmp[option] = temp_name(real)
        self._current = option
        return self._tmp[option]

    def stage_dir(self, option: str) -> Path:
        real = Path(os.path.realpath(self.dirs[option]))
        real.mkdir(parents=True, exist_ok=True)
        self._tmp[option] = real / f".mbtmp-{os.getpid()}-{os.urandom(6).hex()[:8]}"
        self._tmp[option].mkdir()
        self._current = option
        return self._tmp[option]

    @contextmanager
    def staging(self):
        try:
            yield self
            for option, tmp in self._tmp.items():
                if option in self.files:
                    _sync(tmp)
            for option, tmp in self._tmp.items():
                self._current = option
                self._commit(option, tmp)
        except OSError as exc:
            option = self._current
            raise _io_error(option, self.files.get(option, self.dirs.get(option, "")), exc) from None
        finally:
            self._cleanup()

    def _commit(self, option: str, tmp: Path) -> None:
        if option in self.files:
            _finish(tmp, _real(self.files[option]))
            _sync_dir(tmp.parent)
            return
        for f in sorted(tmp.iterdir()):
            _sync(f)
            os.chmod(f, _new_mode())
            os.replace(f, tmp.parent / f.name)
        _sync_dir(tmp.parent)

    def _cleanup(self) -> None:
        for tmp in self._tmp.values():
            if tmp.is_dir() and not tmp.is_symlink():
                shutil.rmtree(tmp, ignore_errors=True)
            elif os.path.lexists(tmp):
                os.unlink(tmp)
        self._tmp.clear()

    def final(self, option: str, name: str | None = None) -> Path:
        """Where a staged output ends up (a figure ``name`` inside a directory option)."""
        if option in self.files:
            return self.files[option]
        return self.dirs[option] / name if name else self.dirs[option]
