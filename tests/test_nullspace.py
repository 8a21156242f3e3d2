"""Null-space formulation (paper 000): analytic pendulum (eqs 34-35, 48-50), identities, agreement with
the multipliers formulation and the exact 1-DOF solutions through singular configurations."""
import json

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import assume, HealthCheck, given, settings
from hypothesis import strategies as st

from multibody.assembly import Workspace
from multibody.cli import main
from multibody.errors import AssemblyError, MultibodyError
from multibody.formulations.nullspace import NullSpace
from multibody.kinematics import solve_positions, solve_velocities
from multibody.linalg.rank import RankTolerance, pivoted_qr
from multibody.models import MODELS
from multibody.models.modified_four_bars import crank_angle_exact_cells
from multibody.simulation import RunOptions, simulate
from multibody.linalg.tangent import continue_expm, omega_matrix

G, ELL = 9.81, 1.0
TIGHT = RunOptions(rtol=1e-9, atol=1e-11)


def _pendulum_state(phi, u):
    q = ELL * np.array([np.cos(phi), np.sin(phi)])
    return q, u * np.array([-np.sin(phi), np.cos(phi)])


@given(phi=st.floats(-np.pi, np.pi), u=st.floats(-5, 5))
@settings(max_examples=30, deadline=None)
def test_pendulum_projected_equation_eqs_34_35(phi, u):
    """T = s [-z, x]/l (eq. 34, s = +-1 the arbitrary sign), M q'' = -(x/l) M g s (eq. 35) and
    x'' = T q'' - [x, z] qd^2 / l^2 (eq. 34)."""
    form = NullSpace(MODELS["pendulum-redundant"].factory())
    q, v = _pendulum_state(phi, u)
    y = form.initial_state(0.0, q, v)
    T = form.unpack(y)[2][:, 0]
    s = T @ (np.array([-q[1], q[0]]) / ELL)
    assert abs(abs(s) - 1) < 1e-14
    acc = form.accelerations(0.0, q, v)
    qd = T @ v
    assert acc.info["qdd_ind"][0] == pytest.approx(-s * q[0] / ELL * G, abs=1e-12)
    np.testing.assert_allclose(acc.vdot, T * acc.info["qdd_ind"][0] - q * qd ** 2 / ELL ** 2, atol=1e-10)
    # scleronomic: w' = T^T x'' (the T'^T x' term vanishes), eq. 11a
    assert form.rhs(0.0, y)[2] == pytest.approx(acc.info["qdd_ind"][0], abs=1e-10)


@given(phi=st.floats(-np.pi, np.pi), u=st.floats(0.1, 5), h=st.floats(1e-3, 0.2))
@settings(max_examples=30, deadline=None)
def test_pendulum_omega_and_expm_continuation_eqs_48_50_22(phi, u, h):
    """Omega = Omega_21 [[0, -1], [1, 0]] with |Omega_21| = |theta'| (eqs 48, 50); Q_k expm(Omega h)
    (eq. 22) carries the tangent column exactly onto the tangent at theta + theta' h, same sign."""
    q, v = _pendulum_state(phi, u)
    A = np.array([[2 * q[0], 2 * q[1]]] * 2)
    pqr = pivoted_qr(A)
    Om = omega_matrix(pqr, np.array([[2 * v[0], 2 * v[1]]] * 2))
    assert Om[0, 0] == Om[1, 1] == 0.0 and Om[0, 1] == -Om[1, 0]
    assert abs(Om[1, 0]) == pytest.approx(u / ELL, rel=1e-12)
    Q1 = continue_expm(pqr.Q, Om, h)
    q_new, _ = _pendulum_state(phi + u * h / ELL, u)
    t_old, t_new = np.array([-q[1], q[0]]) / ELL, np.array([-q_new[1], q_new[0]]) / ELL
    np.testing.assert_allclose(Q1[:, 1], np.sign(pqr.Q[:, 1] @ t_old) * t_new, atol=1e-12)


def test_pendulum_run_continuation_energy_and_sign():
    """Released from rest at x = l, z = 0: qd^2 = 2 g (-z) (energy); with continuation the sign of T
    relative to [-z, x]/l never changes (eq. 50: no arbitrary s_2)."""
    model = MODELS["pendulum-redundant"].factory()
    r = simulate(model, t_end=3.0, formulation="nullspace", options=TIGHT)
    x, z = r.q[:, 0], r.q[:, 1]
    qd = r["qd_ind"][:, 0]
    np.testing.assert_allclose(qd ** 2, 2 * G * (-z), atol=1e-7)
    T = r["T"]
    s = np.sign(T[:, 0] * (-z) + T[:, 1] * x)
    assert np.all(s == s[0])
    assert r.summary["redundancy"] == 1 and r.summary["dof"] == 1


MODEL_NAMES = ["pendulum-redundant", "double-four-bar", "double-four-bar-modified", "triple-four-bar-modified",
               "four-bar-2x2-modified", "slider-crank", "four-bar"]


@pytest.mark.parametrize("name", MODEL_NAMES)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2 ** 31), t=st.floats(0, 0.1))
def test_formulation_identities(name, seed, t):
    """At random consistent states: A T = 0, T^T T = I, A x' + Phi_t = 0, A x'' = gamma and
    T^T (M x'' - f) = 0 (eqs 3, 5, 6, 11a), rheonomic models included."""
    model = MODELS[name].factory()
    ws, rng = Workspace(model), np.random.default_rng(seed)
    # a random guess 0.05 off the nominal one need not lie in the basin of any assembly (the 2x2 four-bar
    # has two near-coincident closures): such a draw tests nothing here, it is discarded, not failed
    try:
        q = solve_positions(model, model.q0 + 0.05 * rng.standard_normal(model.n), t, hold=model.hold, ws=ws)
    except AssemblyError:
        assume(False)
    v = solve_velocities(model, q, rng.standard_normal(model.n), t, ws=ws)
    form = NullSpace(model)
    y = form.initial_state(t, q, v)
    x, w, T = form.unpack(y)
    Phi, A, Phi_t, gamma = ws.constraints(t, q, v)
    # within the regularisation window of a singular configuration (the generic rank's last |R_ii|
    # below 1e-4 |R_11|) the smooth solve blends constraint and dynamics by design: outside this test
    qr = pivoted_qr(A)
    generic_rank = model.n - T.shape[1]
    assume(qr.R_diag[generic_rank - 1] > 1e-4 * qr.R_diag[0])
    # q is on Phi = 0 to the projection tolerance 1e-12 L; for m > n the null space of A exists only
    # on the manifold, so A T is of that order (times the curvature), not of round-off
    assert np.linalg.norm(A @ T) <= 1e-10 * np.linalg.norm(A)
    np.testing.assert_allclose(T.T @ T, np.eye(T.shape[1]), atol=1e-13)
    xdot = form.rhs(t, y)[: model.n]
    scale = np.linalg.norm(A) * max(np.linalg.norm(v), 1.0)
    assert np.linalg.norm(A @ xdot + Phi_t) <= 1e-7 * scale
    acc = form.accelerations(t, q, v)
    _, A, _, gamma = ws.constraints(t, q, v)
    assert np.linalg.norm(A @ acc.vdot - gamma) <= 1e-7 * max(np.linalg.norm(gamma), scale)
    res = T.T @ (model.mass(q) @ acc.vdot - ws.forces(t, q, v))
    assert np.linalg.norm(res) <= 1e-9 * max(1.0, np.linalg.norm(ws.forces(t, q, v)))


def _crank_checks(model, r, cells, tol):
    i = model.coordinate_index("bar1.theta")
    exact = crank_angle_exact_cells(r.t, cells=cells)
    assert np.max(np.abs(r.q[:, i] - exact)) < tol
    cranks = [model.coordinate_index(f"bar{k}.theta") for k in range(3, 2 * cells + 2, 2)]
    for c in cranks:   # the cranks stay parallel (no switch to another branch)
        assert np.max(np.abs(r.q[:, c] - r.q[:, i])) < tol
    return exact


@pytest.mark.parametrize("name, cells", [("double-four-bar-modified", 2), ("triple-four-bar-modified", 3)])
@pytest.mark.parametrize("basis", ["continuation", "recompute"])
def test_modified_mechanisms_through_singular_configurations(name, cells, basis):
    """2.5 s: the cranks pass horizontal (singular) twice; the motion is the exact 1-DOF one, the singular
    events are found where theta = 0 (mod pi) with the rank of paper 000 Sects. 3.3-3.4."""
    model = MODELS[name].factory()
    r = simulate(model, t_end=2.5, formulation="nullspace", options=TIGHT, formulation_options={"basis": basis})
    _crank_checks(model, r, cells, 1e-6)
    rank_s = {"double-four-bar-modified": 10, "triple-four-bar-modified": 13}[name]
    assert len(r.events) == 2 and all(e["rank"] == rank_s for e in r.events)
    theta = crank_angle_exact_cells(np.array([e["t"] for e in r.events]), cells=cells)
    np.testing.assert_allclose(np.sin(theta), 0.0, atol=1e-7)
    lag = simulate(model, t_end=2.5, options=TIGHT)
    np.testing.assert_allclose(r.q[-1], lag.q[-1], atol=1e-6)


@pytest.fixture(scope="module")
def double_four_bar_runs():
    model = MODELS["double-four-bar"].factory()
    runs = {b: simulate(model, t_end=10.0, formulation="nullspace", options=TIGHT,
                        formulation_options={"basis": b}) for b in ("continuation", "recompute")}
    runs["lagrange"] = simulate(model, t_end=10.0, options=TIGHT)
    return model, runs


def test_double_four_bar_10s_agreement(double_four_bar_runs):
    model, runs = double_four_bar_runs
    for key, r in runs.items():
        _crank_checks(model, r, 2, 1e-6)
        np.testing.assert_allclose(r.q[-1], runs["lagrange"].q[-1], atol=1e-6, err_msg=key)
        np.testing.assert_allclose(r.v[-1], runs["lagrange"].v[-1], atol=1e-5, err_msg=key)


def test_double_four_bar_singular_events(double_four_bar_runs):
    """10 passes through the horizontal configuration, rank 12 (Sect. 3.2); the continuing motion is the
    conventional one (Fig. 3 first motion), the two new ones are orthogonal to it."""
    _, runs = double_four_bar_runs

    def first_motion(theta):   # d/dtheta of the parallelogram motion: crank centre y = L/2 sin(theta)
        c = np.cos(theta)
        u = np.concatenate([[0.0, 0.5 * c, 1.0] if k % 2 else [0.0, c, 0.0] for k in range(1, 6)])
        return u / np.linalg.norm(u)

    for basis in ("continuation", "recompute"):
        ev = runs[basis].events
        assert len(ev) == 10 and all(e["rank"] == 12 for e in ev)
        theta = crank_angle_exact_cells(np.array([e["t"] for e in ev]), cells=2)
        np.testing.assert_allclose(np.sin(theta), 0.0, atol=1e-6)   # the run's global error (checked above)
        i = ev[0]["coordinate_names"].index("bar1.theta")
        # located configuration: horizontal to within the rank tolerance (|R_rr| ~ |theta| there)
        np.testing.assert_allclose([np.sin(e["q"][i]) for e in ev], 0.0, atol=10 * RankTolerance().rtol)
        for e in ev:
            u = first_motion(e["q"][i])
            C, N = np.array(e["continuing"]), np.array(e["new"])
            assert C.shape == (15, 1) and N.shape == (15, 2)
            assert abs(C[:, 0] @ u) == pytest.approx(1.0, abs=1e-7)
            np.testing.assert_allclose(N.T @ u, 0.0, atol=1e-7)


def _local_jump(r) -> float:
    """max_k |qd_k+1 - qd_k| / max(|qd_k+1|, |qd_k|) over the stored steps: 2 at a sign flip."""
    w = r["qd_ind"][:, 0]
    return float(np.max(np.abs(np.diff(w)) / np.maximum(np.maximum(np.abs(w[1:]), np.abs(w[:-1])), 1e-300)))


def test_continuation_has_no_velocity_jumps(double_four_bar_runs):
    """Continuation: consecutive qd differ by a small fraction of their scale; recompute flips signs (a jump of
    twice the value, paper 000 Sect. 3.1). The flips come from the sign choice of a fresh QR, i.e. round-off:
    which steps flip depends on the BLAS kernel (36 flips under SkylakeX, 42 under Haswell), so the jump is
    measured relative to the value at the flip, not to the run's largest |qd| (0.95 vs 1.86 of it)."""
    _, runs = double_four_bar_runs
    assert runs["continuation"].summary["qd_ind_jump_max_rel"] < 0.1 and _local_jump(runs["continuation"]) < 0.1
    assert _local_jump(runs["recompute"]) > 1.5


def test_2x2_agreement_and_continuity():
    model = MODELS["four-bar-2x2-modified"].factory()
    lag = simulate(model, t_end=2.0, options=TIGHT)
    for basis, check in (("continuation", lambda j: j < 0.1), ("recompute", lambda j: j > 0.5)):
        r = simulate(model, t_end=2.0, formulation="nullspace", options=TIGHT, formulation_options={"basis": basis})
        np.testing.assert_allclose(r.q[-1], lag.q[-1], atol=1e-5)
        assert check(r.summary["qd_ind_jump_max_rel"])
        assert r.summary["dof"] == 2 and r.events and all(e["rank"] == 21 for e in r.events)
        assert all(np.array(e["new"]).shape == (24, 1) for e in r.events)


def test_unknown_basis_is_a_user_error():
    with pytest.raises(MultibodyError, match="unknown basis"):
        NullSpace(MODELS["pendulum"].factory(), basis="qr")


def test_cli_run_nullspace_basis_and_figures(tmp_path):
    out = CliRunner().invoke(main, ["run", "double-four-bar", "--formulation", "nullspace", "--basis", "recompute",
                                    "--t-end", "0.9", "--out", str(tmp_path / "r.h5"), "--plot", str(tmp_path),
                                    "--json"])
    assert out.exit_code == 0, out.output
    s = json.loads(out.stdout)
    assert s["basis"] == "recompute" and len(s["singular_events"]) == 1
    names = [p.rsplit("/", 1)[-1] for p in s["figures"]]
    for f in ("double-four-bar-R-diagonal.png", "double-four-bar-T-bar1.png", "double-four-bar-qd-ind.png"):
        assert f in names and (tmp_path / f).stat().st_size > 10_000
    bad = CliRunner().invoke(main, ["run", "pendulum", "--formulation", "nullspace", "--basis", "x"])
    assert bad.exit_code == 2


@pytest.mark.parametrize("basis", ["continuation", "recompute"])
def test_double_four_bar_default_tolerances_pass_singular_configurations(basis):
    """rtol 1e-6: the three cranks stay parallel through the 10 singular passes (no branch switch)
    and the phase follows the exact solution to the global error such a tolerance gives."""
    model = MODELS["double-four-bar"].factory()
    r = simulate(model, t_end=10.0, formulation="nullspace", formulation_options={"basis": basis})
    i = model.coordinate_index("bar1.theta")
    for k in (3, 5):
        assert np.max(np.abs(r.q[:, model.coordinate_index(f"bar{k}.theta")] - r.q[:, i])) < 1e-10
    assert np.max(np.abs(r.q[:, i] - crank_angle_exact_cells(r.t, cells=2))) < 1e-2
    assert len(r.events) == 10


@pytest.mark.slow
@pytest.mark.parametrize("basis", ["continuation", "recompute"])
def test_double_four_bar_rtol_1e10(basis):
    """Ten singular passes at rtol 1e-10: the cranks stay parallel and the error is the tolerance's. dopri5
    controls the error per step, so its global error scales like tol^(4/5) (Hairer, Norsett & Wanner I,
    Sect. II.4, tolerance proportionality): a tolerance 100x tighter gives ~40x less error. Asserted: at least
    10x less than at rtol 1e-8, and below 1e-6 rad (not a fixed number that happens to pass on one machine)."""
    model = MODELS["double-four-bar"].factory()
    errors = []
    for rtol in (1e-8, 1e-10):
        r = simulate(model, t_end=10.0, formulation="nullspace", options=RunOptions(rtol=rtol, atol=rtol / 100),
                     formulation_options={"basis": basis})
        exact = _crank_checks(model, r, 2, 1e-4 if rtol > 1e-9 else 1e-6)
        errors.append(np.max(np.abs(r.q[:, model.coordinate_index("bar1.theta")] - exact)))
        assert len(r.events) == 10
    assert errors[1] < errors[0] / 10


def test_driven_slider_crank_stays_on_its_assembly():
    """A driven slider-crank has no free motion (dof 0): its positions come from the projection alone. With the
    normal position error removed from the error control the integrator took one step from 0.15 s to 1 s and
    the projection landed on the mirror assembly (slider 1.15 m off, exit 0); weighted like Lagrange's it follows
    the closed form x = r cos th + sqrt(l^2 - r^2 sin^2 th) (r = 0.2, l = 0.6, th = pi/3 + 2 pi t)."""
    from multibody import simulate
    r = simulate(MODELS["slider-crank"].factory(), t_end=1.0, formulation="nullspace")
    th = np.pi / 3 + 2 * np.pi * r.t
    exact = 0.2 * np.cos(th) + np.sqrt(0.36 - 0.04 * np.sin(th) ** 2)
    np.testing.assert_allclose(r.column("q", "slider.x"), exact, atol=1e-9)


@pytest.mark.parametrize("integrator", ["dopri5", "dop853"])
def test_flow_basis_keeps_the_branch_at_rtol_1e11(integrator):
    """--basis flow: the re-orthogonalised basis T(x) after a step keeps the physical velocity (w -> T_new^T T w);
    writing the old w in the new basis turned the velocity by ~5e-3 per step next to a singular configuration and
    the run stopped (projection move 3e8 error scales at rtol 1e-11). Now the double four-bar keeps its branch
    through all ten crossings: cranks parallel, tip on theta'' = -k cos theta within the tolerance's reach. Next to
    the crossings the singular window's lagrange steps carry the motion (formulations.crossing_window); there the
    pinned projection leaves the weakly constrained direction to the error control, so the spread is an integration
    error (measured 3.5e-10 rad at sin theta = 4.4e-4): bounded by 100 rtol, far inside the tip bound 1e-6."""
    from multibody.models.four_bars import crank_angle_exact
    r = simulate(MODELS["double-four-bar"].factory(), t_end=10.0, formulation="nullspace",
                 formulation_options={"basis": "flow"},
                 options=RunOptions(integrator=integrator, rtol=1e-11, atol=1e-11))
    th = np.stack([r.column("q", f"bar{k}.theta") for k in (1, 3, 5)], axis=1)
    assert np.abs(th - th[:, :1]).max() < 100 * 1e-11
    exact = crank_angle_exact(r.t)
    assert np.hypot(np.cos(th[:, 0]) - np.cos(exact), np.sin(th[:, 0]) - np.sin(exact)).max() < 1e-6
    assert len(r.summary["singular_crossings"]) == 10
