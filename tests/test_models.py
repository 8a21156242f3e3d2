"""Every built-in model: documented with its source, assembles, and runs a short interval on the
constraint manifold with its default formulation (and its own events, if it has any)."""
import importlib.util

import pytest

from multibody import simulate
from multibody.models import MODELS

NEEDS = {"robot-emergency-stop": "pinocchio"}


@pytest.mark.parametrize("name", list(MODELS))
def test_builtin_model_runs_on_its_manifold(name):
    if name in NEEDS and importlib.util.find_spec(NEEDS[name]) is None:
        pytest.skip(f"{name} needs the optional '{NEEDS[name]}' package (extra 'robots')")
    entry = MODELS[name]
    assert len(entry.summary) > 20, "the factory docstring must say what the model is and its source"
    model = entry.factory()
    r = simulate(model, t_end=min(0.05, entry.t_end), events=entry.events)
    assert r.summary["constraint_violation_max"] < 1e-10 * model.length_scale
    assert r.t[-1] == pytest.approx(min(0.05, entry.t_end))
