"""Sparse path for large models (issue 7 item 3): same physics as the dense path, clear error otherwise.

Chains of N uniform bars (redundant coordinates x, y, theta; 2 revolute rows per joint: A has full row
rank 2N, so the accelerations and multipliers are unique and both paths solve the same equations).
"""
import warnings

import numpy as np
import pytest

from multibody import RunOptions, simulate
from multibody.errors import MultibodyError, SimulationError
from multibody.kinematics import consistent_state, solve_positions
from multibody.model.builder import ModelBuilder
from multibody.formulations.registry import make_formulation
from multibody.assembly import SPARSE_MIN_COORDINATES, use_sparse

G = 9.81


def chain(n: int, redundant: bool = False):
    """A 1 m, 1 kg chain of n bars tilted 30 degrees below the horizontal; ``redundant`` repeats the
    first joint (two identical revolute joints: two dependent rows)."""
    mb = ModelBuilder(f"chain-{n}", gravity=(0.0, -G))
    L, e = 1.0 / n, np.array([np.cos(np.pi / 6), -np.sin(np.pi / 6)])
    for k in range(n):
        mb.add_bar(f"b{k}", length=L, mass=1.0 / n, position=tuple((k + 0.5) * L * e), angle=-np.pi / 6)
    mb.revolute("O", "ground", "b0", at=(0.0, 0.0))
    for k in range(1, n):
        mb.revolute(f"J{k}", f"b{k - 1}", f"b{k}", at=tuple(k * L * e))
    if redundant:
        mb.revolute("J1bis", "b0", "b1", at=tuple(L * e))
    return mb.build()


def _states(model, form, count=3):
    q, v = consistent_state(model, ws=form.ws)
    rng = np.random.default_rng(7)
    yield np.r_[q, v]
    for _ in range(count):     # off the manifold, arbitrary velocities
        yield np.r_[q + 1e-3 * rng.standard_normal(len(q)), rng.standard_normal(len(q))]


@pytest.mark.parametrize("n", [20, 30])
def test_sparse_rhs_equals_dense(n):
    """Both solve the same equations; they agree within the accuracy of the solves, max(1e-12, 4 eps cond(S))
    relative (as at N = 50 below). At N = 30 cond(S) = 4.5e3 and the dense SVD path is the less accurate one:
    against the augmented system refined in extended precision it is off by up to 1.1e-12 relative, the
    sparse Schur solve by 1.6e-14 (measured under OpenBLAS Haswell and Prescott, issue 12)."""
    model = chain(n)
    dense = make_formulation("lagrange", model, fast=False, sparse=False)
    sparse = make_formulation("lagrange", model, sparse=True)
    assert sparse.sparse and not dense.sparse
    for y in _states(model, dense):
        q, v = dense.split(0.0, y)
        A, Minv = dense.ws.constraints(0.2, q, v)[1], np.diag(1.0 / np.diag(model.mass(q)))
        bound = max(1e-12, 4 * np.finfo(float).eps * np.linalg.cond(A @ Minv @ A.T))
        a, b = dense.rhs(0.2, y), sparse.rhs(0.2, y)
        assert np.max(np.abs(a - b)) <= bound * np.max(np.abs(a))


def test_sparse_rhs_equals_dense_n50_within_conditioning():
    """At N = 50 cond(S) = cond(A M^-1 A^T) ~ 1.2e4 (it grows like N^2): the Schur solve is then accurate to
    about eps cond(S) ~ 3e-12 (relative), so the bound is max(1e-12, 4 eps cond(S))."""
    model = chain(50)
    dense = make_formulation("lagrange", model, fast=False, sparse=False)
    sparse = make_formulation("lagrange", model, sparse=True)
    for y in _states(model, dense):
        q, v = dense.split(0.0, y)
        A, Minv = dense.ws.constraints(0.2, q, v)[1], np.diag(1.0 / np.diag(model.mass(q)))
        bound = max(1e-12, 4 * np.finfo(float).eps * np.linalg.cond(A @ Minv @ A.T))
        a, b = dense.rhs(0.2, y), sparse.rhs(0.2, y)
        assert np.max(np.abs(a - b)) <= bound * np.max(np.abs(a))


def test_sparse_jacobian_is_the_dense_one():
    model = chain(20)
    form = make_formulation("lagrange", model, sparse=True)
    q, v = consistent_state(model, ws=form.ws)
    dense, sp = form.ws.constraints(0.0, q + 0.01, v), form.ws.sparse_constraints(0.0, q + 0.01, v)
    assert sp[1].nnz < dense[1].size / 4
    np.testing.assert_array_equal(sp[1].toarray(), dense[1])
    for a, b in zip(dense[::2], sp[::2]):
        np.testing.assert_array_equal(a, b)


def test_sparse_run_equals_dense_run():
    """Same run on both paths (dopri5 rtol 1e-8): the rhs agree to round-off, so the trajectories agree far
    below the tolerance; the multipliers are unique (full row rank: Schur = minimum-norm) and, as functions
    of q with |d lambda / dq| <~ |lambda| / L (L = bar length), agree to (|lambda| / L) |dq| + round-off."""
    model, L = chain(20), 1.0 / 20
    runs = {s: simulate(model, t_end=0.05, options=RunOptions(rtol=1e-8, atol=1e-10),
                        formulation_options={"sparse": s}) for s in (False, True)}
    d, s = runs[False], runs[True]
    assert s.summary["steps"] == d.summary["steps"]
    dq = np.max(np.abs(s.series["q"].data - d.series["q"].data), axis=1)
    assert np.max(dq) <= 1e-8
    for key in ("multipliers", "reactions"):     # reactions are linear in the multipliers
        a, b = d.series[key].data, s.series[key].data
        scale = np.max(np.abs(a))
        assert np.all(np.max(np.abs(a - b), axis=1) <= scale * (1e-12 + dq / L))
    assert s.summary["constraint_violation_max"] <= 1e-12 * 1.0     # KinematicTolerance.position x 1 m
    assert "sparse" in s.summary["linear_algebra"] and "multipliers_unique" not in s.series


def test_redundant_model_gives_a_clear_error():
    model = chain(20, redundant=True)
    with pytest.raises(SimulationError, match=r"redundant constraints or is at a singular.*sparse': False"):
        simulate(model, t_end=0.01, formulation_options={"sparse": True})
    q0 = model.q0 + 1e-3
    with pytest.raises(SimulationError, match="rank deficient"):
        solve_positions(model, q0, sparse=True)
    solve_positions(model, q0, sparse=False)        # the dense path handles the redundant rows


def test_selection_rules():
    small, big = chain(20), chain(SPARSE_MIN_COORDINATES // 3)
    assert big.n >= SPARSE_MIN_COORDINATES > small.n
    assert not use_sparse(small, None) and use_sparse(big, None)
    assert not make_formulation("lagrange", small).sparse
    assert make_formulation("lagrange", big).sparse
    assert not make_formulation("lagrange", big, sparse=False).sparse
    with pytest.raises(MultibodyError, match="sparse=True needs"):
        make_formulation("lagrange", small, sparse=True, eliminate=("J1.x",))


def test_nullspace_says_it_is_dense_for_large_models():
    big = chain(SPARSE_MIN_COORDINATES // 3)
    with pytest.warns(RuntimeWarning, match="dense linear algebra"):
        form = make_formulation("nullspace", big)
    assert "dense" in form.summary()["linear_algebra"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "linear_algebra" not in make_formulation("nullspace", chain(5)).summary()


def _n_four_bar_branch_state(model, theta):
    """(q, v) of the N-four-bar on its parallel branch at crank angle theta and crank rate 1 rad/s: crank bar(2i+1)
    hinged at (i, 0) with its centre 0.5 m out, coupler bar(2i) horizontal between the tips of cranks i - 1 and i."""
    q, v = np.zeros(model.n), np.zeros(model.n)
    c, s = np.cos(theta), np.sin(theta)
    for i, name in enumerate(model.coordinate_names):
        body, _, coord = name.partition(".")
        k = int(body[3:])
        if k % 2:
            x0 = (k - 1) // 2
            q[i], v[i] = {"x": (x0 + 0.5 * c, -0.5 * s), "y": (0.5 * s, 0.5 * c), "theta": (theta, 1.0)}[coord]
        else:
            x0 = k // 2 - 0.5
            q[i], v[i] = {"x": (x0 + c, -s), "y": (s, c), "theta": (0.0, 0.0)}[coord]
    return q, v


@pytest.mark.parametrize("theta", [1e-2, 1e-3, 1e-4])
def test_schur_solve_is_accurate_near_the_singular_configuration(theta):
    """The 81-bar N-four-bar near its singular configuration (all bars horizontal at theta = 0): S = A M^-1 A^T
    has the condition number (s_max / s_min)^2, yet with iterative refinement (linalg.sparse.REFINEMENT_STEPS)
    every crank accelerates by theta'' = -k cos theta (exact reduction, k = crank_rate_constant(40)) to the
    accuracy of a backward-stable solve, eps (s_max / s_min) |theta''| (factor 10 for the system's size); the
    plain Schur solve missed it by up to 3.8e-8 at theta = 1e-4 (eps (s_max / s_min)^2 |theta''|)."""
    from multibody.assembly import Workspace
    from multibody.linalg.sparse import SparseMass, schur_accelerations
    from multibody.models.four_bars import crank_rate_constant, n_four_bar
    model = n_four_bar(cells=40)
    ws = Workspace(model)
    q, v = _n_four_bar_branch_state(model, theta)
    Phi, A, _, gamma = ws.sparse_constraints(0.0, q, v)
    assert np.abs(Phi).max() < 1e-13
    qdd = schur_accelerations(SparseMass(model.mass(q)), A, ws.forces(0.0, q, v), gamma)[0]
    s = np.linalg.svd(A.toarray(), compute_uv=False)
    exact = -crank_rate_constant(40) * np.cos(theta)
    cranks = [i for i, c in enumerate(model.coordinate_names) if c.endswith(".theta") and int(c[3:-6]) % 2]
    np.testing.assert_allclose(qdd[cranks], exact, rtol=0, atol=10 * np.finfo(float).eps * s[0] / s[-1] * abs(exact))
