"""Loading a user's model file: a .py file that defines build() (shared by `run` and `sweep`)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

from ..errors import MultibodyError


def load_module(spec: str, what: str = "build() returning a model"):
    """Import the Python file ``spec`` and return its module, which must define a callable build().

    Any error in the user's file becomes a MultibodyError naming the file (never a traceback)."""
    path = Path(spec)
    if path.suffix != ".py":
        raise MultibodyError(f"unknown model '{spec}': not a built-in model (see 'multibody models') "
                             "and not a path to a model file (.toml, .json, .urdf) or a .py file.")
    if not path.is_file():
        raise MultibodyError(f"model file '{spec}' does not exist.")
    module_spec = importlib.util.spec_from_file_location(f"multibody_user_{path.stem}", path)
    module = importlib.util.module_from_spec(module_spec)
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:  # the user's file: report, never a traceback
        raise MultibodyError(f"model file '{spec}' failed to load: {type(exc).__name__}: {exc}") from None
    if not callable(getattr(module, "build", None)):
        raise MultibodyError(f"model file '{spec}' does not define a function {what}.")
    return module
