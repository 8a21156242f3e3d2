"""Our temporary files: their names, their removal after a killed process, and signals that end a
process through ``finally`` blocks (used by :mod:`.outputs`; issue 17)."""
from __future__ import annotations

import os
import re
import shutil
import signal
import time
from pathlib import Path

#: bytes a temporary name adds to the target's: "." + ".mbtmp-" + pid + "-" + 8 chars + ".tmp"
TMP_EXTRA = 40
#: a temporary file of the older naming (.NAME.XXXXXXXX.tmp) is removed when older than this [s]
LEGACY_TMP_AGE_S = 3600.0
_TMP_RE = re.compile(r"\.mbtmp-(\d+)-[A-Za-z0-9_]{8}(\.tmp)?$")
_LEGACY_RE = re.compile(r"\.[A-Za-z0-9_]{8}\.tmp$")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stale(entry: os.DirEntry, now: float) -> bool:
    m = _TMP_RE.search(entry.name)
    if m:
        return int(m.group(1)) != os.getpid() and not _pid_alive(int(m.group(1)))
    if _LEGACY_RE.search(entry.name):
        return now - entry.stat(follow_symlinks=False).st_mtime > LEGACY_TMP_AGE_S
    return False


def sweep_stale(target: Path) -> list[Path]:
    """Remove our temporary files of ``target`` (``.NAME.mbtmp-PID-*``) whose process is gone, and
    those of the older naming (``.NAME.XXXXXXXX.tmp``) older than LEGACY_TMP_AGE_S; returns them."""
    removed, now, prefix = [], time.time(), f".{target.name}."
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return removed
    for e in entries:
        if e.name.startswith(prefix) and e.is_file(follow_symlinks=False) and _stale(e, now):
            try:
                os.unlink(e.path)
                removed.append(Path(e.path))
            except OSError:
                pass
    return removed


def sweep_stale_dirs(directory: Path) -> None:
    """Remove staging directories ``.mbtmp-PID-*`` of dead processes inside a figure directory."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for e in entries:
        m = _TMP_RE.search(e.name)
        if e.name.startswith(".mbtmp-") and m and e.is_dir(follow_symlinks=False) and not _pid_alive(int(m.group(1))):
            shutil.rmtree(e.path, ignore_errors=True)


def temp_name(target: Path) -> Path:
    """A fresh temporary path next to ``target`` (same directory: the rename stays on one file system)."""
    token = os.urandom(6).hex()[:8]
    return target.parent / f".{target.name}.mbtmp-{os.getpid()}-{token}.tmp"


# ----------------------------------------------------------------------------- signals
class Terminated(SystemExit):
    """SIGTERM or SIGHUP, raised where the process is (exit code 128 + signal number)."""


def _raise_exit(signum, _frame):
    raise Terminated(128 + signum)


def exit_on_signals():
    """SIGTERM and SIGHUP end the process through SystemExit (``finally`` blocks run, temporary files
    are removed) instead of killing it at once. Main thread only (a no-op elsewhere). Returns a function
    that puts the earlier handlers back (the command line run inside another program: a test, a
    notebook; its SIGTERM must not stay a SystemExit raised wherever that program is)."""
    installed = {}
    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is None:
            continue
        try:
            previous = signal.getsignal(sig)
            if previous in (signal.SIG_DFL, None):
                signal.signal(sig, _raise_exit)
                installed[sig] = signal.SIG_DFL if previous is None else previous
        except ValueError:      # not the main thread
            break

    def restore() -> None:
        for sig, handler in installed.items():
            if signal.getsignal(sig) is _raise_exit:
                signal.signal(sig, handler)
    return restore
