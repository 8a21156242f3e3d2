"""Variable topology (paper 002): transition conditions, events, the 3R pendulum of Sect. 6, and the
projection / minimal formulations (eqs 6-13).

Reference values come from mechanics, not from the code's output:
- joint locking of an open chain has the closed-form jump "locked rates zero, momenta of the free
  joints unchanged": v+_L = 0, M_FF v+_F = (M v-)_F (momentum balance (21) premultiplied by the
  orthogonal complement F = selection of the free joints, since F^T J^T = 0);
- the kinetic energy lost in a perfectly inelastic constraint activation is the kinetic energy of the
  velocity jump, 1/2 dv^T M dv (Carnot's theorem; v+^T M dv = -(J v+)^T Lambda = 0);
- the three consistent forms (24), (32), (37) are algebraically equivalent.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from multibody.cli import main
from multibody.errors import MultibodyError
from multibody.simulation.events import AtTime, Lock, lock_at, rate_crosses_zero
from multibody.formulations.projection import projected_accelerations
from multibody.linalg.rank import gauss_solve
from multibody.model.chain import serial_chain
from multibody.models import MODELS
from multibody.models.locking import LINK_INERTIA, LINK_INERTIA_AXIAL, LINK_MASS, three_r_pendulum
from multibody.simulation import RunOptions, simulate
from multibody.linalg.projectors import orthogonal_complement
from multibody.simulation.transitions import TRANSITIONS, transition

EPS = np.finfo(float).eps
CONSISTENT = ("lagrangian", "projected", "minimal")
RK4_TEST = RunOptions(integrator="rk4", step=1e-3)   # the paper's h = 1e-4 s is run by the benchmark


def _lock_rows(n, idx):
    J = np.zeros((len(idx), n))
    J[np.arange(len(idx)), idx] = 1.0
    return J


def _closed_form_lock(M, v, locked):
    """Locked rates zero, momenta (M v)_F of the free joints F unchanged (see the module docstring)."""
    free = np.setdiff1d(np.arange(len(v)), locked)
    out = np.zeros_like(v)
    out[free] = np.linalg.solve(M[np.ix_(free, free)], (M @ v)[free])
    return out


def _random_lock_case(rng, M_fun, n):
    q = rng.uniform(-np.pi, np.pi, n)
    perm = rng.permutation(n)
    m1 = rng.integers(0, n - 1)
    m2 = rng.integers(1, n - m1)
    old, new = np.sort(perm[:m1]), np.sort(perm[m1:m1 + m2])
    v = rng.normal(size=n)
    v[old] = 0.0                          # the persistent locks hold before the event
    return M_fun(q), v, old, new


def _check_against_closed_form(M, v, old, new):
    n = len(v)
    ref = _closed_form_lock(M, v, np.concatenate([old, new]))
    scale = np.max(np.abs(ref)) + np.max(np.abs(v))
    for method in CONSISTENT:
        tr = transition(method, M, _lock_rows(n, old), _lock_rows(n, new), v)
        np.testing.assert_allclose(tr.v_plus, ref, rtol=0, atol=1e3 * EPS * scale * np.linalg.cond(M))
        # Carnot: T- - T+ = 1/2 dv^T M dv
        loss = 0.5 * v @ M @ v - 0.5 * tr.v_plus @ M @ tr.v_plus
        assert loss == pytest.approx(tr.energy_loss, rel=1e-10, abs=1e-12 * (v @ M @ v))
        # impulse: M dv + J+^T Lambda = 0
        J = _lock_rows(n, np.concatenate([old, new]))
        np.testing.assert_allclose(M @ tr.dv + J.T @ tr.impulse, 0, atol=1e3 * EPS * np.abs(M).max() * scale)


def test_transition_matches_closed_form_on_random_planar_chains():
    rng = np.random.default_rng(2)
    for _ in range(20):
        n = int(rng.integers(2, 8))
        chain = serial_chain("random", lengths=rng.uniform(0.3, 2, n), masses=rng.uniform(0.5, 20, n),
                             inertias=rng.uniform(0.01, 2, n), q0=np.zeros(n))
        _check_against_closed_form(*_random_lock_case(rng, chain.mass, n))


def test_transition_matches_closed_form_on_robot():
    pytest.importorskip("pinocchio")
    from multibody.models.locking import have_robot_extra, robot_dynamics

    if not have_robot_extra():
        pytest.skip("example-robot-data (extra 'robots') is not installed")
    _, mass, _, _ = robot_dynamics()
    rng = np.random.default_rng(3)
    for _ in range(20):
        _check_against_closed_form(*_random_lock_case(rng, mass, 6))


def test_robot_mass_matrix_carries_the_reflected_rotor_inertia():
    """Drive train of paper 002 Sect. 7: each motor turns G times the joint, so its kinetic energy
    1/2 J_r (G q_i')^2 adds G^2 J_r to M_ii (and nothing off the diagonal) to the links' CRBA matrix."""
    pin = pytest.importorskip("pinocchio")
    from multibody.models import locking

    if not locking.have_robot_extra():
        pytest.skip("example-robot-data (extra 'robots') is not installed")
    _, mass, _, _ = locking.robot_dynamics()
    links = pin.buildModelFromUrdf(str(locking.robot_urdf()))       # no drive train
    q = np.array([0.3, -1.1, 0.9, -0.4, 1.2, 0.2])
    M_links = pin.crba(links, links.createData(), q)
    M_links = np.triu(M_links) + np.triu(M_links, 1).T
    expected = np.diag(np.full(6, locking.ROBOT_GEAR_RATIO ** 2 * locking.ROBOT_ROTOR_INERTIA))
    assert np.allclose(mass(q) - M_links, expected, rtol=0, atol=1e-12)


def test_general_constraints_three_forms_agree_and_conserve_free_momenta():
    """Non-lock constraints (random J1, J2): the forms agree, and F+^T M dv = 0 for F+ of (10)."""
    rng = np.random.default_rng(4)
    for _ in range(20):
        n = int(rng.integers(3, 9))
        m1, m2 = int(rng.integers(0, n - 1)), 1
        X = rng.normal(size=(n, n))
        M = X @ X.T + n * np.eye(n)
        J1, J2 = rng.normal(size=(m1, n)), rng.normal(size=(m2, n))
        v = (orthogonal_complement(J1) if m1 else np.eye(n)) @ rng.normal(size=n - m1)
        out = {k: transition(k, M, J1, J2, v) for k in CONSISTENT}
        for k in ("projected", "minimal"):
            np.testing.assert_allclose(out[k].v_plus, out["lagrangian"].v_plus, atol=1e-12 * np.abs(v).max())
            np.testing.assert_allclose(out[k].impulse, out["lagrangian"].impulse,
                                       atol=1e-11 * np.abs(out["lagrangian"].impulse).max())
        F = orthogonal_complement(np.vstack([J1, J2]))
        np.testing.assert_allclose(F.T @ M @ out["lagrangian"].dv, 0, atol=1e-11 * np.abs(M @ v).max())


def test_naive_transition_zeroes_locked_rates_only():
    M = np.array([[3.0, 1.0, 0.5], [1.0, 2.0, 0.3], [0.5, 0.3, 1.0]])
    v = np.array([1.0, -2.0, 0.5])
    tr = transition("naive", M, np.zeros((0, 3)), _lock_rows(3, [1]), v)
    np.testing.assert_allclose(tr.v_plus, [1.0, 0.0, 0.5], atol=1e-15)
    assert tr.impulse is None


# ----------------------------------------------------------------------------- paper 002 Sect. 6
def test_three_r_pendulum_data():
    """Sect. 6: 1 m x 0.2 m x 0.2 m aluminium (2700 kg/m^3) -> 108 kg, 9.36 and 0.72 kg m^2."""
    assert LINK_MASS == pytest.approx(108.0)
    assert LINK_INERTIA == pytest.approx(9.36)
    assert LINK_INERTIA_AXIAL == pytest.approx(0.72)
    assert MODELS["three-r-pendulum-locking"].events[0].t == 0.8
    assert MODELS["three-r-pendulum-locking"].events[1].t == 1.3


@pytest.fixture(scope="module")
def pendulum_runs():
    model = three_r_pendulum()
    events = MODELS["three-r-pendulum-locking"].events
    return {k: simulate(model, t_end=1.4, options=RK4_TEST, events=events, transition=k) for k in TRANSITIONS}


def _segments(res):
    """Index ranges between the events (the event rows appear twice: before and after the jump)."""
    cuts = [0] + [int(np.flatnonzero(res.t == e["t"])[1]) for e in res.events] + [len(res.t)]
    return [slice(a, b) for a, b in zip(cuts[:-1], cuts[1:])]


def test_pendulum_momenta_of_unlocked_joints_continuous(pendulum_runs):
    res = pendulum_runs["lagrangian"]
    assert [e["t"] for e in res.events] == [0.8, 1.3]
    assert [e["free_coordinates"] for e in res.events] == [["q1", "q3"], ["q1"]]
    for e in res.events:
        assert e["momentum_continuity_error_rel"] <= 1e3 * EPS
        P = np.array(list(e["momenta_before"].values()))
        assert np.max(np.abs(P)) > 100.0            # the momenta themselves are not small


def test_pendulum_locked_coordinates_constant(pendulum_runs):
    res = pendulum_runs["lagrangian"]
    q, v, t = res.q, res.v, res.t
    for k, t_lock in ((1, 0.8), (2, 1.3)):
        after = t >= t_lock
        first = np.flatnonzero(after)[0]
        assert np.max(np.abs(q[after, k] - q[first, k])) <= 1e3 * EPS * np.pi
        assert np.max(np.abs(v[after, k][1:])) <= 1e3 * EPS * np.max(np.abs(v))


def test_pendulum_energy_constant_between_events_and_drops_at_them(pendulum_runs):
    res = pendulum_runs["lagrangian"]
    E = res["energy"][:, 2]
    scale = np.max(np.abs(res["energy"][:, 0]))
    for seg in _segments(res):          # RK4, h = 1e-3: O(h^4) energy error per unit time
        assert np.ptp(E[seg]) <= 1e-7 * scale
    for e in res.events:
        drop = e["energy_before"] - e["energy_after"]
        assert drop > 0.05 * scale                     # a real drop, far above the drift
        assert drop == pytest.approx(e["kinetic_energy_of_jump"], rel=1e-10)   # Carnot


def test_pendulum_transition_forms_agree(pendulum_runs):
    ref = pendulum_runs["lagrangian"]
    scale = np.max(np.abs(ref.v))
    for k in ("projected", "minimal"):
        res = pendulum_runs[k]
        for a, b in zip(res.events, ref.events):
            np.testing.assert_allclose(list(a["velocity_after"].values()), list(b["velocity_after"].values()),
                                       rtol=0, atol=1e3 * EPS * scale)
            np.testing.assert_allclose(list(a["impulse"].values()), list(b["impulse"].values()), rtol=1e-12)
        np.testing.assert_allclose(res.q[-1], ref.q[-1], atol=1e-10)


def test_naive_switching_breaks_momentum_continuity(pendulum_runs):
    """Paper Fig. 2: zeroing the locked rates changes the momenta of the unlocked joints."""
    res, ref = pendulum_runs["naive"], pendulum_runs["lagrangian"]
    for e in res.events:
        assert not e["momentum_consistent"] and e["impulse"] is None
        assert e["momentum_continuity_error_rel"] > 0.01
    assert np.max(np.abs(res.q[-1] - ref.q[-1])) > 0.1    # and the trajectory differs (Figs 2a, 3a)


def test_momentum_series_has_free_joints_only(pendulum_runs):
    res = pendulum_runs["lagrangian"]
    P = res["momentum"]
    late = res.t > 1.3
    assert np.all(np.isnan(P[late][:, 1:])) and np.all(np.isfinite(P[late][:, 0]))
    early = res.t < 0.8
    assert np.all(np.isfinite(P[early]))


def test_state_event_locks_when_rate_crosses_zero():
    """A brake reaching stiction: lock q2 when its rate crosses zero; the root lies on the dense
    output, and locking a joint at rest needs (almost) no impulse."""
    model = three_r_pendulum()
    ev = rate_crosses_zero(model, "q2")
    res = simulate(model, t_end=0.6, options=RK4_TEST, events=[ev])
    assert len(res.events) == 1
    e = res.events[0]
    assert 0 < e["t"] < 0.6 and e["t"] % 1e-3 > 1e-9         # not on the step grid: located inside
    assert abs(e["velocity_before"]["q2"]) <= 1e-8 * np.max(np.abs(res.v))
    assert e["kinetic_energy_of_jump"] <= 1e-12 * np.max(res["energy"][:, 0])


def test_event_errors():
    model = three_r_pendulum()
    with pytest.raises(MultibodyError, match="not after the start"):
        simulate(model, t_end=1.0, options=RK4_TEST, events=[lock_at(0.0, "q2")])
    with pytest.raises(MultibodyError, match="no coordinate"):
        simulate(model, t_end=1.0, options=RK4_TEST, events=[AtTime(0.5, Lock(("q9",)))])


def test_no_events_unchanged():
    model = three_r_pendulum()
    a = simulate(model, t_end=0.2, options=RK4_TEST)
    assert a.events == [] and "events" not in a.summary and "momentum" not in a.series


# ----------------------------------------------------------------------------- formulations (eqs 6-13)
@pytest.mark.parametrize("name", ["pendulum", "pendulum-redundant", "slider-crank", "double-four-bar"])
def test_projection_and_minimal_agree_with_lagrange(name):
    model = MODELS[name].factory()
    opts = RunOptions(rtol=1e-10, atol=1e-12)
    runs = {f: simulate(model, t_end=0.3, formulation=f, options=opts) for f in ("lagrange", "projection", "minimal")}
    for f in ("projection", "minimal"):
        np.testing.assert_allclose(runs[f].q[-1], runs["lagrange"].q[-1], atol=1e-7)
        np.testing.assert_allclose(runs[f].v[-1], runs["lagrange"].v[-1], atol=1e-6)


def test_minimal_on_locked_chain_uses_unlocked_joints():
    model = three_r_pendulum().with_locked(["q2"], [np.pi / 6])
    runs = {f: simulate(model, t_end=0.2, formulation=f, options=RK4_TEST) for f in ("lagrange", "minimal")}
    assert runs["minimal"].summary["minimal_coordinates"] == ["q1", "q3"]
    np.testing.assert_allclose(runs["minimal"].q, runs["lagrange"].q, atol=1e-10)


def test_projected_accelerations_equal_gauss_solution():
    """Eq. (7) and the multiplier form give the same q'' (both solve Gauss's principle (6))."""
    rng = np.random.default_rng(5)
    for _ in range(10):
        n, m = 6, 2
        X = rng.normal(size=(n, n))
        M, A = X @ X.T + np.eye(n), rng.normal(size=(m, n))
        f, gamma = rng.normal(size=n), rng.normal(size=m)
        a = projected_accelerations(M, A, f, gamma)
        np.testing.assert_allclose(A @ a, gamma, atol=1e-12)
        np.testing.assert_allclose(a, gauss_solve(M, A, f, gamma), atol=1e-9)


# ----------------------------------------------------------------------------- command line
def test_cli_reports_events(tmp_path):
    out = CliRunner().invoke(main, ["run", "three-r-pendulum-locking", "--json", "--integrator", "rk4",
                                    "--step", "2e-3", "--t-end", "1.4", "--transition", "projected", "--out",
                                    str(tmp_path / "r.h5")])
    assert out.exit_code == 0, out.output
    s = json.loads(out.stdout)
    assert len(s["events"]) == 2 and s["transition"] == "projected"
    for e in s["events"]:
        for key in ("t", "energy_before", "energy_after", "momentum_continuity_error", "impulse"):
            assert key in e


def test_robot_model_explains_missing_extra(monkeypatch):
    import importlib.metadata

    from multibody.errors import ModelError
    from multibody.models import locking

    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    locking._pinocchio_model.cache_clear()
    try:
        with pytest.raises(ModelError, match=r"multibody\[robots\]"):
            locking.robot_emergency_stop()
        assert not locking.have_robot_extra()
    finally:
        locking._pinocchio_model.cache_clear()
