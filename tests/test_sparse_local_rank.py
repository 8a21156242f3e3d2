"""The local rank rule of the sparse path's band solves (multibody.fast.band_kernels, issue 12).

Mathematics asserted: the Cholesky pivot d_j of G = A A^T is the squared distance of row j of A from the span of the
rows before it (Golub & Van Loan, Matrix Computations, 4th ed., Sect. 4.2 / 5.2: G = R^T R with R from the QR of
A^T), so rho_j = d_j / G_jj is the squared sine of the angle between row j and that span; a dropped row
(L_jj = inf) solves the system without that row and column, i.e. the minimum-norm solve over the other rows; a
diagonal E added to S = A M^-1 A^T is Gauss's principle with the penalty 1 / E_jj on row j (Bayo & Ledesma 1996), so
the fade leaves the solve exact where (rel^2 / rho)^4 is below round-off. On the N-four-bar the closing row of each
loop has a sine proportional to the crank angle theta from the singular configuration with a factor that does not
depend on the number of cells, while s_min / s_max of the whole A falls with it (the reason the rule is local).
Behaviour: the N-four-bar with a few cells on the forced sparse path crosses its singular configurations with the
band solve alone (no dense fallback evaluation), on its branch.
"""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from multibody import RunOptions, simulate  # noqa: E402
from multibody.assembly import Workspace  # noqa: E402
from multibody.fast.band_kernels import band_cholesky_solve  # noqa: E402
from multibody.fast.band_local import LOCAL_PIN, band_cholesky_drop, band_cholesky_fade  # noqa: E402
from multibody.models.four_bars import n_four_bar  # noqa: E402
from multibody.models.modified_four_bars import crank_angle_exact_cells  # noqa: E402

#: relative round-off of a solve with a moderate condition number (as tests/test_fast.py)
ROUND_OFF = 1e-12


def to_band(S, w):
    """The lower band (m, w + 1) of a dense symmetric S, S[i, i - d] at band[i, d]."""
    m = S.shape[0]
    band = np.zeros((m, w + 1))
    for d in range(w + 1):
        band[d:, d] = np.diag(S, -d)
    return band


def band_rows(rng, m=12, n=30):
    """A (m, n) whose rows couple only with the W = 4 rows around them (A A^T has half bandwidth 4), with row 7 within
    ~1e-5 (relative) of the span of rows 5 and 6."""
    A = np.zeros((m, n))
    for i in range(m):
        A[i, 2 * i: 2 * i + 6] = rng.standard_normal(6)
    A[7] = A[5:7].T @ rng.standard_normal(2) + 1e-5 * np.r_[np.zeros(14), rng.standard_normal(6), np.zeros(n - 20)]
    return A


W = 4


def test_local_ratio_is_the_squared_sine_to_the_earlier_rows(rng):
    """rho_j against the QR of the earlier rows; row 7 (sine ~1e-5) is dropped, so the later rows are measured against
    the earlier rows without it (as the solve then uses them)."""
    A = band_rows(rng)
    rho = np.empty(A.shape[0])
    band = to_band(A @ A.T, W)
    band_cholesky_drop(band, LOCAL_PIN ** 2, rho)
    for j in range(A.shape[0]):
        earlier = [i for i in range(j) if i != 7]
        Q = np.linalg.qr(A[earlier].T)[0] if earlier else np.zeros((A.shape[1], 0))
        residual = A[j] - Q @ (Q.T @ A[j])
        assert rho[j] == pytest.approx(residual @ residual / (A[j] @ A[j]), rel=1e-4 if j == 7 else ROUND_OFF)
    assert rho[7] < LOCAL_PIN ** 2 < np.delete(rho, 7).min()


def test_a_dropped_row_gives_the_minimum_norm_solve_over_the_others(rng):
    A, b = band_rows(rng), rng.standard_normal(12)
    band, rho = to_band(A @ A.T, W), np.empty(12)
    assert band_cholesky_drop(band, LOCAL_PIN ** 2, rho) == 1
    y = b.copy()
    band_cholesky_solve(band, y)
    keep = np.flatnonzero(np.arange(12) != 7)
    assert y[7] == 0.0
    expected = np.linalg.solve(A[keep] @ A[keep].T, b[keep])
    assert np.abs(y[keep] - expected).max() < ROUND_OFF * np.abs(expected).max()


def test_the_fade_is_exact_above_the_pin_and_drops_the_row_at_round_off(rng):
    """rho >= LOCAL_PIN^2 = 1e4 LOCAL_REL^2: the fade (1e-4)^4 = 1e-16 leaves the exact solve; a row with rho below
    1e-4 LOCAL_REL^2 (a fade below 1e-16 relative) is dropped."""
    A, b = band_rows(rng), rng.standard_normal(12)
    A[7, 14:20] = rng.standard_normal(6)         # a regular S: the fade alone decides (rho is its input)
    S = (A * rng.uniform(0.5, 2.0, A.shape[1])) @ A.T
    for rho7, exact in ((LOCAL_PIN ** 2, True), (1e-30, False)):
        rho = np.ones(12)
        rho[7] = rho7
        band = to_band(S, W)
        band_cholesky_fade(band, rho, (LOCAL_PIN / 100) ** 2, np.empty(12))
        y = b.copy()
        band_cholesky_solve(band, y)
        keep = np.arange(12) if exact else np.flatnonzero(np.arange(12) != 7)
        expected = np.linalg.solve(S[np.ix_(keep, keep)], b[keep])
        assert np.abs(y[keep] - expected).max() < ROUND_OFF * np.abs(expected).max()


def branch_state(model, theta):
    """q of the N-four-bar on its parallel branch with every crank at angle theta (couplers horizontal)."""
    q = np.zeros(model.n)
    for i, name in enumerate(model.coordinate_names):
        bar, c = name.split(".")
        k = int(bar[3:])
        x = (k - 1) // 2 + 0.5 * np.cos(theta) if k % 2 else k // 2 - 0.5 + np.cos(theta)
        y = 0.5 * np.sin(theta) if k % 2 else np.sin(theta)
        q[i] = {"x": x, "y": y, "theta": theta if k % 2 else 0.0}[c]
    return q


def local_and_global(cells, theta):
    """(smallest sqrt(rho_j) / theta in reverse Cuthill-McKee order, s_min / s_max / theta) at crank angle theta."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import reverse_cuthill_mckee
    model = n_four_bar(cells=cells)
    A = Workspace(model).constraints(0.0, branch_state(model, theta), np.zeros(model.n))[1]
    G = A @ A.T
    perm = reverse_cuthill_mckee(csr_matrix(G != 0), symmetric_mode=True)
    G = G[np.ix_(perm, perm)]
    d = np.diag(np.linalg.cholesky(G)) ** 2
    s = np.linalg.svd(A, compute_uv=False)
    return np.sqrt((d / np.diag(G)).min()) / theta, s[-1] / s[0] / theta


def test_the_local_ratio_of_a_loop_does_not_depend_on_the_chain_length():
    """At theta = 1e-3 the closing rows' sines are 0.4-0.8 theta for 1 and 6 cells; s_min / s_max of the whole
    Jacobian is more than twice smaller at 6 cells (0.21 theta, 0.094 theta; 0.017 theta at 40: the coupled loops'
    softest combination)."""
    (local1, global1), (local6, global6) = local_and_global(1, 1e-3), local_and_global(6, 1e-3)
    assert 0.4 < local6 < local1 < 0.8
    assert global6 < global1 / 2


@pytest.mark.parametrize("rtol, atol", [(1e-10, 1e-12), (1e-12, 1e-12)])
def test_the_sparse_path_crosses_with_the_band_solve_alone(rtol, atol):
    """N = 4 cells, sparse path forced, dopri5 through the first singular configuration (t = 0.72): on the branch
    (cranks parallel), the crossing reported, no dense fallback evaluation, the crank tip within 1e3 rtol m of the
    exact reduction theta'' = -k cos theta (dopri5's global error over 1 s is a few hundred local tolerances)."""
    cells = 4
    r = simulate(n_four_bar(cells=cells), t_end=1.0, formulation="lagrange", formulation_options={"sparse": True},
                 options=RunOptions(integrator="dopri5", rtol=rtol, atol=atol))
    assert r.summary["dense_fallback_evaluations"] == 0
    assert len(r.summary["singular_crossings"]) == 1
    cranks = np.stack([r.column("q", f"bar{2 * i + 1}.theta") for i in range(cells + 1)])
    assert np.abs(cranks - cranks[0]).max() < 1e-8
    th, exact = cranks[0], crank_angle_exact_cells(r.t, cells=cells)
    assert np.hypot(np.cos(th) - np.cos(exact), np.sin(th) - np.sin(exact)).max() < 1e3 * rtol


def branch_velocity(model, theta, omega=1.0):
    """v of the N-four-bar on its parallel branch: every crank turning at omega, the couplers translating."""
    v = np.zeros(model.n)
    for i, name in enumerate(model.coordinate_names):
        bar, c = name.split(".")
        r = 0.5 if int(bar[3:]) % 2 else 1.0
        v[i] = {"x": -r * np.sin(theta) * omega, "y": r * np.cos(theta) * omega,
                "theta": omega if int(bar[3:]) % 2 else 0.0}[c]
    return v


@pytest.mark.parametrize("theta", [1e-2, 1e-3])
def test_the_band_solve_copes_next_to_the_singular_configuration(theta):
    """N = 4 on the sparse path at crank angle theta from the singular configuration (s_min / s_max ~ 0.1 theta): the
    band solve answers (before: it declined below a pivot ratio of 1e-3 and handed over to SuperLU and the dense SVD
    solve) with the exact crank acceleration theta'' = -k cos theta, to the round-off eps (s_max / s_min)^2 of the
    Schur complement."""
    from multibody.formulations.lagrange import Lagrange
    from multibody.models.four_bars import crank_rate_constant
    cells = 4
    model = n_four_bar(cells=cells)
    form = Lagrange(model, sparse=True)
    q, v = branch_state(model, theta), branch_velocity(model, theta)
    out, ok = form.fast_rhs.band(np.concatenate([q, v]), np.zeros(form.ws.m))
    assert ok
    s = np.linalg.svd(Workspace(model).constraints(0.0, q, v)[1], compute_uv=False)
    cranks = [model.coordinate_names.index(f"bar{2 * i + 1}.theta") for i in range(cells + 1)]
    k = crank_rate_constant(cells)
    error = np.abs(out[model.n:][cranks] + k * np.cos(theta)).max()
    assert error < 100 * np.finfo(float).eps * (s[0] / s[-1]) ** 2 * k
