"""Where a model comes from: a built-in name, a model file (.toml/.json, data only), a URDF robot (.urdf) or
a user's Python file (below every command that loads one)."""
from __future__ import annotations

from pathlib import Path

from ..errors import MultibodyError
from ..model.system import Model
from .model_file import FileModel, load_model_file, load_urdf
from .userfiles import end_time, load_module, run_user_code


def load_model(spec: str) -> tuple[Model, float]:
    """A built-in model name, a model file (.toml, .json), a URDF (.urdf) or a Python file that defines
    build() -> Model. Returns the model and its default end time."""
    source = load_source(spec)
    return source.model, source.t_end


def load_source(spec: str) -> FileModel:
    """The model with its default end time, events and suggested run settings (dispatch on the suffix)."""
    from ..models import MODELS

    if spec in MODELS:
        entry = MODELS[spec]
        return FileModel(entry.factory(), entry.t_end, tuple(entry.events), dict(entry.settings))
    suffix = Path(spec).suffix
    if suffix in (".toml", ".json"):
        return load_model_file(spec)
    if suffix == ".urdf":
        return FileModel(load_urdf(spec), 1.0)
    module = load_module(spec)
    build = module.build
    try:
        model = run_user_code(build, f"build() in '{spec}'")
    except MultibodyError as exc:
        raise exc if spec in str(exc) else type(exc)(f"model file '{spec}': {exc}") from None
    except Exception as exc:
        raise MultibodyError(f"build() in '{spec}' raised {type(exc).__name__}: {exc}") from None
    if not isinstance(model, Model):
        raise MultibodyError(f"build() in '{spec}' returned {type(model).__name__}, not a multibody Model.")
    return FileModel(model, end_time(module, spec))
