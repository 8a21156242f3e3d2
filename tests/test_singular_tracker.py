"""The null-space formulation's singular tracker (formulations.singular) locates a crossing from three accepted states
and takes the branch tangent from configurations inside their bracket (issue 12: N-four-bar with 40 cells, nullspace
at rtol 1e-10, whose run ended at t = 3.21213 where the tracker's projection of an extrapolated cubic did not
converge)."""
from __future__ import annotations

import numpy as np
import pytest

from multibody import RunOptions, simulate
from multibody.errors import MultibodyError
from multibody.formulations.nullspace_continuation import nullspace
from multibody.models import MODELS


@pytest.fixture(scope="module")
def crossing():
    """The double four-bar's states every 1e-5 s around its first crossing (sin theta = 0 near t = 0.7144)."""
    model = MODELS["double-four-bar"].factory()
    run = simulate(model, t_end=0.716, formulation="lagrange",
                   options=RunOptions(rtol=1e-12, atol=1e-14, output_times=tuple(np.arange(0.713, 0.7155, 1e-5))))
    k = int(np.argmin(np.abs(np.sin(run.column("q", "bar1.theta")))))
    return model, run, k


def _tracked(model, run, idx):
    form = nullspace(model)
    form.initial_state(0.0, model.q0, model.v0)
    times = []
    position = form.tracker._position
    form.tracker._position = lambda t: (times.append(t), position(t))[1]
    for i in idx:
        form.tracker.accepted(run.t[i], run.q[i], run.v[i], form._last[4])
    return form, times


@pytest.mark.parametrize("spacing", [1, 3, 10])
def test_branch_tangent_configurations_inside_the_bracket(crossing, spacing):
    """States 1e-5 to 1e-4 s apart, narrower than where sigma_r / sigma_1 reaches BRANCH_RATIO: every configuration
    the tracker projects lies in [t_a, t_c] (the Hermite cubic interpolates there; it does not extrapolate), and the
    crossing is recorded with one continuing motion."""
    model, run, k = crossing
    idx = (k - spacing, k, k + spacing)
    form, times = _tracked(model, run, idx)
    assert len(form.events) == 1 and np.shape(form.events[0]["continuing"])[1] == 1
    assert run.t[idx[0]] <= min(times) and max(times) <= run.t[idx[2]]


def test_event_recorded_where_the_branch_configurations_cannot_be_assembled(crossing, monkeypatch):
    """A branch tangent whose configurations cannot be assembled leaves the event to the tangent before the crossing
    (singular_event's default); it never ends the run."""
    from multibody.formulations.singular import SingularTracker
    model, run, k = crossing

    def fail(self, t_star, offset):
        raise MultibodyError("cannot be assembled")
    monkeypatch.setattr(SingularTracker, "_branch_tangent", fail)
    form, _ = _tracked(model, run, (k - 3, k, k + 3))
    assert len(form.events) == 1 and np.shape(form.events[0]["continuing"])[1] == 1
