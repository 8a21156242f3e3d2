"""Generalized-alpha on planar chains (issue 16): the compiled Newton loop against the Python reference, its band
LU, and the free-end chain through the whip, checked against physics (energy of a conservative chain, the
constraints)."""
import numpy as np
import pytest

from multibody.assembly import kinetic_energy
from multibody.formulations.registry import make_formulation
from multibody.integrate.generalized_alpha import GeneralizedAlpha
from multibody.kinematics import consistent_state
from multibody.models import MODELS
from test_generalized_alpha import chain

kernels = pytest.importorskip("multibody.integrate.generalized_alpha_kernels")
band = pytest.importorskip("multibody.integrate.generalized_alpha_band")


def free_chain(n, tilt=np.pi / 6, tip_mass=0.0):
    """The chain of benchmarks/chains.py: n bars (1 m, 1 kg in all) released 30 deg below the horizontal."""
    return chain(n, tip_mass, tilt)


def stepper(model, h, t_end):
    form = make_formulation("lagrange", model)
    q, v = consistent_state(model, 0.0, ws=form.ws)
    return GeneralizedAlpha(form, 0.0, np.r_[q, v], t_end, step=h)


@pytest.mark.parametrize("model", [MODELS["double-four-bar"].factory(), free_chain(60, tip_mass=1.0)],
                         ids=["double-four-bar (dense)", "chain-60 (sparse)"])
def test_compiled_newton_loop_equals_the_reference(model):
    """The compiled Newton loop (generalized_alpha_kernels) and the Python one with the Workspace take the same
    iterations to the same states (round-off apart: both converge to the Newton tolerance 1e-10)."""
    runs = []
    for compiled in (True, False):
        ga = stepper(model, 2e-3, 0.06)
        if ga.kernel is None:
            pytest.skip("no compiled Newton loop (numba missing or cache cold)")
        if not compiled:
            ga.kernel = None
        while ga.t < ga.t_bound - 1e-12:
            ga.step()
        runs.append((ga.iterations, ga.y))
    assert abs(runs[0][0] - runs[1][0]) <= 1
    np.testing.assert_allclose(runs[0][1], runs[1][1], rtol=0, atol=1e-8)


def test_band_lu_solves_a_pivoting_saddle_point_system():
    """band_factor/band_solve on [[M, B^T], [B, 0]] in band order (zero diagonal: pivoting needed) solve it as
    a dense solve does (Golub & Van Loan Sect. 4.3.5: partial pivoting keeps L in the band, U within 2w)."""
    rng = np.random.default_rng(5)
    k, w = 40, 3
    J = np.zeros((k, k))
    for i in range(k):
        for j in range(max(0, i - w), min(k, i + w + 1)):
            J[i, j] = rng.normal()
    J[::4, ::4] = 0.0                     # zero pivots on the diagonal: saddle-point-like rows
    J = J + J.T
    W = np.zeros((k, 3 * w + 1))
    for i in range(k):
        for j in range(max(0, i - w), min(k, i + w + 1)):
            W[i, j - i + w] = J[i, j]
    piv, lower = np.zeros(k, np.int64), np.zeros((k, w))
    assert band.band_factor(W, piv, lower, w, 1e-14)
    b = rng.normal(size=k)
    x = band.band_solve(W, piv, lower, w, b.copy())
    np.testing.assert_allclose(J @ x, b, atol=1e-10 * np.abs(J).max() * np.abs(x).max())


def test_free_chain_passes_the_whip_without_creating_energy():
    """The free-end chain of 100 bars at h = 1e-3 (issue 16: Newton failed at t = 0.506): through the whip
    (the tip's angular velocity peaks near t = 0.46 s) to 0.6 s. Physics: the chain is conservative, so the
    energy (kinetic + gravity) may only fall by the scheme's numerical damping (rho_inf < 1), never rise above
    its initial value beyond round-off; the joints stay closed to the Newton tolerance (index 3: Phi = 0 at
    every step). The sub-steps that carry it through are taken (n_rejected > 0)."""
    model = free_chain(100)
    ga = stepper(model, 1e-3, 0.6)
    n, M, ws = model.n, model.mass_matrix, ga.ws
    energy = lambda y: kinetic_energy(M, y[n:]) + ws.potential(0.0, y[:n])    # noqa: E731
    E0, worst, phi = energy(ga.y), -np.inf, 0.0
    while ga.t < ga.t_bound - 1e-12:
        ga.step()
        worst = max(worst, energy(ga.y) - E0)
        phi = max(phi, np.abs(ws.constraints(ga.t, ga.y[:n], ga.y[n:])[0]).max())
    assert ga.t == pytest.approx(0.6) and ga.n_rejected > 0
    assert worst <= 1e-9 * abs(E0)
    assert phi <= 1e-10 * model.length_scale


def test_analytic_revolute_stiffness_equals_coloured_differences():
    """For revolute joints (Coincident rows) the compiled iteration matrix takes K_t = d(A^T lambda)/dq in closed
    form (theta-theta entries, R'' s = -R s); the coloured forward differences of the general path give the same
    matrix to their truncation error (relative ~sqrt(eps))."""
    model = free_chain(12, tip_mass=0.5)
    ga = stepper(model, 1e-3, 0.01)
    if ga.kernel is None:
        pytest.skip("no compiled Newton loop (numba missing or cache cold)")
    k = ga.kernel
    n = model.n
    rng = np.random.default_rng(2)
    qe, ve = np.r_[ga.y[:n] + 0.1 * rng.normal(size=n), 0.0], np.r_[ga.y[n:], 0.0]
    lam = rng.normal(size=ga.ws.m)
    bands = []
    for analytic in (True, False):
        W = np.zeros_like(k.band[0])
        kernels._matrix(qe, ve, lam, 1e3, k.pk, k.mass, k.kpat[:5] + (analytic,), model.length_scale, k.ent,
                        np.zeros(n), np.zeros(n), (W, k.band[1], k.band[2]))
        bands.append(W)
    assert k.kpat[5]
    np.testing.assert_allclose(bands[0], bands[1], rtol=0, atol=1e-7 * np.abs(bands[1]).max())


def test_chain_hanging_at_rest_stays_at_rest_without_sub_steps():
    """A 10-bar chain hanging straight down is in equilibrium: it stays at rest (velocities at round-off), and
    the round-off of its accelerations is not taken for alternating accelerations (no sub-step)."""
    model = free_chain(10, tilt=np.pi / 2)
    ga = stepper(model, 1e-3, 1.0)
    while ga.t < ga.t_bound - 1e-12:
        ga.step()
    assert ga.n_rejected == 0
    assert np.abs(ga.y[model.n:]).max() < 1e-9
