"""Double-double residuals of the spatial director constraints and of user (Generic) constraints (issue 12): the
extended-precision polish is the same on every IEEE double platform, never numpy's long double.

References are exact rational arithmetic (fractions.Fraction) of each group's own definition: the quadratic rows
Phi_k = 1/2 x^T H_k x + g_k^T x + c_k of paper 004 (model.director.QuadraticConstraints) and the angle driver
cos f s(q) - sin f c(q) (model.director_drivers) with cos f, sin f as exact series. The error bound is the
error analysis of formulations.extended_spatial: each product within 6 eps_dd of itself (TwoProduct, Dekker's mul2,
a product by a double), the rate's pair sums 2 more, the pairwise sum of K terms 2 eps_dd per level of its depth
ceil(log2 K), the driver's cos / sin and products 8 more: <= (16 + 2 ceil(log2 K)) eps_dd sum_i |term_i|.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from multibody import RunOptions, matrix_system, simulate
from multibody.assembly import Workspace
from multibody.errors import SimulationError
from multibody.formulations.extended_generic import generic_precision
from multibody.formulations.extended_projection import extended_available, polish
from multibody.formulations.extended_residuals import covered, gains, needs_trig, residuals
from multibody.formulations.extended_spatial import terms
from multibody.formulations.lagrange import PIN
from multibody.kinematics import KinematicTolerance, solve_positions, solve_velocities
from multibody.linalg import double_double as dd
from multibody.model.director import QuadraticConstraints
from multibody.model.director_builder import SpatialModelBuilder
from multibody.model.director_drivers import AngleDriver, SlideDriver, motion_values
from multibody.model.motion import Motion
from multibody.models import MODELS

from test_crossings import _exact_crossings
from test_crossings_spatial import spatial_double_four_bar
from test_double_double import EPS_DD, _at, _exact, _series


def _driven_cylinder(coordinate):
    """The cylindrical pair of paper 004 Sect. 5.2 with its slide u or its angle theta driven (a SlideDriver or an
    AngleDriver row)."""
    b = SpatialModelBuilder(f"driven-{coordinate}")
    b.add_body("cylinder", mass=4.0, inertia=[304, 304, 8], position=(0, 0, 0))
    b.add_body("sleeve", mass=3.0, inertia=[18.75, 18.75, 19.5], position=(0, 0, -11))
    b.cylindrical("slide", None, "cylinder", point=(0, 0, 0), axis=(0, 0, 1))
    b.cylindrical("sleeve", "cylinder", "sleeve", point=(0, 0, 0), point2=(0, 0, -11), axis=(0, 0, 1))
    b.driver("slide", Motion.constant_rate(0.0, 1.7), coordinate=coordinate)
    return b.build()


SPATIAL = {"six-body-linkage": MODELS["six-body-linkage"].factory, "spatial-slider-crank":
           MODELS["spatial-slider-crank"].factory, "planar-pair": MODELS["planar-pair"].factory,
           "gimbal-lock": MODELS["gimbal-lock"].factory, "driven-u": lambda: _driven_cylinder("u"),
           "driven-theta": lambda: _driven_cylinder("theta")}


def _forms_exact(H, g, c, cols, q, v):
    """(value, rate, size of value's terms, size of rate's terms) of the rows 1/2 x^T H x + g^T x + c, exactly."""
    out = []
    for k in range(H.shape[0]):
        x, w = [q[i] for i in cols[k]], [v[i] for i in cols[k]]
        val, rate, size, rsize = Fraction(c[k]), Fraction(0), abs(Fraction(c[k])), Fraction(0)
        for i, j in zip(*np.nonzero(H[k])):
            h = Fraction(H[k, i, j]) / 2
            val, size = val + h * x[i] * x[j], size + abs(h * x[i] * x[j])
            rate, rsize = rate + h * (x[i] * w[j] + w[i] * x[j]), rsize + abs(h) * (abs(x[i] * w[j]) + abs(w[i] * x[j]))
        for i in np.flatnonzero(g[k]):
            val, size = val + Fraction(g[k, i]) * x[i], size + abs(Fraction(g[k, i]) * x[i])
            rate, rsize = rate + Fraction(g[k, i]) * w[i], rsize + abs(Fraction(g[k, i]) * w[i])
        out.append((val, rate, size, rsize))
    return out


def _group_exact(g, q, v, t):
    """[(Phi, A v + Phi_t, size of Phi's terms, size of the rate's terms)] of a spatial group, exactly."""
    if isinstance(g, AngleDriver):
        k, w = g.cols.shape
        forms = _forms_exact(g.H.reshape(2 * k, w, w), g.g.reshape(2 * k, w), g.c.reshape(2 * k),
                             np.repeat(g.cols, 2, axis=0), q, v)
        out = []
        for (f, df, _), (s, c) in zip(motion_values(g.motions, t), zip(forms[0::2], forms[1::2])):
            C, S, df = _series(Fraction(f), 0), _series(Fraction(f), 1), Fraction(df)
            phi, rate = C * s[0] - S * c[0], C * s[1] - S * c[1] - df * (S * s[0] + C * c[0])
            out.append((phi, rate, s[2] + c[2], s[3] + c[3] + abs(df) * (s[2] + c[2])))
        return out
    out = _forms_exact(g.H, g.g, g.c, g.cols, q, v)
    if isinstance(g, SlideDriver):
        f = motion_values(g.motions, t)
        out = [(a - Fraction(fk[0]), b - Fraction(fk[1]), s + abs(Fraction(fk[0])), r + abs(Fraction(fk[1])))
               for (a, b, s, r), fk in zip(out, f)]
    return out


@pytest.mark.parametrize("name", list(SPATIAL))
def test_spatial_residuals_agree_with_exact_rational_evaluation(rng, name):
    """Phi(q) and A(q) v + Phi_t of every spatial group (rigidity, S / R / C / P / E pairs, slide and angle
    drivers) at a double-double state (a perturbed start plus a 1e-17 relative correction, as in the projection)
    agree with exact rational evaluation within the module's error bound; the same rows in double are off by up
    to ~eps times their terms."""
    model = SPATIAL[name]()
    assert covered(model) and not needs_trig(model)
    n, t = model.n, 0.37
    hi = np.append(model.q0 + 1e-3 * rng.standard_normal(n), 0.0)
    q = (hi, np.append(hi[:-1] * rng.uniform(-1e-17, 1e-17, n), 0.0))
    vh = np.append(rng.standard_normal(n), 0.0)
    v = (vh, np.append(vh[:-1] * rng.uniform(-1e-17, 1e-17, n), 0.0))
    qx, vx = [_exact(_at(q, i)) for i in range(n + 1)], [_exact(_at(v, i)) for i in range(n + 1)]
    got_phi, got_rate = residuals(model, t, q, None), residuals(model, t, q, None, v)
    row, kinds = 0, set()
    for g in model.constraints:
        assert isinstance(g, (QuadraticConstraints, AngleDriver))
        kinds.add(type(g).__name__)
        T = terms(g, n)
        bound = (16 + 2 * math.ceil(math.log2(T.I.shape[1] + T.L.shape[1] + 1))) * EPS_DD
        for phi, rate, size, rsize in _group_exact(g, qx, vx, t):
            assert abs(_exact(_at(got_phi, row)) - phi) <= bound * size
            assert abs(_exact(_at(got_rate, row)) - rate) <= bound * rsize
            row += 1
    assert row == got_phi[0].size
    if name.startswith("driven"):
        assert {"driven-u": "SlideDriver", "driven-theta": "AngleDriver"}[name] in kinds


def _branch(model, theta, omega):
    """The spatial double four-bar (test_crossings_spatial) on its parallelogram branch: cranks 1, 3, 5 at angle
    theta about z through (i, 0, 0) turning at omega (directors: the columns of the rotation by theta, the identity at
    theta = 0), couplers 2, 4 translating with the crank tips."""
    q, v = np.zeros(model.n), np.zeros(model.n)
    c, s = np.cos(theta), np.sin(theta)
    R, dR = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]]), omega * np.array([[-s, -c, 0], [c, -s, 0], [0, 0, 0.0]])
    for k in range(1, 6):
        i, x0 = model.coordinate_index(f"bar{k}.x"), (k - 1) / 2
        if k % 2:
            D, dD, p, dp = R, dR, (x0 + c / 2, s / 2, 0), (-s * omega / 2, c * omega / 2, 0)
        else:
            D, dD, p, dp = np.eye(3), np.zeros((3, 3)), (x0 + c, s, 0), (-s * omega, c * omega, 0)
        q[i:i + 3], v[i:i + 3], q[i + 3:i + 12], v[i + 3:i + 12] = p, dp, D.T.ravel(), dD.T.ravel()
    return q, v


#: (arithmetic, bound on |v - v_branch| / speed): double-double's eps_dd / rho^2 is far below the double rounding of v
#: and of the branch state (a few eps); long double's eps_x / rho^2 ~ 1e-19 / 1e-7 = 1e-12; none (the projection in
#: double): eps / rho^2 ~ 1e-16 / 1e-7, at least 1e-12 (measured 2.2e-11)
SPATIAL_ARITHMETICS = [("double-double", 8 * np.finfo(float).eps), ("long double", 1e-11)]


@pytest.mark.parametrize("arithmetic, bound", SPATIAL_ARITHMETICS)
def test_spatial_polish_puts_the_velocity_on_the_branch(rng, arithmetic, bound):
    """The spatial double four-bar at 3e-3 rad from its singular configuration (two singular values of A at
    2.7e-4 s_max, above the pin 1e-4): a state 1e-9 off the branch, projected in double and polished, has the
    branch's velocity to ``bound`` times the speed; without the polish it is off by more than 1e-12."""
    if not extended_available(arithmetic):
        pytest.skip("numpy's long double is double here")
    model = spatial_double_four_bar()
    ws = Workspace(model)
    q_b, v_b = _branch(model, 3e-3, -2.0)
    assert np.abs(q_b - _branch(model, np.pi / 2, -1.0)[0]).max() > 0.5
    assert np.abs(_branch(model, np.pi / 2, -1.0)[0] - model.q0).max() < 1e-15
    q = solve_positions(model, q_b + 1e-9 * rng.standard_normal(model.n), ws=ws, tol=KinematicTolerance(pin=PIN))
    v = solve_velocities(model, q, v_b + 1e-9 * rng.standard_normal(model.n), ws=ws,
                         tol=KinematicTolerance(consistency=np.inf, pin=PIN))
    i = model.coordinate_index("bar1.x")
    for qp, vp, limit in ((q, v, None), (*polish(model, ws, 0.0, q, v, PIN, arithmetic), bound)):
        theta = np.arctan2(qp[i + 1], qp[i])
        q_e, v_e = _branch(model, theta, 2 * vp[i + 1] / np.cos(theta))
        assert np.abs(qp - q_e).max() < 1e-13
        off = np.abs(vp - v_e).max() / 2.0
        assert off < limit if limit else off > 1e-12


def _circle(extended: bool):
    """A point mass on the unit circle as a Generic row x^2 + y^2 - 1 (with its double-double residual or not)."""
    def ext(q, v, t):
        x, y = (q[0][0], q[1][0]), (q[0][1], q[1][1])
        if v is None:
            return dd.add(dd.add(dd.mul(x, x), dd.mul(y, y)), (-1.0, 0.0))
        return dd.mul_d(dd.add(dd.mul(x, (v[0][0], v[1][0])), dd.mul(y, (v[0][1], v[1][1]))), 2.0)
    c = dict(name="circle", phi=lambda q, t: q[0] ** 2 + q[1] ** 2 - 1.0, extended=ext if extended else None)
    return matrix_system("circle", ("x", "y"), mass=np.eye(2), q0=[0.6, 0.8], v0=[-0.8, 0.6], constraints=[c])


def test_generic_rows_with_the_users_extended_residual(rng):
    """With ``extended`` the Generic rows are the user's double-double function: exact to its own error analysis
    (two products and two sums, <= 8 eps_dd of the terms); without, the user's double function (lo = 0), the group
    says which, and a model with only such rows is not polished (nothing would gain a digit)."""
    q = (np.array([0.6 + 1e-3 * rng.standard_normal(), 0.8, 0.0]), np.array([3e-18, -2e-18, 0.0]))
    v = (np.array([-0.8, 0.6, 0.0]), np.array([1e-17, 0.0, 0.0]))
    x, y = _exact(_at(q, 0)), _exact(_at(q, 1))
    vx, vy = _exact(_at(v, 0)), _exact(_at(v, 1))
    with_ext, without = _circle(True), _circle(False)
    assert [generic_precision(g) for g in (*with_ext.constraints, *without.constraints)] == \
        ["double-double (user)", "double"]
    assert gains(with_ext) and not gains(without)       # a model of double rows only has nothing to polish
    phi, rate = residuals(with_ext, 0.0, q, None), residuals(with_ext, 0.0, q, None, v)
    assert abs(_exact(_at(phi, 0)) - (x * x + y * y - 1)) <= 8 * EPS_DD * (x * x + y * y + 1)
    assert abs(_exact(_at(rate, 0)) - 2 * (x * vx + y * vy)) <= 8 * EPS_DD * 2 * (abs(x * vx) + abs(y * vy))
    phi = residuals(without, 0.0, q, None)
    assert phi[1][0] == 0.0 and phi[0][0] == (q[0][0] + q[1][0]) ** 2 + (q[0][1] + q[1][1]) ** 2 - 1.0


def test_generic_extended_residual_of_the_wrong_shape_is_named():
    """A user's extended residual that does not return a double-double of the group's rows stops naming it."""
    model = matrix_system("bad", ("x", "y"), mass=np.eye(2), q0=[0.6, 0.8], constraints=[
        dict(name="circle", phi=lambda q, t: q[0] ** 2 + q[1] ** 2 - 1.0, extended=lambda q, v, t: 0.0)])
    with pytest.raises(SimulationError, match="constraint 'circle'.*pair \\(hi, lo\\)"):
        residuals(model, 0.0, dd.dd(np.array([0.6, 0.8, 0.0])), None)


def test_spatial_run_steps_across_the_crossings_at_rtol_1e12():
    """The spatial double four-bar at rtol 1e-12, atol 1e-14 for 3 s (three crossings) with the double-double polish
    (the default on every platform): no step below 1e-3 of the largest (test_crossing_step's SMALLEST_SHARE), each
    crossing reported once at its exact time (test_crossings), the cranks parallel. Without the polish (what a
    platform whose long double is double had) the steps fall to ~1e-7 s at the third crossing, t = 2.657 s, and the
    monitor reports it 9 times."""
    exact = _exact_crossings(3.0)
    model = spatial_double_four_bar()
    r = simulate(model, t_end=3.0, options=RunOptions(rtol=1e-12, atol=1e-14))
    assert r.summary["min_step"] > 1e-3 * np.diff(r.t).max()
    assert len(exact) == 3 and len(r.summary["singular_crossings"]) == 3
    np.testing.assert_allclose([c["t"] for c in r.summary["singular_crossings"]], exact, atol=1e-6)
    th = np.stack([np.arctan2(r.column("q", f"bar{k}.y"), r.column("q", f"bar{k}.x") - (k - 1) / 2)
                   for k in (1, 3, 5)], axis=1)
    assert np.abs(np.angle(np.exp(1j * (th - th[:, :1])))).max() < 1e-8
