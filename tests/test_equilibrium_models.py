"""Equilibrium, linearisation and modes (issue 21) of a sprung four-bar, an overconstrained parallelogram, a
spatial pendulum and a hanging chain, against calculations done independently in minimal coordinates or
closed forms."""
import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.interpolate import CubicSpline
from scipy.optimize import brentq
from scipy.special import jn_zeros

from multibody import ModelBuilder, RunOptions, SpatialModelBuilder, simulate
from multibody.analysis.equilibrium import equilibrium
from multibody.analysis.linearize import modes

G = 9.81
# sprung four-bar: ground pivots O = (0, 0), D = (d, 0); crank a, coupler b, rocker c; uniform bars of RHO kg/m;
# a spring of stiffness K, free length L0 from the ground point S to the crank tip A
A_, B_, C_, D_, RHO, K, L0 = 0.3, 0.8, 0.6, 0.7, 2.0, 150.0, 0.2
S = np.array([0.0, 0.7])


def _closure(theta):
    """Crank tip A, rocker tip B of the open assembly (B above the line AD), analytic in theta so that the
    complex step differentiates it (circle intersection |B - A| = b, |B - D| = c)."""
    A = np.array([A_ * np.cos(theta), A_ * np.sin(theta)])
    e = np.array([D_, 0.0]) - A
    dist = np.sqrt(e @ e)
    x = (dist ** 2 + B_ ** 2 - C_ ** 2) / (2 * dist)
    h = np.sqrt(B_ ** 2 - x ** 2)
    B = A + (x * e + h * np.array([-e[1], e[0]])) / dist
    return A, B


def _bars(theta):
    """(centre, direction vector, length) of crank, coupler, rocker."""
    A, B = _closure(theta)
    O, D = np.zeros(2), np.array([D_, 0.0])
    return [(A / 2, A - O, A_), ((A + B) / 2, B - A, B_), ((B + D) / 2, B - D, C_)]


def _potential(theta):
    V = sum(RHO * ln * G * c[1] for c, _, ln in _bars(theta))
    A = _closure(theta)[0]
    ell = np.sqrt((A - S) @ (A - S))
    return V + 0.5 * K * (ell - L0) ** 2


def _d(fun, theta, h=1e-20):
    """Complex-step derivative d fun / d theta (exact to round-off for analytic fun)."""
    return np.imag(fun(theta + 1j * h)) / h


def _generalized_mass(theta):
    """m(theta) of T = 1/2 m(theta) theta'^2: sum of m |c'|^2 + (m l^2 / 12) phi'^2, phi' = (u x u') / |u|^2."""
    out = 0.0
    for k in range(3):
        c, u, ln = (np.real(x) if np.ndim(x) else x for x in _bars(theta)[k])
        dc = _d(lambda th: _bars(th)[k][0], theta)
        du = _d(lambda th: _bars(th)[k][1], theta)
        m = RHO * ln
        out += m * dc @ dc + m * ln ** 2 / 12 * ((u[0] * du[1] - u[1] * du[0]) / (u @ u)) ** 2
    return out


def sprung_four_bar(theta):
    """The four-bar at crank angle theta, built with ModelBuilder (bars, revolutes, a spring, gravity)."""
    A, B = _closure(theta)
    O, D = np.zeros(2), np.array([D_, 0.0])
    mb = ModelBuilder("sprung-four-bar", gravity=(0.0, -G))
    for name, (c, u, ln) in zip(("crank", "coupler", "rocker"), _bars(theta)):
        mb.add_bar(name, length=ln, mass=RHO * ln, position=tuple(c), angle=float(np.arctan2(u[1], u[0])))
    mb.revolute("O", "ground", "crank", at=tuple(O))
    mb.revolute("A", "crank", "coupler", at=tuple(A))
    mb.revolute("B", "coupler", "rocker", at=tuple(B))
    mb.revolute("D", "ground", "rocker", at=tuple(D))
    mb.spring_damper("spring", "ground", "crank", stiffness=K, free_length=L0, at_a=tuple(S), at_b=tuple(A))
    return mb.build()


def test_sprung_four_bar_equilibrium_frequency_and_simulated_period():
    """Minimal coordinate theta (the crank angle): V'(theta*) = 0, w^2 = V''(theta*) / m(theta*) (Lagrange's
    equation m theta'' + m'/2 theta'^2 + V' = 0 linearised). The model in redundant coordinates (9 coordinates,
    8 rows) must find theta*, w, and its own integrator must swing at 2 pi / w (amplitude 1e-4 rad: the period's
    amplitude correction is O(1e-8))."""
    dV = lambda th: _d(_potential, th)                                           # noqa: E731
    theta_star = brentq(dV, 0.6, 1.6, xtol=1e-15)
    d2V = (dV(theta_star + 1e-5) - dV(theta_star - 1e-5)) / 2e-5
    w = np.sqrt(d2V / _generalized_mass(theta_star))
    model = sprung_four_bar(1.2)                                                 # guess 0.2 rad off
    eq = equilibrium(model)
    assert eq.stable
    names = model.coordinate_names
    np.testing.assert_allclose(eq.q[names.index("crank.theta")], theta_star, atol=1e-9)
    md = modes(model, eq)
    np.testing.assert_allclose(2 * np.pi * md.frequencies_hz, [w], rtol=1e-7)
    # release 1e-4 rad along the mode (shape scaled so that the crank angle moves by 1e-4)
    u = md.shapes[:, 0] / md.shapes[names.index("crank.theta"), 0]
    start = dataclasses.replace(model, q0=eq.q + 1e-4 * u, v0=np.zeros(model.n))
    period = 2 * np.pi / w
    r = simulate(start, t_end=3.2 * period, options=RunOptions(rtol=1e-11, atol=1e-13, output_step=period / 200))
    x = CubicSpline(r.t, r.column("q", "crank.theta") - theta_star)
    roots = x.roots(extrapolate=False)
    assert len(roots) >= 6
    k = 2 * ((len(roots) - 1) // 2)                 # whole periods only (the centre may sit off theta*)
    measured = (roots[k] - roots[0]) / (k / 2)
    assert abs(measured - period) <= 1e-6 * period


def parallelogram(redundant: bool):
    """Two cranks of 1 m hanging from (0, 0) and (1, 0), a coupler of 1 m between their tips (uniform bars,
    1 kg each), rotated by 0.3 rad; ``redundant``: a massless rod from (0.5, 0) to the coupler's middle, parallel
    to the cranks (the classic overconstrained parallelogram: its row is dependent at every configuration)."""
    mb = ModelBuilder("parallelogram" + ("-redundant" if redundant else ""), gravity=(0.0, -G))
    a = -np.pi / 2 + 0.3
    e = np.array([np.cos(a), np.sin(a)])
    for name, x0 in (("crank1", 0.0), ("crank2", 1.0)):
        mb.add_bar(name, length=1.0, mass=1.0, position=tuple(np.array([x0, 0.0]) + e / 2), angle=a)
        mb.revolute(f"O{name[-1]}", "ground", name, at=(x0, 0.0))
    mb.add_bar("coupler", length=1.0, mass=1.0, position=tuple(np.array([0.5, 0.0]) + e), angle=0.0)
    mb.revolute("A", "crank1", "coupler", at=tuple(e))
    mb.revolute("B", "crank2", "coupler", at=tuple(np.array([1.0, 0.0]) + e))
    if redundant:
        mb.distance("link", "ground", "coupler", at_a=(0.5, 0.0), at_b=tuple(np.array([0.5, 0.0]) + e))
    return mb.build()


def test_overconstrained_parallelogram_same_frequency_non_unique_reactions():
    """Minimal coordinate: the crank angle from the vertical, T = 1/2 (2 m l^2 / 3 + m l^2) theta'^2 (two cranks
    about their pivots, the coupler translating on a circle of radius l), V = -(m l / 2 + m l / 2 + m l) g cos
    theta, so w^2 = 2 g / ((5 / 3) l). The massless redundant rod changes no frequency; its reaction and the
    cranks' hinges share the vertical load in a way statics cannot decide (paper 003 eq. 27: not unique), while
    without it every reaction is unique."""
    w = np.sqrt(2 * G / (5 / 3))
    for redundant in (False, True):
        model = parallelogram(redundant)
        eq = equilibrium(model)
        assert eq.stable
        np.testing.assert_allclose(eq.q[model.coordinate_names.index("crank1.theta")], -np.pi / 2, atol=1e-9)
        np.testing.assert_allclose(2 * np.pi * modes(model, eq).frequencies_hz, [w], rtol=1e-8)
        if redundant:
            assert not eq.unique["link"] and not eq.unique["O1"] and not eq.unique["O2"]
        else:
            assert all(eq.unique.values())


@pytest.mark.parametrize("kind", ["revolute", "spherical"])
def test_spatial_pendulum_in_director_coordinates(kind):
    """A rigid body (mass 2, principal inertias (0.1, 0.2, 0.3) about its centre) hanging d = 0.5 below a
    revolute pair about x (or a spherical pair) at the origin: w^2 = m g d / (J + m d^2) about each horizontal
    axis of rotation through the pivot (J = 0.1 about x, 0.2 about y; the vertical spin has no stiffness and
    the spherical pendulum's third freedom is neutral, not a mode)."""
    m, d, J = 2.0, 0.5, np.array([0.1, 0.2, 0.3])
    b = SpatialModelBuilder("spatial-pendulum")
    b.add_body("bob", mass=m, inertia=tuple(J), position=(0.0, 0.0, -d))
    if kind == "revolute":
        b.revolute("R", None, "bob", point=(0.0, 0.0, 0.0), axis=(1.0, 0.0, 0.0))
    else:
        b.spherical("S", "ground", "bob", point=(0.0, 0.0, 0.0))
    b.gravity(G)
    model = b.build()
    eq = equilibrium(model)
    w = np.sqrt(m * G * d / (J[:2] + m * d ** 2))
    if kind == "revolute":
        assert eq.stable
        np.testing.assert_allclose(2 * np.pi * modes(model, eq).frequencies_hz, w[:1], rtol=1e-8)
    else:
        assert eq.stability == "neutral"
        f = modes(model, eq).frequencies_hz
        np.testing.assert_allclose(np.sort(2 * np.pi * f)[1:], np.sort(w), rtol=1e-8)
        assert abs(f[0]) < 1e-6


def test_hanging_chain_converges_to_the_bessel_frequencies():
    """A chain of N uniform bars (1 m, 1 kg in all) hanging from a pivot: as N grows its frequencies tend to
    those of the continuous hanging chain, w_k = (j_{0,k} / 2) sqrt(g / L) (D. Bernoulli 1732; j_{0,k} the
    zeros of the Bessel function J_0), with an error O(1/N^2) of the discretisation: halving the bars' length
    divides it by about 4 (the two lowest modes)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from chains import bar_chain
    exact = jn_zeros(0, 2) / 2 * np.sqrt(G) / (2 * np.pi)
    err = {}
    for n in (20, 40):
        f = modes(bar_chain(n, np.pi / 2)).frequencies_hz[:2]
        err[n] = np.abs(f - exact) / exact
    assert np.all(err[40] < 1e-3)
    np.testing.assert_allclose(err[20] / err[40], 4.0, rtol=0.05)


def double_pendulum():
    """Two unit point masses a, b on massless rods of length 1 (distance joints) from the origin."""
    mb = ModelBuilder("double-pendulum", gravity=(0.0, -G))
    mb.add_point_mass("a", mass=1.0, position=(0.0, -1.0))
    mb.add_point_mass("b", mass=1.0, position=(0.0, -2.0))
    mb.distance("r1", "ground", "a", at_a=(0.0, 0.0), at_b=(0.0, -1.0), length=1.0)
    mb.distance("r2", "a", "b", at_a=(0.0, -1.0), at_b=(0.0, -2.0), length=1.0)
    return mb.build()


def _minimal_double_pendulum(th, thd, F=0.0, l=1.0):
    """theta'' of two unit point masses on rods of length l (absolute angles from the downward vertical), a
    horizontal force F on the upper mass: the classic closed form in minimal coordinates, M(theta) theta'' =
    rhs, with the generalized force of F: l cos theta1 F on theta1."""
    c, s = np.cos(th[0] - th[1]), np.sin(th[0] - th[1])
    Mm = l * l * np.array([[2.0, c], [c, 1.0]])
    rhs = np.array([-l * l * s * thd[1] ** 2 - 2 * G * l * np.sin(th[0]) + l * np.cos(th[0]) * F,
                    l * l * s * thd[0] ** 2 - G * l * np.sin(th[1])])
    return np.linalg.solve(Mm, rhs)


def _pendulum_points(th, thd, thdd=np.zeros(2)):
    """Positions, velocities, accelerations of the double pendulum's masses a, b (q = (a, b)) from its angles."""
    q = np.r_[np.sin(th[0]), -np.cos(th[0]), np.sin(th[0]) + np.sin(th[1]), -np.cos(th[0]) - np.cos(th[1])]
    J = np.array([[np.cos(th[0]), 0.0], [np.sin(th[0]), 0.0],
                  [np.cos(th[0]), np.cos(th[1])], [np.sin(th[0]), np.sin(th[1])]])
    w2 = thd ** 2
    centripetal = np.r_[-np.sin(th[0]) * w2[0], np.cos(th[0]) * w2[0],
                        -np.sin(th[0]) * w2[0] - np.sin(th[1]) * w2[1], np.cos(th[0]) * w2[0] + np.cos(th[1]) * w2[1]]
    return q, J, J @ thdd + centripetal


def test_linearisation_about_a_moving_state_matches_minimal_coordinates():
    """Moving double pendulum (theta = (0.4, -0.3), theta' = (1.2, -0.7)). The tangent chart of the module doc
    is z = T^T (q - q*), z' = T^T v exactly; through the minimal coordinates theta (closed-form equations of
    motion) the same chart gives z'' = T^T (J theta'' + J' theta'), so the central-difference Jacobian of
    (z, z') -> z'' computed here through theta must equal the linearisation's state matrix, and likewise the
    input (horizontal force F on mass a: generalized force cos theta1 F on theta1) and the output a.x."""
    from multibody.analysis.linearize import linearize
    th0, thd0 = np.array([0.4, -0.3]), np.array([1.2, -0.7])
    q0, J0, _ = _pendulum_points(th0, thd0)
    lin = linearize(double_pendulum(), (q0, J0 @ thd0, 0.0), inputs=("a.x",), outputs=("q:a.x",))
    T = lin.T
    np.testing.assert_allclose(lin.q, q0, atol=1e-14)

    def through_theta(y, F=0.0):
        th = th0.copy()
        for _ in range(50):                            # z = T^T (q(theta) - q*) by Newton on theta
            q, J, _ = _pendulum_points(th, thd0)
            th -= np.linalg.solve(T.T @ J, T.T @ (q - q0) - y[:2])
        q, J, _ = _pendulum_points(th, thd0)
        thd = np.linalg.solve(T.T @ J, y[2:])
        a = _pendulum_points(th, thd, _minimal_double_pendulum(th, thd, F))[2]
        return np.r_[T.T @ a, q[0]]

    y0, h = np.r_[np.zeros(2), T.T @ J0 @ thd0], 1e-6
    Jy = np.column_stack([(through_theta(y0 + h * e) - through_theta(y0 - h * e)) / (2 * h) for e in np.eye(4)])
    A, B, C, D = lin.state_space()
    np.testing.assert_allclose(A[2:], Jy[:2], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(A[:2], np.c_[np.zeros((2, 2)), np.eye(2)], atol=1e-12)
    np.testing.assert_allclose(C, Jy[2:], rtol=1e-6, atol=1e-8)
    dF = (through_theta(y0, h) - through_theta(y0, -h)) / (2 * h)
    np.testing.assert_allclose(B[2:, 0], dF[:2], rtol=1e-6, atol=1e-8)
    assert lin.input_labels == ("a.x",) and lin.output_labels == ("q:a.x",) and not np.any(D)


def test_driver_as_input_slider_crank_static_gain():
    """The slider-crank's crank driver as an input: about the held equilibrium at 60 degrees the torque u
    balances V'(theta) = 0.3 g cos theta (test_equilibrium), so the static gain from torque to crank angle is
    1 / V''(theta) = -1 / (0.3 g sin theta) (an unstable equilibrium, negative stiffness), and the linear
    system in scipy.signal and python-control agrees."""
    import scipy.signal
    control = pytest.importorskip("control")
    from multibody.models import MODELS
    from multibody.analysis.linearize import linearize
    model = MODELS["slider-crank"].factory()
    lin = linearize(model, equilibrium(model), inputs=("O-driver",), outputs=("q:crank.theta", "v:crank.theta"))
    A, B, C, D = lin.state_space()
    gain = -(C @ np.linalg.solve(A, B))[0, 0]
    np.testing.assert_allclose(gain, -1.0 / (0.3 * G * np.sin(np.pi / 3)), rtol=1e-6)
    ss = scipy.signal.StateSpace(A, B, C, D)
    assert ss.A.shape == (2, 2)
    sys_c = lin.to_control()
    assert list(sys_c.input_labels) == ["O-driver_angle"]
    assert list(sys_c.output_labels) == ["q:crank_theta", "v:crank_theta"]
    np.testing.assert_allclose(control.dcgain(sys_c)[0], gain, rtol=1e-9)


def test_cli_linearize_json_and_errors():
    """``multibody linearize``: the JSON state-space model has the labelled inputs and outputs, and its poles are
    +-sqrt(-V'' / m) for the slider-crank held by its crank actuator (V'' < 0: a real pair, unstable); unknown inputs
    and outputs exit 2 naming them."""
    import json
    from click.testing import CliRunner
    from multibody.cli import main
    r = CliRunner().invoke(main, ["linearize", "slider-crank", "--input", "O-driver", "--output", "q:crank.theta",
                                  "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["inputs"] == ["O-driver.angle"] and d["outputs"] == ["q:crank.theta"]
    A, B, C = (np.array(d[k]) for k in "ABC")
    assert A.shape == (2, 2) and B.shape == (2, 1) and C.shape == (1, 2)
    assert A[1, 0] > 0                                   # z'' = A10 z: negative stiffness, unstable
    np.testing.assert_allclose(sorted(d["poles_real"]), [-np.sqrt(A[1, 0]), np.sqrt(A[1, 0])], rtol=1e-12)
    np.testing.assert_allclose(d["poles_imag"], 0.0, atol=1e-12)
    for args, culprit in ((["--input", "nope"], "nope"), (["--output", "q:zz"], "q:zz")):
        r = CliRunner().invoke(main, ["linearize", "slider-crank", *args])
        assert r.exit_code == 2 and culprit in r.output and "Traceback" not in r.output


def test_mode_animation_moves_along_the_mode_on_the_constraints(tmp_path):
    """``modes --animate``: the pendulum's mode u = (1, 0) at the hanging equilibrium, drawn with amplitude
    a = 0.3 L (plot.modes.MODE_AMPLITUDE): at a quarter period q is (0, -1) + a u projected onto the circle,
    (0.3, -1) / sqrt(1.09); the double four-bar's GIF has one frame per sample; a mode that does not exist
    exits 2."""
    from click.testing import CliRunner
    from PIL import Image
    from multibody.cli import main
    from multibody.models import MODELS
    from multibody.plot.modes import mode_result
    model = MODELS["pendulum"].factory()
    eq = equilibrium(model)
    r = mode_result(model, eq, modes(model, eq), 0, cycles=1.0, samples=81)
    np.testing.assert_allclose(r.series["q"].data[20], np.array([0.3, -1.0]) / np.sqrt(1.09), atol=1e-10)
    np.testing.assert_allclose(np.hypot(*r.series["q"].data.T), 1.0, atol=1e-12)
    out = tmp_path / "mode.gif"
    res = CliRunner().invoke(main, ["modes", "double-four-bar", "--animate", str(out)])
    assert res.exit_code == 0, res.output
    assert Image.open(out).n_frames >= 40
    res = CliRunner().invoke(main, ["modes", "double-four-bar", "--animate", str(tmp_path / "m.gif"), "--mode", "2"])
    assert res.exit_code == 2 and "--mode 2" in res.output and not (tmp_path / "m.gif").exists()
