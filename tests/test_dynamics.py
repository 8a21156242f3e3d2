"""Motion checks against closed forms and physical identities (lagrange formulation)."""
import numpy as np
import pytest
from scipy.special import ellipk

from multibody import ModelBuilder, RunOptions, serial_chain, simulate
from multibody.formulations.lagrange import Stabilization
from multibody.models import MODELS
from multibody.models.four_bars import crank_angle_exact
from multibody.models.linkages import FOUR_BAR, rocker_angle, slider_position

G = 9.81
TIGHT = RunOptions(rtol=1e-10, atol=1e-12)


def test_pendulum_half_period_and_energy():
    """Released horizontally from rest, the mass reaches the opposite horizontal at T/2 with
    T = 4 sqrt(l/g) K(k^2), k = sin(pi/4) (complete elliptic integral), and energy is conserved."""
    model = MODELS["pendulum"].factory()
    half = 2 * np.sqrt(1.0 / G) * ellipk(np.sin(np.pi / 4) ** 2)
    r = simulate(model, t_end=half, options=TIGHT)
    np.testing.assert_allclose(r.q[-1], [-1.0, 0.0], atol=1e-8)
    assert r.summary["energy_drift_rel"] < 1e-9
    assert r.summary["constraint_violation_max"] < 1e-12


def test_redundant_pendulum_moves_like_the_plain_one():
    """Writing the constraint twice (paper 000 eq. 29d) leaves the motion unchanged; the minimum-norm
    multipliers split the reaction equally, lambda_1 = lambda_2 = lambda_plain / 2."""
    plain = simulate(MODELS["pendulum"].factory(), t_end=2.0, options=TIGHT)
    twice = simulate(MODELS["pendulum-redundant"].factory(), t_end=2.0, options=TIGHT)
    np.testing.assert_allclose(twice.q[-1], plain.q[-1], atol=1e-8)
    lam = twice["multipliers"]
    np.testing.assert_allclose(lam[:, 0], lam[:, 1], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(np.interp(plain.t, twice.t, lam[:, 0] + lam[:, 1]), plain["multipliers"][:, 0],
                               rtol=1e-5, atol=1e-5)


def test_pendulum_tension_equals_centripetal_plus_gravity():
    """Phi = x^2 + z^2 - l^2 gives the rod force 2 lambda l, and the radial balance of the point mass
    is 2 lambda l = m v^2 / l + m g (-z / l) . (tension along the rod)."""
    r = simulate(MODELS["pendulum"].factory(), t_end=1.0, options=TIGHT)
    x, z = r.q.T
    speed2 = (r.v ** 2).sum(axis=1)
    tension = 2 * r["multipliers"][:, 0] * 1.0
    np.testing.assert_allclose(tension, speed2 - G * z, rtol=1e-7, atol=1e-7)


def test_slider_crank_follows_closed_form():
    r = simulate(MODELS["slider-crank"].factory(), t_end=1.0, options=TIGHT)
    phi = r.column("q", "crank.theta")
    np.testing.assert_allclose(phi, np.pi / 3 + 2 * np.pi * r.t, atol=1e-9)
    np.testing.assert_allclose(r.column("q", "slider.x"), slider_position(phi), atol=1e-9)


def test_four_bar_follows_freudenstein():
    r = simulate(MODELS["four-bar"].factory(), t_end=1.0, options=TIGHT)
    th2, th4 = r.column("q", "crank.theta"), r.column("q", "rocker.theta")
    d = np.angle(np.exp(1j * (th4 - rocker_angle(th2, **FOUR_BAR))))
    assert np.abs(d).max() < 1e-9


@pytest.mark.parametrize("options, bound", [(RunOptions(), 1e-3), (TIGHT, 1e-6)])
def test_double_four_bar_stays_on_its_branch(options, bound):
    """IFToMM double four-bar, 10 s through the all-horizontal singular configurations: the three
    cranks stay parallel and the crank tip follows the exact reduction theta'' = -k cos theta
    within the benchmark bounds (1e-3 m at the default tolerances, 1e-6 m at rtol 1e-10)."""
    r = simulate(MODELS["double-four-bar"].factory(), t_end=10.0, options=options)
    th = np.stack([r.column("q", f"bar{k}.theta") for k in (1, 3, 5)], axis=1)
    assert np.abs(th - th[:, :1]).max() < 1e-6
    exact = crank_angle_exact(r.t)
    tip_error = np.hypot(np.cos(th[:, 0]) - np.cos(exact), np.sin(th[:, 0]) - np.sin(exact))
    assert tip_error.max() < bound
    passes = np.count_nonzero(np.diff(np.sign(np.cos(th[:, 0])[::1] * 0 + np.sin(th[:, 0]))))
    assert passes >= 4  # crossed the horizontal (singular) configurations several times


def test_serial_chain_agrees_with_absolute_coordinates():
    """A 3-link pendulum in relative coordinates (model.chain) and the same links as planar bodies
    with revolute joints (model.builder): two independent derivations give the same motion."""
    L, m, I = np.array([1.0, 0.8, 0.6]), np.array([2.0, 1.5, 1.0]), np.array([0.2, 0.1, 0.05])
    q0 = np.array([-0.3, 0.5, 0.4])
    chain = serial_chain("chain", lengths=L, masses=m, inertias=I, q0=q0)
    mb = ModelBuilder("bodies", gravity=(0, -G))
    phi, joint = np.cumsum(q0), np.zeros(2)
    for k in range(3):
        e = np.array([np.cos(phi[k]), np.sin(phi[k])])
        mb.add_body(f"l{k}", mass=m[k], inertia=I[k], position=joint + L[k] / 2 * e, angle=phi[k])
        mb.revolute(f"j{k}", "ground" if k == 0 else f"l{k - 1}", f"l{k}", at=joint)
        joint = joint + L[k] * e
    r1 = simulate(chain, t_end=1.5, options=TIGHT)
    r2 = simulate(mb.build(), t_end=1.5, options=TIGHT)
    th = np.stack([r2.column("q", f"l{k}.theta") for k in range(3)], axis=1)
    np.testing.assert_allclose(np.cumsum(r1.q[-1]), th[-1], atol=1e-7)
    assert r1.summary["energy_drift_rel"] < 1e-8


def test_baumgarte_and_rk4_options():
    model = MODELS["pendulum"].factory()
    r = simulate(model, t_end=2.0, formulation_options={"stabilization": Stabilization("baumgarte", 10, 10)})
    assert r.summary["constraint_violation_max"] < 1e-5
    r = simulate(model, t_end=2.0, options=RunOptions(integrator="rk4", step=1e-3))
    assert r.summary["steps"] == 2000
    assert r.summary["energy_drift_rel"] < 1e-6


def test_output_interval_thins_the_stored_series_only():
    """Storing one state per 0.1 s changes what is stored, not the motion: same steps, same final
    state, first and last times kept, stored times at least 0.1 s apart."""
    model = MODELS["pendulum"].factory()
    every = simulate(model, t_end=2.0)
    thin = simulate(model, t_end=2.0, options=RunOptions(output_interval=0.1))
    assert thin.summary["steps"] == every.summary["steps"]
    np.testing.assert_array_equal(thin.q[-1], every.q[-1])
    assert thin.t[0] == 0.0 and thin.t[-1] == 2.0
    assert np.all(np.diff(thin.t[:-1]) >= 0.1 * (1 - 1e-9))
    assert 10 <= len(thin.t) <= 21 < len(every.t)
