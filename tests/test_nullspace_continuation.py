"""``--basis continuation``: the discrete continuation of paper 000 eq. 22 (Omega of eqs 19-20, App. A
re-orthogonalisation) and the velocities in the step's frozen basis (eqs 9-13)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from multibody.assembly import Workspace
from multibody.errors import AssemblyError
from multibody.formulations.nullspace_continuation import ContinuationEquations, ContinuationNullSpace
from continued_motion import assert_first_order_change
from multibody.formulations.registry import make_formulation
from multibody.formulations.velocity_error import turn_velocity_change
from multibody.kinematics import solve_positions, solve_velocities
from multibody.linalg.rank import pivoted_qr, row_space_filter
from multibody.linalg.tangent import continue_basis, omega_continued, omega_matrix
from multibody.models import MODELS
from multibody.models.modified_four_bars import crank_angle_exact_cells
from multibody.simulation import RunOptions, simulate

G, ELL = 9.81, 1.0
TIGHT = RunOptions(rtol=1e-9, atol=1e-11)


def test_registry_names_the_three_bases():
    model = MODELS["pendulum"].factory()
    assert isinstance(make_formulation("nullspace", model), ContinuationNullSpace)
    for basis in ("flow", "recompute"):
        f = make_formulation("nullspace", model, basis=basis)
        assert f.basis == basis and not isinstance(f, ContinuationNullSpace)


@given(seed=st.integers(0, 2 ** 31))
@settings(max_examples=20, deadline=None)
def test_omega_continued_is_eqs_19_20(seed):
    """With T = Q2 of the same factorisation, omega_continued (smooth inverse of R1) equals eqs 19-20 with the
    exact back-substitution wherever R1 is well conditioned, and is skew (eq. 15)."""
    rng = np.random.default_rng(seed)
    m, n = rng.integers(1, 5), rng.integers(5, 9)
    A, Adot = rng.standard_normal((m, n)), rng.standard_normal((m, n))
    pqr = pivoted_qr(A)
    r = pqr.rank
    assume(pqr.R_diag[r - 1] > 1e-2 * pqr.R_diag[0])
    Om = omega_continued((Adot @ pqr.Q)[pqr.perm[:r]], pqr.R[:r, :r])
    ref = omega_matrix(pqr, Adot)
    np.testing.assert_allclose(Om, -Om.T, atol=0)
    np.testing.assert_allclose(Om, ref, atol=1e-9 * np.abs(ref).max())


@given(phi=st.floats(-np.pi, np.pi), u=st.floats(0.1, 5), h=st.floats(1e-3, 0.2))
@settings(max_examples=30, deadline=None)
def test_pendulum_continue_basis_eqs_22_48(phi, u, h):
    """Redundant pendulum (eqs 29-31): Omega = s1 theta' [[0, -1], [1, 0]] (eqs 48-50) is constant at constant
    speed, so eq. 22 carries Q1_s exactly onto the tangent at theta + theta' h with the same sign (no s2)."""
    q = ELL * np.array([np.cos(phi), np.sin(phi)])
    v = u * np.array([-np.sin(phi), np.cos(phi)])
    A = np.array([[2 * q[0], 2 * q[1]]] * 2)
    pqr = pivoted_qr(A)
    Om = omega_continued((np.array([[2 * v[0], 2 * v[1]]] * 2) @ pqr.Q)[pqr.perm[:1]], pqr.R[:1, :1])
    assert abs(Om[1, 0]) == pytest.approx(u / ELL, rel=1e-12)
    phi1 = phi + u * h / ELL
    q1 = ELL * np.array([np.cos(phi1), np.sin(phi1)])
    new = pivoted_qr(np.array([[2 * q1[0], 2 * q1[1]]] * 2))
    T1 = continue_basis(pqr.Q[:, :1], pqr.Q[:, 1:], Om, h, new.Q[:, :1])[:, 0]
    t_old, t_new = np.array([-q[1], q[0]]) / ELL, np.array([-q1[1], q1[0]]) / ELL
    np.testing.assert_allclose(T1, np.sign(pqr.Q[:, 1] @ t_old) * t_new, atol=1e-12)


MODEL_NAMES = ["pendulum-redundant", "double-four-bar", "triple-four-bar-modified", "four-bar-2x2-modified",
               "slider-crank"]


@pytest.mark.parametrize("name", MODEL_NAMES)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2 ** 31), t=st.floats(0, 0.1), d=st.floats(-0.02, 0.02))
def test_chart_identities(name, seed, t, d):
    """In the frozen basis of a step, at a consistent state a distance d along the motion from the chart's
    origin: A X = 0 (X = T - Q1 G^+ A T), A x' + Phi_t = 0, A x'' = gamma, X^T (M x'' - f) = 0 (eqs 3, 9-11);
    at the origin X = T with T^T T = I, A T = 0 (eq. 8)."""
    model = MODELS[name].factory()
    ws, rng = Workspace(model), np.random.default_rng(seed)
    try:
        q = solve_positions(model, model.q0 + 0.05 * rng.standard_normal(model.n), t, hold=model.hold, ws=ws)
    except AssemblyError:
        assume(False)
    v = solve_velocities(model, q, rng.standard_normal(model.n), t, ws=ws)
    form = ContinuationNullSpace(model)
    y = form.initial_state(t, q, v)
    _, A, _, _ = ws.constraints(t, q, v)
    qr = pivoted_qr(A)
    assume(qr.R_diag[form.generic_rank - 1] > 1e-3 * qr.R_diag[0])
    T = form.unpack(y)[2]
    np.testing.assert_allclose(T.T @ T, np.eye(T.shape[1]), atol=1e-13)
    np.testing.assert_allclose(form.split(t, y)[1], v, atol=1e-9 * max(1.0, np.linalg.norm(v)))
    try:   # a nearby consistent state, same chart
        q2 = solve_positions(model, q + d * v / max(np.linalg.norm(v), 1e-12), t + d, ws=ws)
    except AssemblyError:
        assume(False)
    w = form.unpack(y)[1]
    xdot, X, A2, _ = form._kinematics(t + d, q2, w, form._chart)
    _, xdd, _, _, M, f = form._chart_dynamics(t + d, q2, w, form._chart)
    _, A2, Phi_t, gamma = ws.constraints(t + d, q2, xdot)
    scale = np.linalg.norm(A2) * max(np.linalg.norm(xdot), 1.0)
    assert np.linalg.norm(A2 @ X) <= 1e-9 * np.linalg.norm(A2)
    assert np.linalg.norm(A2 @ xdot + Phi_t) <= 1e-9 * scale
    assert np.linalg.norm(A2 @ xdd - gamma) <= 1e-7 * max(np.linalg.norm(gamma), scale)
    assert np.linalg.norm(X.T @ (M @ xdd - f)) <= 1e-9 * max(1.0, np.linalg.norm(f))


def test_pendulum_run_energy_sign_and_output_times():
    """Released from rest at x = l, z = 0: |x'|^2 = 2 g (-z) (energy) at every step and at output times sampled
    inside steps (read in the step's own basis, also by dop853's extra stages evaluated after the step), and
    qd^2 = |x'|^2 at the steps; the sign of T against [-z, x]/l never changes (eq. 50)."""
    model = MODELS["pendulum-redundant"].factory()
    for opts in (TIGHT, RunOptions(rtol=1e-9, atol=1e-11, output_step=0.0137),
                 RunOptions(integrator="dop853", rtol=1e-9, atol=1e-11, output_step=0.0137)):
        r = simulate(model, t_end=3.0, formulation="nullspace", options=opts)
        x, z = r.q[:, 0], r.q[:, 1]
        np.testing.assert_allclose(np.sum(r.v ** 2, axis=1), 2 * G * (-z), atol=1e-7)
        if not opts.output_step:   # at the steps the basis is orthonormal and tangent: |w| = |x'|
            np.testing.assert_allclose(r["qd_ind"][:, 0] ** 2, 2 * G * (-z), atol=1e-7)
        assert r.summary["basis"] == "continuation"
    T = r["T"]
    s = np.sign(T[:, 0] * (-z) + T[:, 1] * x)
    assert np.all(s == s[0])


@pytest.mark.parametrize("name, cells, rank_s", [("double-four-bar-modified", 2, 10),
                                                 ("triple-four-bar-modified", 3, 13)])
def test_modified_mechanisms_exact_motion_and_continuous_velocity(name, cells, rank_s):
    """2.5 s through two singular configurations (paper 000 Sects. 3.3-3.4): the exact 1-DOF motion, the
    cranks parallel, two singular events of rank 10 / 13 where theta = 0 (mod pi), and qd continuous."""
    model = MODELS[name].factory()
    r = simulate(model, t_end=2.5, formulation="nullspace", options=TIGHT)
    i = model.coordinate_index("bar1.theta")
    assert np.max(np.abs(r.q[:, i] - crank_angle_exact_cells(r.t, cells=cells))) < 1e-6
    for k in range(3, 2 * cells + 2, 2):
        assert np.max(np.abs(r.q[:, model.coordinate_index(f"bar{k}.theta")] - r.q[:, i])) < 1e-6
    assert len(r.events) == 2 and all(e["rank"] == rank_s for e in r.events)
    theta = crank_angle_exact_cells(np.array([e["t"] for e in r.events]), cells=cells)
    np.testing.assert_allclose(np.sin(theta), 0.0, atol=1e-7)
    assert r.summary["qd_ind_jump_max_rel"] < 0.1
    # N3 as in the paper: the motion of span(N) nearest to the continued basis T(t*) (eq. 22) is the continuing
    # one, not a new one (those are orthogonal to it, pi/2 away)
    assert all(e["basis_branch_angle"] < 0.1 for e in r.events)


def test_recompute_is_the_plain_method_and_jumps_at_the_singular_configuration():
    """The baseline of paper 000 (Figs 10, 15): every step's T is Q[:, r:] of a fresh pivoted QR (eqs 8, 25),
    also next to singular configurations (no guard). At each of the 10 singular configurations of the double
    four-bar the fresh QR's first admissible motion ("1st mov", Fig. 10) is an arbitrary unit vector of the
    3-dimensional null space (rank 12, Sect. 3.2): all ten within |cos| > 0.9 of the branch tangent would have
    probability ~0.1^10. The continued basis of the steps before and after is within 0.95 of it, same sign
    (steps of ~0.1 rad at rtol 1e-6)."""
    model = MODELS["double-four-bar"].factory()
    ws = Workspace(model)
    plain = simulate(model, t_end=10.0, formulation="nullspace", formulation_options={"basis": "recompute"})
    T = plain["T"].reshape(len(plain.t), model.n, -1)
    r = plain.summary["generic_rank"]
    for k in range(len(plain.t)):
        A = ws.constraints(plain.t[k], plain.q[k], np.zeros(model.n))[1]
        np.testing.assert_array_equal(T[k], pivoted_qr(A).Q[:, r:])
    assert len(plain.events) == 10
    first = [abs(np.asarray(e["admissible"])[:, 0] @ np.asarray(e["continuing"])[:, 0]) for e in plain.events]
    assert min(first) < 0.9
    cont = simulate(model, t_end=10.0, formulation="nullspace")
    Tc = cont["T"].reshape(len(cont.t), model.n, -1)
    for e in cont.events:
        k = np.searchsorted(cont.t, e["t"])
        C = np.asarray(e["continuing"])[:, 0]
        assert C @ Tc[k - 1][:, 0] > 0.95 and C @ Tc[k][:, 0] > 0.95     # same sign on both sides


def test_fig_13_trajectories_of_bars_1_and_5(tmp_path):
    """Paper 000 Sect. 3.5, Fig. 13: the 2x2 four-bar's two DOF are the rotations of bar1 and bar5; the figure
    of their trajectories is drawn by a nullspace run with --plot."""
    from multibody.plot.nullspace import body_trajectories, independent_bodies
    model = MODELS["four-bar-2x2-modified"].factory()
    r = simulate(model, t_end=0.3, formulation="nullspace")
    assert independent_bodies(r, model) == ["bar1", "bar5"]
    assert body_trajectories(r, ["bar1", "bar5"], tmp_path / "f13.png").stat().st_size > 10_000


def test_cli_basis_flow_and_continuation(tmp_path):
    """`multibody run --formulation nullspace --basis flow|continuation` (paper 000 Sect. 2.4)."""
    import json
    from click.testing import CliRunner
    from multibody.cli import main
    for basis in ("flow", "continuation"):
        out = CliRunner().invoke(main, ["run", "double-four-bar", "--formulation", "nullspace", "--basis", basis,
                                        "--t-end", "0.3", "--out", str(tmp_path / f"{basis}.h5"), "--json"])
        assert out.exit_code == 0, out.output
        assert json.loads(out.stdout)["basis"] == basis


def test_dop853_dense_output_finds_every_crossing():
    """dop853's dense output evaluates extra stages after the step (in that step's basis): the crossing monitor
    finds the double four-bar's 10 singular configurations in 10 s (sin theta = 0 of theta'' = -k cos theta)."""
    model = MODELS["double-four-bar"].factory()
    r = simulate(model, t_end=10.0, formulation="nullspace", options=RunOptions(integrator="dop853", rtol=1e-8,
                                                                                   atol=1e-10))
    theta = crank_angle_exact_cells(np.array([c["t"] for c in r.summary["singular_crossings"]]), cells=2)
    assert len(theta) == 10
    np.testing.assert_allclose(np.sin(theta), 0.0, atol=1e-5)


def _continued(ns, y):
    """[q, v] the run continues from after the step that ends at y in the current chart
    (ContinuationEquations.after_step: x projected onto Phi = 0, eqs 12-13; the chart continued by eq. 22 and App. A
    at the projected x; w = T_new^T x', so v = T_new T_new^T x'); the formulation's charts are restored and the
    singular tracker is not fed (these states share one time)."""
    charts = list(ns._charts)
    ns._accept_basis = lambda *args: None
    y_new = ContinuationEquations.after_step(ns, 0.0, y.copy())
    out = np.concatenate(ns.split(0.0, y_new))
    ns._charts = charts
    return out


@pytest.mark.parametrize("fast", [False, True])
@pytest.mark.parametrize("name", ["double-four-bar", "double-four-bar-modified", "four-bar-2x2-modified"])
def test_chart_measure_is_the_first_order_change_of_the_continued_motion(name, fast):
    """The chart's measure (NullSpaceEquations._physical_error with basis continuation; derivation: the error
    [dx, dw] moves the continued motion by (P_t dx, X dw - A^+ A'(v) P_t dx), velocity_error module docstring) is the
    derivative of the motion the run continues from (_continued) for dx tangent (its normal part is weighted, not
    measured): the remainder is of second order (a tenth of the error, a hundredth of the remainder), and of first
    order (a tenth) without the velocity change the tangential dx forces (velocity_error.turn_velocity_change). The
    modified four-bar has a redundant row, the 2x2 four-bar two degrees of freedom; compiled and reference alike."""
    model = MODELS[name].factory()
    ns = make_formulation("nullspace", model, fast=fast)
    y = ns.initial_state(0.0, model.q0, model.v0)
    n, f = model.n, ns.f
    y[n:] = 3.0 / np.sqrt(f)                   # a speed of the motion (~ the crank's): the forced change ~ |v| |dx|
    x, w, T = ns.unpack(y)
    rng = np.random.default_rng(5)
    A = ns.ws.velocity_constraints(0.0, x, np.zeros(n))[1]
    err = np.concatenate([row_space_filter(A, rng.standard_normal(n)), rng.standard_normal(f)])
    measured = ns._physical_error(0.0, y, err)
    turn = turn_velocity_change(ns.ws, 0.0, x, T @ w, err[:n], A, ns.generic_rank)
    assert np.abs(turn).max() > 1e-2 * np.abs(err).max()             # the term is not negligible here
    assert_first_order_change(lambda z: _continued(ns, z), y, err, measured, turn)
