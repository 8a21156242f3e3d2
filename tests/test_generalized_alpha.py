"""The implicit generalized-alpha integrator (Arnold & Bruels 2007) and its coloured tangent matrices."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import ellipk

from multibody import ModelBuilder, RunOptions, simulate
from multibody.assembly import Workspace
from multibody.errors import MultibodyError, SimulationError
from multibody.integrate.generalized_alpha import AlphaParameters, GeneralizedAlpha
from multibody.integrate.tangent_matrix import TangentMatrices
from multibody.kinematics import consistent_state
from multibody.model.system import matrix_system
from multibody.models import MODELS
from multibody.formulations.registry import make_formulation

G = 9.81


def test_parameters_of_the_optimal_family():
    """Chung-Hulbert / Arnold-Bruels eq. 11: rho = 1 is the trapezoidal rule (alpha_m = alpha_f = 1/2,
    gamma = 1/2, beta = 1/4); rho = 0 gives alpha_m = -1, alpha_f = 0, gamma = 3/2, beta = 1; gamma =
    1/2 + alpha_f - alpha_m (second order) for every rho."""
    one, zero = AlphaParameters(1.0), AlphaParameters(0.0)
    assert (one.alpha_m, one.alpha_f, one.gamma, one.beta) == pytest.approx((0.5, 0.5, 0.5, 0.25))
    assert (zero.alpha_m, zero.alpha_f, zero.gamma, zero.beta) == pytest.approx((-1.0, 0.0, 1.5, 1.0))
    for rho in np.linspace(0, 1, 7):
        p = AlphaParameters(rho)
        assert p.gamma == pytest.approx(0.5 + p.alpha_f - p.alpha_m)
    with pytest.raises(MultibodyError, match="rho_inf"):
        AlphaParameters(1.5)


def oscillator(omega):
    """x'' = -omega^2 x, unconstrained, x(0) = 1, v(0) = 0."""
    return matrix_system("oscillator", ["x"], mass=np.eye(1), forces=lambda q, v, t: -omega ** 2 * q,
                         q0=np.array([1.0]))


@pytest.mark.parametrize("rho", [0.0, 0.5, 0.9, 1.0])
def test_spectral_radius_at_infinite_step_is_rho_inf(rho):
    """One step is a linear map of (q, v, a, abar) for x'' = -omega^2 x; for omega h -> infinity its
    spectral radius is rho_inf (Chung & Hulbert 1993, the definition of the family). Built column by
    column from four steps at omega h = 1e4."""
    model = oscillator(1e4)
    form = make_formulation("lagrange", model)
    ga = GeneralizedAlpha(form, 0.0, np.r_[model.q0, model.v0], 10.0, step=1.0, rho_inf=rho)
    columns = []
    for e in np.eye(4):
        ga.t, ga.y, ga.a, ga.abar = 0.0, e[:2].copy(), e[2:3].copy(), e[3:].copy()
        ga.step()
        columns.append(np.r_[ga.y, ga.a, ga.abar])
    radius = np.max(np.abs(np.linalg.eigvals(np.column_stack(columns))))
    # the roots at rho_inf are multiple (a Jordan block): a perturbation (omega h)^-2 = 1e-8 moves them by
    # up to its cube root, 2e-3
    assert radius == pytest.approx(rho, abs=3e-3)


def test_second_order_convergence_on_the_pendulum():
    """Released horizontally from rest the pendulum mass passes the lowest point (0, -l) at a quarter
    period T/4 = sqrt(l/g) K(sin^2(pi/4)) (complete elliptic integral), at full speed, so the x error
    measures the phase error: it falls 4x per halved step (order 2, Arnold & Bruels 2007 Thm. 1)."""
    quarter = np.sqrt(1.0 / G) * ellipk(np.sin(np.pi / 4) ** 2)
    model = MODELS["pendulum"].factory()
    errors = []
    for n_steps in (200, 400, 800):
        r = simulate(model, t_end=quarter,
                     options=RunOptions(integrator="generalized-alpha", step=quarter / n_steps))
        errors.append(abs(r.q[-1, 0]))
        assert r.summary["constraint_violation_max"] < 1e-9      # Phi = 0 at every step (Newton)
        assert r.summary["steps"] == n_steps
    orders = np.log2(np.array(errors[:-1]) / errors[1:])
    assert np.all((orders > 1.9) & (orders < 2.1)), orders


def chain(n, tip_mass=1.0, tilt=np.pi / 3):
    """n bars (1 m, 1 kg in all) with a tip mass (none if 0), released from rest tilt below the horizontal."""
    mb = ModelBuilder(f"chain-{n}", gravity=(0.0, -G))
    L, e = 1.0 / n, np.array([np.cos(tilt), -np.sin(tilt)])
    for k in range(n):
        mb.add_bar(f"b{k}", length=L, mass=1.0 / n, position=tuple((k + 0.5) * L * e), angle=-tilt)
    mb.revolute("O", "ground", "b0", at=(0.0, 0.0))
    for k in range(1, n):
        mb.revolute(f"J{k}", f"b{k - 1}", f"b{k}", at=tuple(k * L * e))
    if tip_mass > 0:
        mb.add_point_mass("tip", mass=tip_mass, position=tuple(e))
        mb.revolute("T", f"b{n - 1}", "tip", at=tuple(e))
    return mb.build()


def stepper(model, h=1e-3, t_end=0.2):
    form = make_formulation("lagrange", model)
    q, v = consistent_state(model, 0.0, ws=form.ws)
    return GeneralizedAlpha(form, 0.0, np.r_[q, v], t_end, step=h)


def test_sparse_and_dense_iterations_agree():
    """A 50-bar chain (n = 152) takes the sparse path (SuperLU); the same steps with the dense LU
    reach the same state to the Newton tolerance."""
    model = chain(50)
    results = []
    for sparse in (True, False):
        ga = stepper(model, t_end=0.05)
        assert ga.sparse
        ga.sparse, ga.kernel = sparse, None       # the reference paths (the compiled one: test_generalized_alpha_chains)
        while ga.t < ga.t_bound:
            ga.step()
        results.append(ga.y)
    np.testing.assert_allclose(results[0], results[1], atol=1e-8)


def test_chain_matches_the_explicit_reference():
    """10-bar chain with a tip mass, 0.3 s: generalized-alpha (h = 1e-3 and 5e-4) against dopri5 at
    rtol 1e-10; second order: the error falls ~4x when h is halved."""
    model = chain(10)
    ref = simulate(model, t_end=0.3, options=RunOptions(rtol=1e-10, atol=1e-12)).q[-1]
    errs = [np.abs(simulate(model, t_end=0.3, options=RunOptions(integrator="generalized-alpha", step=h))
                   .q[-1] - ref).max() for h in (1e-3, 5e-4)]
    assert 3.0 < errs[0] / errs[1] < 5.0, errs


def test_coloured_stiffness_equals_column_by_column_differences():
    """K_t = d(A^T lambda - f)/dq from 9 column groups equals plain forward differences column by column
    (a planar chain couples the 3 coordinates of 3 consecutive bodies: 9 is the least number of groups);
    no two columns of a group share a row of the pattern."""
    model = chain(6)
    ws = Workspace(model)
    tm = TangentMatrices(ws)
    rng = np.random.default_rng(1)
    q, v, a, lam = model.q0 + 0.1 * rng.standard_normal(model.n), rng.standard_normal(model.n), \
        rng.standard_normal(model.n), rng.standard_normal(ws.m)
    K = tm.stiffness(0.0, q, v, a, lam).toarray()
    r = lambda x: tm.constraint_force(0.0, x, lam) - ws.forces(0.0, x, v)  # noqa: E731
    eps = 1e-7
    K_ref = np.column_stack([(r(q + eps * e) - r(q)) / eps for e in np.eye(model.n)])
    np.testing.assert_allclose(K, K_ref, atol=1e-5)
    assert tm.K.n_groups == 9
    P = sp.csr_matrix((np.ones(len(tm.K.rows)), (tm.K.rows, tm.K.cols)), shape=K.shape).toarray() > 0
    assert not np.any((np.abs(K_ref) > 1e-6) & ~P)           # the structural pattern covers K
    for row in P:
        assert len(set(tm.K.colour[row])) == row.sum()


def test_constraint_force_is_A_transpose_lambda():
    """The group-wise A(q)^T lambda equals the assembled Jacobian's transpose times lambda."""
    model = MODELS["double-four-bar"].factory()
    ws = Workspace(model)
    lam = np.random.default_rng(2).standard_normal(ws.m)
    A = ws.constraints(0.0, model.q0, model.v0)[1]
    np.testing.assert_allclose(TangentMatrices(ws).constraint_force(0.0, model.q0, lam), A.T @ lam, atol=1e-12)


def test_bad_requests_are_refused_clearly():
    model = MODELS["pendulum"].factory()
    with pytest.raises(MultibodyError, match="formulation 'lagrange'"):
        simulate(model, t_end=1.0, formulation="nullspace",
                 options=RunOptions(integrator="generalized-alpha", step=1e-2))
    with pytest.raises(MultibodyError, match="rho_inf"):
        simulate(model, t_end=1.0, options=RunOptions(integrator="generalized-alpha", step=1e-2, rho_inf=-0.1))
    with pytest.raises(SimulationError, match="nonholonomic"):
        simulate(MODELS["knife-edge-sled"].factory(), t_end=0.1,
                 options=RunOptions(integrator="generalized-alpha", step=1e-2))
    locking = MODELS["three-r-pendulum-locking"]
    with pytest.raises(MultibodyError, match="dense output"):
        simulate(locking.factory(), t_end=0.1, events=locking.events,
                 options=RunOptions(integrator="generalized-alpha", step=1e-3))


def test_spring_damper_stiffness_and_damping_matrices():
    """A bar hinged to the ground and held by a damped spring: C_t = -df/dv is not zero; the run is
    second order against dopri5 at rtol 1e-10 (error ratio ~4 when h is halved)."""
    mb = ModelBuilder("sprung-bar", gravity=(0.0, -G))
    mb.add_bar("bar", length=1.0, mass=2.0, position=(0.5, 0.0), angle=0.0)
    mb.revolute("O", "ground", "bar", at=(0.0, 0.0))
    mb.spring_damper("S", "ground", "bar", stiffness=200.0, damping=3.0, free_length=0.5,
                     at_a=(1.0, 0.8), at_b=(1.0, 0.0))
    model = mb.build()
    tm = TangentMatrices(Workspace(model))
    C = tm.damping(0.0, model.q0, np.array([0.0, 0.0, 1.0])).toarray()
    assert np.abs(C).max() > 0
    ref = simulate(model, t_end=0.5, options=RunOptions(rtol=1e-10, atol=1e-12)).q[-1]
    errs = [np.abs(simulate(model, t_end=0.5, options=RunOptions(integrator="generalized-alpha", step=h))
                   .q[-1] - ref).max() for h in (2e-3, 1e-3)]
    assert 3.0 < errs[0] / errs[1] < 5.0, errs


def test_adaptive_generalized_alpha_converges_with_the_tolerance():
    """Without --step the generalized-alpha step is controlled by the local error estimate h^2 (beta - 1/6)
    (a_n+1 - a_n) (Zienkiewicz & Xie 1991). The method is second order, the controller keeps the local error
    (order 3) at the tolerance, so the global error falls like tol^(2/3): a factor ~21 per factor 100 of rtol.
    Measured on the pendulum released horizontally (paper 000 eq. 29) against dop853 at rtol 1e-12: the error
    at t = 2 s falls by 10-40 per factor 100 of rtol, and every position stays on the circle (index 3)."""
    from multibody import RunOptions, simulate
    from multibody.models import MODELS
    model = MODELS["pendulum"].factory()
    ref = simulate(model, t_end=2.0, options=RunOptions(integrator="dop853", rtol=1e-12, atol=1e-12))
    err = []
    for rtol in (1e-4, 1e-6):
        r = simulate(model, t_end=2.0, options=RunOptions(integrator="generalized-alpha", rtol=rtol, atol=rtol))
        err.append(np.abs(r.series["q"].data[-1] - ref.series["q"].data[-1]).max())
        np.testing.assert_allclose(np.hypot(*r.series["q"].data.T), 1.0, atol=1e-10)
    assert 10 < err[0] / err[1] < 40, err


def test_compiled_constraints_equal_the_workspace():
    """The compiled Phi and A (integrate.compiled_constraints, multibody.fast kernels) evaluate the same
    formulas as the Workspace (paper 000 eq. 6): equal to round-off at a state off the constraint manifold,
    and the generalized-alpha Newton takes the same iterations with either."""
    from multibody.integrate.compiled_constraints import compiled_constraints
    model = MODELS["double-four-bar"].factory()
    form = make_formulation("lagrange", model)
    compiled = compiled_constraints(form)
    if compiled is None:
        pytest.skip("no compiled path (numba missing)")
    rng = np.random.default_rng(3)
    q, v = rng.normal(size=model.n), rng.normal(size=model.n)
    Phi, A, _, _ = form.ws.constraints(0.3, q, v)
    Phi_c, A_c = compiled(0.3, q, v)
    assert np.allclose(Phi_c, Phi, rtol=0, atol=1e-13) and np.allclose(A_c, A, rtol=0, atol=1e-13)
    q0, v0 = consistent_state(model, 0.0, ws=form.ws)
    runs = []
    for use in (True, False):
        ga = GeneralizedAlpha(form, 0.0, np.concatenate([q0, v0]), 0.05, step=1e-2)
        ga.kernel = None                            # the Python Newton loop, with or without compiled Phi and A
        if not use:
            ga.compiled = ga.tangent.constraints = None
        while ga.t < 0.05 - 1e-12:
            ga.step()
        runs.append((ga.iterations, ga.y))
    assert runs[0][0] == runs[1][0] and np.allclose(runs[0][1], runs[1][1], rtol=0, atol=1e-10)


def test_newton_failures_shrink_the_step_and_never_pass_as_success():
    """With at most 2 Newton iterations per attempt the big steps of the controlled generalized-alpha fail
    to converge: they are retried smaller (the Newton ceiling h_cap is set), and the end state is still
    on the circle (index 3: |q| = 1 to the Newton tolerance) and as close to dop853 at rtol 1e-12 as the
    run with the default Newton (within 10x). With no iteration allowed, no step converges: the run stops
    with an IntegrationError naming the time, instead of returning an unconverged state."""
    from multibody.integrate.explicit import IntegrationError
    from multibody.integrate.generalized_alpha import NewtonControl
    model = MODELS["pendulum"].factory()
    ref = simulate(model, t_end=1.0, options=RunOptions(integrator="dop853", rtol=1e-12, atol=1e-12))
    form = make_formulation("lagrange", model)
    q0, v0 = consistent_state(model, 0.0, ws=form.ws)
    errs = []
    for newton in (NewtonControl(), NewtonControl(max_iterations=2)):
        ga = GeneralizedAlpha(form, 0.0, np.concatenate([q0, v0]), 1.0, step=None, rtol=1e-6, atol=1e-6,
                              newton=newton)
        while ga.t < 1.0:
            ga.step()
        q = ga.y[: model.n]
        assert abs(np.hypot(*q) - 1.0) < 1e-9
        errs.append(np.abs(q - ref.series["q"].data[-1]).max())
    assert np.isfinite(ga.h_cap) and ga.n_rejected > 0
    assert errs[1] < 10 * errs[0], errs
    ga = GeneralizedAlpha(form, 0.0, np.concatenate([q0, v0]), 1.0, step=1e-2,
                          newton=NewtonControl(max_iterations=0, max_halvings=3))
    with pytest.raises(IntegrationError, match="did not converge at t = 0"):
        ga.step()
    assert ga.t == 0.0
