"""Every joint's Phi_q, Phi_t and gamma against central finite differences on random states.

Reference: central differences of Phi along coordinates and time, and gamma = -d/ds (A v + Phi_t)
along (q + s v, t + s) (the definition of gamma, paper 000 eq. 6); truncation error O(h^2) ~ 1e-12
relative with h = 1e-6, so the tolerance 1e-7 is set by round-off (eps/h ~ 1e-10 times the scale).
"""
import numpy as np
import pytest

from multibody import Motion, ModelBuilder, Workspace, matrix_system
from multibody.models import MODELS

H = 1e-6
TOL = 1e-7


def every_joint_model():
    mb = ModelBuilder("all-joints", gravity=(0.0, -9.81))
    mb.add_body("a", mass=2.0, inertia=0.3, position=(0.5, 0.2), angle=0.3)
    mb.add_body("b", mass=1.0, inertia=0.1, position=(1.3, -0.4), angle=-0.7)
    mb.add_body("c", mass=1.5, inertia=0.2, position=(2.0, 0.5), angle=1.1)
    mb.add_body("d", mass=0.7, inertia=0.05, position=(-1.0, 0.8), angle=0.4)
    mb.add_point_mass("p", mass=0.5, position=(0.3, 1.7))
    mb.revolute("rev", "ground", "a", at=(0.1, 0.0))
    mb.revolute("rev-ab", "a", "b", on_a=(0.4, 0.1), on_b=(-0.3, 0.2))
    mb.prismatic("pri", "b", "c", axis=(0.6, 0.8), at=(1.6, 0.0))
    mb.weld("wel", "c", "d", at=(0.5, 0.5))
    mb.distance("rod", "a", "p", on_a=(0.2, -0.1), on_b=(0.0, 0.0))
    mb.distance("rod-g", "ground", "d", at_a=(-2.0, 0.0), on_b=(0.1, 0.2))
    mb.driver("rev-ab", Motion.harmonic(0.3, 2.0, phase=0.1, offset=0.5))
    mb.driver("pri", Motion.polynomial([0.1, 0.2, -0.3]))
    mb.drive_coordinate("p.x", Motion.constant_rate(0.3, -0.5))
    mb.constraint("circle", lambda q, t: np.array([np.sin(q[0]) * q[4] + 0.1 * t * q[2] ** 2 - 0.3]))
    return mb.build()


MODELS_UNDER_TEST = {"all-joints": every_joint_model, **{k: e.factory for k, e in MODELS.items()}}


def fd_terms(ws, t, q, v):
    n = len(q)
    A = np.array([(ws.constraints(t, q + H * e, v)[0] - ws.constraints(t, q - H * e, v)[0]) / (2 * H)
                  for e in np.eye(n)]).T
    Phi_t = (ws.constraints(t + H, q, v)[0] - ws.constraints(t - H, q, v)[0]) / (2 * H)

    def rate(s):
        _, A_s, Pt_s, _ = ws.constraints(t + s, q + s * v, v)
        return A_s @ v + Pt_s

    gamma = -(rate(H) - rate(-H)) / (2 * H)
    return A, Phi_t, gamma


@pytest.mark.parametrize("name", list(MODELS_UNDER_TEST))
def test_jacobian_phi_t_gamma_match_finite_differences(name, rng):
    model = MODELS_UNDER_TEST[name]()
    ws = Workspace(model)
    for _ in range(5):
        q = model.q0 + 0.3 * rng.standard_normal(model.n)
        v = rng.standard_normal(model.n)
        t = rng.uniform(0, 2)
        _, A, Phi_t, gamma = ws.constraints(t, q, v)
        A_fd, Pt_fd, g_fd = fd_terms(ws, t, q, v)
        scale = 1 + np.abs(A).max(initial=0.0)
        assert np.abs(A - A_fd).max(initial=0.0) < TOL * scale
        assert np.abs(Phi_t - Pt_fd).max(initial=0.0) < TOL * scale
        assert np.abs(gamma - g_fd).max(initial=0.0) < TOL * scale * (1 + np.abs(v).max() ** 2)


def test_generic_constraint_complex_step_equals_analytic(rng):
    """Jacobian, Phi_t and gamma of a user constraint without derivatives (complex step) equal the
    analytic ones of the same function."""
    phi = lambda q, t: np.array([q[0] ** 2 * np.cos(q[1]) + np.sin(t) * q[1] - 1.0])  # noqa: E731
    jac = lambda q, t: np.array([[2 * q[0] * np.cos(q[1]), -q[0] ** 2 * np.sin(q[1]) + np.sin(t)]])  # noqa: E731
    phi_t = lambda q, t: np.array([np.cos(t) * q[1]])  # noqa: E731

    def gamma(q, v, t):  # -(d/dt)(Phi_q v + Phi_t) at fixed qdd, by hand
        x, y = q
        xd, yd = v
        d_jac_v = (2 * xd * np.cos(y) - 2 * x * np.sin(y) * yd) * xd \
            + (-2 * x * xd * np.sin(y) - x * x * np.cos(y) * yd + np.cos(t)) * yd
        return -np.array([d_jac_v + np.cos(t) * yd - np.sin(t) * y])

    mk = lambda **kw: matrix_system("g", ["x", "y"], mass=np.eye(2), q0=[1.0, 0.0],  # noqa: E731
                                    constraints=[dict(name="c", phi=phi, **kw)])
    exact, implicit = Workspace(mk(jacobian=jac, phi_t=phi_t, gamma=gamma)), Workspace(mk())
    semi = Workspace(mk(jacobian=jac, phi_t=phi_t))
    for _ in range(5):
        q, v, t = rng.standard_normal(2), rng.standard_normal(2), rng.uniform(0, 3)
        ref = exact.constraints(t, q, v)
        for ws, tol in ((semi, 1e-12), (implicit, 1e-7)):
            got = ws.constraints(t, q, v)
            for a, b in zip(got, ref):
                np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_spring_force_is_minus_gradient_of_potential(rng):
    mb = ModelBuilder("springs")
    mb.add_body("a", mass=1.0, inertia=0.1, position=(0.0, 0.0), angle=0.2)
    mb.add_point_mass("p", mass=1.0, position=(1.0, 0.5))
    mb.spring_damper("s1", "ground", "a", stiffness=30.0, at_a=(0.0, 1.0), on_b=(0.2, 0.1), free_length=0.8)
    mb.spring_damper("s2", "a", "p", stiffness=12.0, on_a=(-0.1, 0.0), at_b=(1.0, 0.5), free_length=0.5)
    ws = Workspace(mb.build())
    for _ in range(5):
        q = rng.standard_normal(5)
        grad = np.array([(ws.potential(0, q + H * e) - ws.potential(0, q - H * e)) / (2 * H) for e in np.eye(5)])
        np.testing.assert_allclose(ws.forces(0, q, np.zeros(5)), -grad, atol=1e-6)


def test_damper_dissipates(rng):
    """With damping c the power of the element force is -c l'^2 <= 0."""
    mb = ModelBuilder("damper")
    mb.add_point_mass("p", mass=1.0, position=(1.0, 0.0))
    mb.spring_damper("d", "ground", "p", stiffness=0.0, damping=3.0, at_a=(0, 0), on_b=(0, 0))
    ws = Workspace(mb.build())
    q, v = np.array([2.0, 0.0]), np.array([0.5, 0.7])
    assert ws.forces(0, q, v) @ v == pytest.approx(-3.0 * 0.5 ** 2)


def test_applied_force_and_torque_by_virtual_power(rng):
    """Generalized forces of a point force F at a body point p and of a torque tau: f . v equals the
    power F . p' + tau theta' for any velocity (principle of virtual power)."""
    F, tau, s = np.array([3.0, -2.0]), 0.7, np.array([0.4, -0.1])
    mb = ModelBuilder("forces")
    mb.add_body("b", mass=1.0, inertia=0.1, position=(0.2, 0.3), angle=0.5)
    mb.force("b", lambda t, q, v: F, on=s)
    mb.torque("b", lambda t, q, v: tau)
    ws = Workspace(mb.build())
    for _ in range(5):
        q, v = rng.standard_normal(3), rng.standard_normal(3)
        c, sn = np.cos(q[2]), np.sin(q[2])
        p_dot = v[:2] + v[2] * np.array([-(sn * s[0] + c * s[1]), c * s[0] - sn * s[1]])
        assert ws.forces(0.0, q, v) @ v == pytest.approx(F @ p_dot + tau * v[2], rel=1e-12)
