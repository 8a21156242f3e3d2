"""Where a model comes from: a built-in name or a user's Python file (below every command that loads one)."""
from __future__ import annotations

from ..errors import MultibodyError
from ..model.system import Model
from .userfiles import load_module


def load_model(spec: str) -> tuple[Model, float]:
    """A built-in model name, or a path to a Python file that defines build() -> Model.

    Returns the model and its default end time."""
    from ..models import MODELS

    if spec in MODELS:
        entry = MODELS[spec]
        return entry.factory(), entry.t_end
    module = load_module(spec)
    build = module.build
    try:
        model = build()
    except MultibodyError:
        raise
    except Exception as exc:
        raise MultibodyError(f"build() in '{spec}' raised {type(exc).__name__}: {exc}") from None
    if not isinstance(model, Model):
        raise MultibodyError(f"build() in '{spec}' returned {type(model).__name__}, not a multibody Model.")
    return model, float(getattr(module, "T_END", 1.0))
