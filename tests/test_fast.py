"""The compiled Lagrange right-hand side (multibody.fast) reproduces the NumPy reference path.

Both compute the same mathematical solution of M q'' + A^T lam = f, A q'' = gamma; on regular states
they differ by round-off only, eps cond ~ 1e-13 relative here, so 1e-12 relative is asserted
(the issue's "same numbers"). Near the singular configuration both run the same SVD algorithm.
"""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from multibody import RunOptions, simulate  # noqa: E402
from multibody.fast import SCHUR_PIVOT_RATIO, FastLagrangeRhs, supported  # noqa: E402
from multibody.fast import lagrange as fast_lagrange  # noqa: E402
from multibody.formulations.lagrange import Lagrange, Stabilization  # noqa: E402
from multibody.model.builder import ModelBuilder  # noqa: E402
from multibody.model.motion import Motion  # noqa: E402
from multibody.models import MODELS  # noqa: E402
from multibody.models.four_bars import crank_angle_exact  # noqa: E402
from multibody.formulations.registry import make_formulation  # noqa: E402

ROUND_OFF = 1e-12       # relative agreement of two exact solves (eps times a moderate condition number)
SUPPORTED = ["slider-crank", "four-bar", "double-four-bar", "double-four-bar-modified", "triple-four-bar-modified",
             "four-bar-2x2-modified", "physical-pendulum", "door-two-hinges"]


def rel_diff(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


def all_primitives_model():
    """A driven crank + coupler + rod + slider + point mass + a driven pendulum: every primitive
    (Coincident, Distance, Angle, LineProjection, CoordinateDriver) and prescribed motions."""
    mb = ModelBuilder("all-primitives", gravity=(0.0, -9.81))
    mb.add_bar("b1", length=1.0, mass=1.0, position=(0.5, 0.0), angle=0.0)
    mb.add_bar("b2", length=1.0, mass=2.0, position=(1.5, 0.0), angle=0.0)
    mb.add_body("s", mass=1.5, inertia=0.1, position=(2.5, 0.5))
    mb.add_point_mass("p", mass=0.5, position=(1.5, 0.0))
    mb.add_bar("b3", length=1.0, mass=1.0, position=(-1.0, -0.5), angle=-np.pi / 2)
    mb.revolute("O", "ground", "b1", at=(0.0, 0.0))
    mb.driver("O", Motion.harmonic(0.3, 2.0))
    mb.revolute("A", "b1", "b2", at=(1.0, 0.0))
    mb.prismatic("P", "ground", "s", axis=(1.0, 0.0), at=(2.5, 0.5))
    mb.distance("R", "b2", "s", at_a=(2.0, 0.0), at_b=(2.5, 0.5))
    mb.revolute("Q", "b2", "p", at=(1.5, 0.0))
    mb.revolute("H", "ground", "b3", at=(-1.0, 0.0))
    mb.drive_coordinate("b3.theta", Motion.harmonic(0.2, 3.0, offset=-np.pi / 2))
    return mb.build()


def random_states(model, rng, count=5, spread=0.05):
    """States near the model's initial configuration (off the constraint manifold: the rhs is defined
    for any (q, v), and Runge-Kutta stages are off it)."""
    for _ in range(count):
        q = model.q0 + spread * rng.standard_normal(model.n)
        yield np.r_[q, rng.standard_normal(model.n)]


def four_bar_state(theta, omega=-1.0):
    """Exact consistent state of the double four-bar at crank angle theta (docstring of
    models.four_bars.double_four_bar): cranks hinged at x = 0, 1, 2; couplers translate."""
    q, v, c, s = np.zeros(15), np.zeros(15), np.cos(theta), np.sin(theta)
    for body, x0 in ((0, 0.0), (2, 1.0), (4, 2.0)):
        q[3 * body: 3 * body + 3] = (x0 + 0.5 * c, 0.5 * s, theta)
        v[3 * body: 3 * body + 3] = (-0.5 * s * omega, 0.5 * c * omega, omega)
    for body, x0 in ((1, 0.5), (3, 1.5)):
        q[3 * body: 3 * body + 3] = (x0 + c, s, 0.0)
        v[3 * body: 3 * body + 3] = (-s * omega, c * omega, 0.0)
    return np.r_[q, v]


@pytest.mark.parametrize("name", SUPPORTED)
def test_fast_rhs_equals_reference_on_builtin_models(name):
    model = MODELS[name].factory()
    fast, ref = Lagrange(model), Lagrange(model, fast=False)
    assert isinstance(fast.fast_rhs, FastLagrangeRhs) and ref.fast_rhs is None
    for y in random_states(model, np.random.default_rng(7)):
        assert rel_diff(fast.rhs(0.4, y), ref.rhs(0.4, y)) < ROUND_OFF


def test_every_primitive_and_prescribed_motions():
    model = all_primitives_model()
    fast, ref = Lagrange(model), Lagrange(model, fast=False)
    assert fast.fast_rhs is not None and fast.fast_rhs.motions
    for t, y in zip((0.0, 0.3, 1.7), random_states(model, np.random.default_rng(3), count=3)):
        assert rel_diff(fast.rhs(t, y), ref.rhs(t, y)) < ROUND_OFF
    assert fast.fast_rhs.paths[0] >= 1      # a regular state takes the Schur solve


def test_near_singular_double_four_bar():
    """Crank angle sigma -> 0: rank 14 -> 12 (all bars horizontal); sigma down to 1e-10."""
    model = MODELS["double-four-bar"].factory()
    fast, ref = Lagrange(model), Lagrange(model, fast=False)
    for sigma in np.logspace(0, -10, 21):
        y = four_bar_state(sigma)
        assert rel_diff(fast.rhs(0.0, y), ref.rhs(0.0, y)) < ROUND_OFF, sigma
    assert fast.fast_rhs.paths[0] > 0 and fast.fast_rhs.paths[1] > 0   # both solves were exercised


def test_schur_and_svd_solves_agree_at_the_switch():
    """Around the pivot-ratio threshold both solves are exact to round-off: no jump of the rhs."""
    model = MODELS["double-four-bar"].factory()
    form = Lagrange(model)
    schur = FastLagrangeRhs(form, schur_pivot_ratio=1e-300)     # Schur wherever S is positive definite
    svd = FastLagrangeRhs(form, schur_pivot_ratio=0.0)          # always the SVD solve
    auto = FastLagrangeRhs(form)
    for theta in np.linspace(0.01, 0.2, 20):
        y = four_bar_state(theta)
        a, b = schur(0.0, y), svd(0.0, y)
        assert rel_diff(a, b) < ROUND_OFF, theta
        auto(0.0, y)
    assert svd.paths[0] == 0 and schur.paths[1] == 0
    assert auto.paths[0] > 0 and auto.paths[1] > 0              # the switch lies inside this range
    assert 0 < SCHUR_PIVOT_RATIO < 1


def test_full_run_same_tip_error():
    """10 s of the double four-bar (dopri5 rtol 1e-6): same trajectory within the tolerance."""
    model = MODELS["double-four-bar"].factory()
    runs = [simulate(model, t_end=10.0, options=RunOptions(), formulation_options={"fast": on})
            for on in (False, True)]
    errors = []
    for r in runs:
        th = r.column("q", "bar1.theta")
        exact = crank_angle_exact(r.t)
        errors.append(np.hypot(np.cos(th) - np.cos(exact), np.sin(th) - np.sin(exact)).max())
    tol = RunOptions().rtol
    assert abs(errors[0] - errors[1]) < tol
    assert errors[1] < 1e3 * tol     # the integrator's global error stays at the tolerance's order
    n = min(len(runs[0].t), len(runs[1].t))
    assert np.abs(runs[0].t[:n] - runs[1].t[:n]).max() < 1e-3     # essentially the same steps


@pytest.mark.parametrize("name", ["pendulum", "mobile-robot", "four-bar-relative"])
def test_fallback_for_unsupported_models(name):
    model = MODELS[name].factory()
    form = Lagrange(model)
    assert form.fast_rhs is None and supported(form) is not None


def test_fallback_options_and_missing_numba(monkeypatch):
    model = MODELS["four-bar"].factory()
    assert make_formulation("projection", model).fast_rhs is None     # a Lagrange subclass with its own solve
    assert Lagrange(model, fast=False).fast_rhs is None
    assert Lagrange(model, stabilization=Stabilization("baumgarte")).fast_rhs is None
    monkeypatch.setattr(fast_lagrange, "numba_available", lambda: False)
    form = Lagrange(model)
    assert form.fast_rhs is None
    y = form.initial_state(0.0, model.q0, model.v0)
    assert np.all(np.isfinite(form.rhs(0.0, y)))
