"""Where an animation or a report gets its data: the result file and the model that produced it.

A result file stores series and the run summary, not the model. ``multibody run`` records the model's
source (a built-in name or a model file path) as ``summary["model_source"]``; otherwise a built-in
model of the summary's ``model`` name is used, and ``--model SPEC`` overrides both."""
from __future__ import annotations

from pathlib import Path

from ..errors import MultibodyError
from ..results.outputs import atomic_write, check_file
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


def check_output(path, suffixes=None, option: str = "-o") -> Path:
    """``path`` as a writable output file with one of ``suffixes``, checked before any work is done
    (results.outputs.check_file: the run's own checks, one message naming the option and the path)."""
    return check_file(option, path, tuple(suffixes or ()))


def write_atomically(path: Path, write) -> Path:
    """``write(tmp)`` into a temporary file that then replaces ``path`` (results.outputs.atomic_write: fsync,
    mode from the umask or the replaced file, symlinks written through, temp file removed on failure)."""
    return atomic_write(path, write)
