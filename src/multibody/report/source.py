"""Where an animation or a report gets its data: the result file and the model that produced it.

A result file stores series and the run summary, not the model. ``multibody run`` records the model's
source (a built-in name or a model file path) as ``summary["model_source"]``; otherwise a built-in
model of the summary's ``model`` name is used, and ``--model SPEC`` overrides both."""
from __future__ import annotations

import os
from pathlib import Path

from ..errors import MultibodyError
from ..results.result import Result

#: output suffixes of an animation
ANIMATION_SUFFIXES = (".gif", ".mp4", ".html")


def load_result(path) -> Result:
    """The Result in ``path``; a clear MultibodyError for a missing file, a directory or another file."""
    p = Path(path)
    if not p.exists():
        raise MultibodyError(f"result file '{p}' does not exist.")
    if p.is_dir():
        raise MultibodyError(f"'{p}' is a directory, not a result file.")
    try:
        return Result.load(p)
    except MultibodyError:
        raise
    except Exception as exc:       # h5py raises several kinds for files that are HDF5 but not ours
        raise MultibodyError(f"'{p}' is not a readable multibody result file ({type(exc).__name__}: {exc}).") \
            from None


def result_model(result: Result, spec: str | None = None):
    """The model of ``result``: from ``spec`` if given, else the recorded source, else the built-in model of
    the same name; None when none of these is available (the caller says what is missing)."""
    from ..io.model_source import load_source
    from ..models import MODELS

    name = result.summary.get("model", "")
    for candidate in (spec, result.summary.get("model_source"), name if name in MODELS else None):
        if not candidate:
            continue
        try:
            model = load_source(candidate).model
        except MultibodyError:
            if candidate == spec:
                raise
            continue
        if model.n == len(result.coordinate_names):
            return model
        if candidate == spec:
            raise MultibodyError(f"--model {spec}: the model has {model.n} coordinates, the result "
                                 f"{len(result.coordinate_names)}; not the model of this result.")
    return None


def check_output(path, suffixes=None) -> Path:
    """``path`` as a writable output file with one of ``suffixes``, checked before any work is done."""
    p = Path(path)
    if suffixes and p.suffix.lower() not in suffixes:
        raise MultibodyError(f"-o {p}: unknown file type '{p.suffix or '(none)'}'; use one of "
                             f"{', '.join(suffixes)}.")
    if p.is_dir():
        raise MultibodyError(f"-o {p}: is a directory.")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise MultibodyError(f"-o {p}: directory '{parent}' does not exist.")
    if not os.access(parent, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise MultibodyError(f"-o {p}: not writable.")
    return p


def write_atomically(path: Path, write) -> Path:
    """Call ``write(tmp)`` on a temporary file next to ``path`` (same suffix), then rename it over ``path``:
    a failed write never leaves half a file or destroys an existing one."""
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
