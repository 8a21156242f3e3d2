"""Nonholonomic (Pfaffian) constraints: knife edges (paper 003 eqs 30-31), user Psi, C = [Phi_q; Psi].

Reference solutions: the knife-edge sled with the edge at the centre of mass moves on a circle at
constant speed u and yaw rate w (m u' = 0, J w' = 0: the edge force is normal to the velocity and
passes through the centre); with the edge at b from the centre (Chaplygin sled) u' = -b w^2,
(J + m b^2) w' = m b u w (derived in models/nonholonomic_models.py), integrated here by scipy; the
mobile robot with a fixed steering rotates about the point where the wheel normals meet:
platform yaw rate = u tan(delta) / a."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from multibody.assembly import Workspace
from multibody.errors import ModelError, MultibodyError
from multibody.kinematics import consistent_state
from multibody.model.builder import ModelBuilder
from multibody.model.motion import Motion
from multibody.model.system import matrix_system
from multibody.models.nonholonomic_models import A_WHEEL, E_ARM, G_RACK, knife_edge_sled, mobile_robot
from multibody.simulation import RunOptions, simulate

TIGHT = RunOptions(rtol=1e-10, atol=1e-12)


def _omega_matrix():
    return np.array([[0.0, -1.0], [1.0, 0.0]])


def test_knife_edge_rows_match_paper_eqs_30_31(rng):
    """Psi^K = [(R n)^T, n^T Omega s], Gamma^K = -(Omega R n)^T r' theta' at random states."""
    s_loc, d = np.array([0.3, -0.2]), np.array([np.cos(0.4), np.sin(0.4)])
    mb = ModelBuilder("k")
    mb.add_body("b", mass=1.0, inertia=0.1)
    mb.knife_edge("edge", "b", on=s_loc, direction=d)
    model = mb.build()
    ws, Om = Workspace(model), _omega_matrix()
    n_loc = Om @ d
    for _ in range(5):
        q, v = rng.normal(size=3), rng.normal(size=3)
        c, s = np.cos(q[2]), np.sin(q[2])
        R = np.array([[c, -s], [s, c]])
        _, C, b, Gamma = ws.velocity_constraints(0.0, q, v)
        np.testing.assert_allclose(C[0], np.r_[R @ n_loc, n_loc @ Om @ s_loc], atol=1e-14)
        assert b[0] == 0.0
        assert Gamma[0] == pytest.approx(-(Om @ R @ n_loc) @ v[:2] * v[2], abs=1e-13)
    assert model.velocity_labels == ("edge.normal",) and (model.m, model.h) == (0, 1)


def test_sled_through_centre_moves_on_a_circle():
    u, w = 1.0, 0.5
    res = simulate(knife_edge_sled(speed=u, turn_rate=w), t_end=10.0, options=TIGHT)
    q, t = res.series["q"].data, res.t
    th = w * t
    np.testing.assert_allclose(q[:, 2], th, atol=1e-9)
    np.testing.assert_allclose(q[:, 0], u / w * np.sin(th), atol=1e-8)
    np.testing.assert_allclose(q[:, 1], u / w * (1 - np.cos(th)), atol=1e-8)
    assert res.summary["energy_drift_rel"] < 1e-8
    assert res.summary["velocity_violation_max"] < 1e-12
    # reaction: the edge supplies the centripetal force m u w (normal, towards the centre)
    fy = res.column("reactions", "edge.on_sled.Fy_body")
    np.testing.assert_allclose(fy, 2.0 * u * w, rtol=1e-7)


def test_chaplygin_sled_against_reduced_equations():
    m, J, b, u0, w0 = 2.0, 0.1, 0.2, 1.0, 0.5
    res = simulate(knife_edge_sled(speed=u0, turn_rate=w0, offset=b, mass=m, inertia=J), t_end=8.0,
                   options=TIGHT)
    ref = solve_ivp(lambda t, y: [-b * y[1] ** 2, m * b * y[0] * y[1] / (J + m * b * b), y[1]],
                    (0, 8.0), [u0, w0, 0.0], t_eval=res.t, rtol=1e-12, atol=1e-13)
    q, v = res.series["q"].data, res.series["v"].data
    u = np.cos(q[:, 2]) * v[:, 0] + np.sin(q[:, 2]) * v[:, 1]
    np.testing.assert_allclose(u, ref.y[0], atol=1e-7)
    np.testing.assert_allclose(v[:, 2], ref.y[1], atol=1e-7)
    np.testing.assert_allclose(q[:, 2], ref.y[2], atol=1e-7)
    assert res.summary["energy_drift_rel"] < 1e-8
    assert res.summary["velocity_violation_max"] < 1e-12


def test_user_psi_in_a_matrix_system_equals_the_knife_edge():
    """The Chaplygin sled as M = diag(m, m, J) with Psi = [-sin th, cos th, b] (eq. 30 written out)."""
    m, J, b = 2.0, 0.1, 0.2
    user = matrix_system("sled-user", ("x", "y", "th"), mass=np.diag([m, m, J]), q0=[0, 0, 0],
                         v0=[1.0, -b * 0.5, 0.5], velocity_given=(0, 1, 2),
                         nonholonomic=[{"name": "edge", "psi": lambda q, t: np.array(
                             [[-np.sin(q[2]), np.cos(q[2]), b]])}])
    assert user.velocity_labels == ("edge.0",) and user.h == 1
    r1 = simulate(user, t_end=3.0, options=TIGHT)
    r2 = simulate(knife_edge_sled(offset=b, mass=m, inertia=J), t_end=3.0, options=TIGHT)
    np.testing.assert_allclose(r1.series["q"].data[-1], r2.series["q"].data[-1], atol=1e-8)
    np.testing.assert_allclose(r1.series["multipliers"].data[-1], r2.series["multipliers"].data[-1],
                               rtol=1e-6)


def test_mobile_robot_fixed_steering_turns_about_the_wheel_axes_intersection():
    """Fixed rack offset d0: carrier 1 angle delta from the tie-rod closure
    (e cos delta - e)^2 + (g + d0 + e sin delta)^2 = g^2 (arm tip at (a - e cos, -e sin) delta);
    the wheel normals meet the common axle (y axis) at y_c = a cot(delta): yaw rate = u tan(delta)/a
    at every instant, with u the platform's forward speed; no forces act, so energy is conserved."""
    d0 = 0.02
    model = mobile_robot(steer=Motion.constant_rate(d0, 0.0))
    res = simulate(model, t_end=4.0, options=RunOptions(rtol=1e-9, atol=1e-11))
    e, g, a = E_ARM, G_RACK, A_WHEEL
    from scipy.optimize import brentq
    delta = brentq(lambda x: (e * np.cos(x) - e) ** 2 + (g + d0 + e * np.sin(x)) ** 2 - g * g, -1.0, 0.0)
    q, v = res.series["q"].data, res.series["v"].data
    np.testing.assert_allclose(q[:, 5] - q[:, 2], delta, atol=1e-9)              # wheel1 angle
    np.testing.assert_allclose(q[:, 8] - q[:, 2], -delta, atol=1e-9)             # wheel2 mirrored
    u = np.cos(q[:, 2]) * v[:, 0] + np.sin(q[:, 2]) * v[:, 1]
    np.testing.assert_allclose(v[:, 2], u * np.tan(delta) / a, atol=1e-8)
    assert res.summary["energy_drift_rel"] < 1e-7
    assert res.summary["velocity_violation_max"] < 1e-10


def test_mobile_robot_steered_run_keeps_psi_v_zero_and_straight_run_is_uniform():
    res = simulate(mobile_robot(), t_end=3.0)
    assert res.summary["velocity_violation_max"] < 1e-9 and res.summary["constraint_violation_max"] < 1e-9
    straight = simulate(mobile_robot(amplitude=0.0), t_end=2.0, options=TIGHT)
    x = straight.series["q"].data[:, 0]
    np.testing.assert_allclose(x, straight.t, atol=1e-9)       # 1 m/s along x, nothing else moves
    assert straight.summary["energy_drift_rel"] < 1e-10


def test_consistent_initial_velocities_respect_knife_edges():
    model = mobile_robot()
    q, v = consistent_state(model)
    _, C, b, _ = Workspace(model).velocity_constraints(0.0, q, v)
    assert np.max(np.abs(C @ v + b)) < 1e-12 and v[0] == 1.0


def test_errors_name_the_problem():
    mb = ModelBuilder("bad")
    mb.add_point_mass("p", mass=1.0)
    with pytest.raises(ModelError, match="planar rigid body"):
        mb.knife_edge("k", "p", at=(0, 0), direction=(1, 0))
    mb.add_body("b", mass=1.0, inertia=1.0)
    with pytest.raises(ModelError, match="must not be zero"):
        mb.knife_edge("k", "b", at=(0, 0), direction=(0, 0))
    with pytest.raises(ModelError, match=r"\(1, 3\) matrix"):
        matrix_system("s", ("x", "y", "z"), mass=np.eye(3), q0=[0, 0, 0],
                      nonholonomic=[{"name": "bad", "psi": lambda q, t: np.ones(2)}])
    with pytest.raises(MultibodyError, match="nonholonomic"):
        simulate(knife_edge_sled(), t_end=0.1, formulation="partitioning")


@pytest.mark.parametrize("offset", [0.0, 0.2])
def test_nullspace_formulation_integrates_knife_edges(offset):
    """The nullspace formulation with T spanning null(C) (C' T of Pfaffian rows by central difference)
    against the reduced equations of the Chaplygin sled (module docstring)."""
    m, J, u0, w0 = 2.0, 0.1, 1.0, 0.5
    res = simulate(knife_edge_sled(speed=u0, turn_rate=w0, offset=offset, mass=m, inertia=J), t_end=6.0,
                   formulation="nullspace", options=TIGHT)
    b = offset
    ref = solve_ivp(lambda t, y: [-b * y[1] ** 2, m * b * y[0] * y[1] / (J + m * b * b), y[1]],
                    (0, 6.0), [u0, w0, 0.0], t_eval=res.t, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(res.series["q"].data[:, 2], ref.y[2], atol=1e-7)
    np.testing.assert_allclose(res.series["v"].data[:, 2], ref.y[1], atol=1e-7)
    assert res.summary["energy_drift_rel"] < 1e-7 and res.summary["velocity_violation_max"] < 1e-12


def test_nullspace_and_lagrange_agree_on_the_mobile_robot():
    opts = RunOptions(rtol=1e-9, atol=1e-11)
    a = simulate(mobile_robot(), t_end=2.5, options=opts)
    b = simulate(mobile_robot(), t_end=2.5, formulation="nullspace", options=opts)
    np.testing.assert_allclose(b.series["q"].data[-1], a.series["q"].data[-1], atol=1e-6)
    assert b.summary["redundancy"] == 2 and b.summary["singular_events"] == []
    # unique reactions agree between formulations (both minimum-norm multipliers, same C)
    ra, rb = a.series["reactions"], b.series["reactions"]
    for label in ("A.on_trolley.Fx", "W5.on_trolley.Fy_body", "D.on_wheel1.Fy"):
        assert rb.data[-1, rb.labels.index(label)] == pytest.approx(ra.data[-1, ra.labels.index(label)],
                                                                    abs=1e-5)
