"""Spatial springs, dampers, drivers, forces and torques (issue 23) against closed forms."""
from __future__ import annotations

import numpy as np
import pytest

from multibody import Motion, RunOptions, simulate
from multibody.errors import ModelError
from multibody.model.director_builder import SpatialModelBuilder
from multibody.models.spatial_mechanisms import SLIDER_CRANK, slider_position, spatial_slider_crank

G = 9.81
TIGHT = RunOptions(rtol=1e-10, atol=1e-12)


def _omega(q, v, body=0):
    """omega = 1/2 sum_I d_I x v_I of one body (module docstring of model.director_forces)."""
    x, xd = q[..., 12 * body:12 * body + 12], v[..., 12 * body:12 * body + 12]
    return 0.5 * sum(np.cross(x[..., 3 + 3 * i:6 + 3 * i], xd[..., 3 + 3 * i:6 + 3 * i]) for i in range(3))


def test_body_hanging_on_a_spring_oscillates_at_sqrt_k_over_m():
    """z(t) = z_eq + A cos(sqrt(k/m) t), z_eq = -(l0 + m g / k): the spring is vertical and stays so."""
    m, k, l0, A = 2.0, 50.0, 0.5, 0.05
    z_eq = -(l0 + m * G / k)
    b = SpatialModelBuilder("hang")
    b.add_body("bob", mass=m, inertia=[0.1, 0.2, 0.25], position=(0.3, 0.2, z_eq + A))
    b.spring_damper("s", "ground", "bob", point1=(0.3, 0.2, 0), point2=(0.3, 0.2, z_eq + A), stiffness=k,
                    free_length=l0)
    b.gravity(G)
    r = simulate(b.build(), t_end=2.0, options=TIGHT)
    w = np.sqrt(k / m)
    assert np.max(np.abs(r.q[:, 2] - (z_eq + A * np.cos(w * r.t)))) < 1e-8
    assert r.summary["energy_drift_rel"] < 1e-8


def _pendulum(theta0, stiffness, *, gravity=True, damping=0.0, m=1.5, L=0.8):
    """A rod hanging from a revolute pair about e2 at the origin, turned by theta0 from the vertical,
    with a torsion spring whose free angle is the vertical (free_angle = -theta0 from the start)."""
    d, J = L / 2, m * L ** 2 / 12
    c, s = np.cos(theta0), np.sin(theta0)
    Ry = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    b = SpatialModelBuilder("torsion-pendulum")
    b.add_body("rod", mass=m, inertia=[J, J, 1e-4], position=Ry @ [0, 0, -d], directors=Ry)
    b.revolute("pin", None, "rod", point=(0, 0, 0), axis=(0, 1, 0))
    b.rotational_spring_damper("spring", "pin", stiffness=stiffness, damping=damping, free_angle=-theta0)
    if gravity:
        b.gravity(G)
    return b.build(), m * d * G, J + m * d * d


def _swing(r):
    """Angle from the downward vertical about +e2."""
    return np.arctan2(-r.q[:, 0], -r.q[:, 2])


def test_compound_pendulum_with_torsion_spring_frequency():
    """Small oscillations: w^2 = (k + m g d) / I_O; amplitude 1e-3 keeps the sin nonlinearity
    (relative frequency shift ~ theta0^2 / 16) far below the tolerance."""
    th0, k = 1e-3, 4.0
    model, mgd, IO = _pendulum(th0, k)
    r = simulate(model, t_end=3.0, options=TIGHT)
    w = np.sqrt((k + mgd) / IO)
    assert np.max(np.abs(_swing(r) - th0 * np.cos(w * r.t))) < 1e-5 * th0


def test_torsion_spring_without_gravity_is_harmonic_at_any_amplitude():
    """Without gravity I_O theta'' = -k theta exactly: theta = theta0 cos(sqrt(k/I_O) t), theta0 = 2."""
    th0, k = 2.0, 4.0
    model, _, IO = _pendulum(th0, k, gravity=False)
    r = simulate(model, t_end=1.0, options=TIGHT)
    assert np.max(np.abs(_swing(r) - th0 * np.cos(np.sqrt(k / IO) * r.t))) < 1e-8


def test_torsion_damper_decay():
    """A damped torsion pendulum without gravity: I theta'' + c theta' + k theta = 0, the underdamped
    closed form theta0 e^(-zeta w t) (cos(wd t) + zeta w / wd sin(wd t))."""
    th0, k, c = 0.5, 4.0, 0.05
    model, _, IO = _pendulum(th0, k, gravity=False, damping=c)
    r = simulate(model, t_end=1.0, options=TIGHT)
    w = np.sqrt(k / IO)
    z = c / (2 * np.sqrt(k * IO))
    wd = w * np.sqrt(1 - z * z)
    exact = th0 * np.exp(-z * w * r.t) * (np.cos(wd * r.t) + z * w / wd * np.sin(wd * r.t))
    assert np.max(np.abs(_swing(r) - exact)) < 1e-8


def _driven_rod_builder(m=1.5, L=0.8, om=2.0):
    """A uniform rod (d1 along it) on a revolute pair about e2 at the origin, centre of mass at (L/2, 0, 0)."""
    d, J = L / 2, m * L ** 2 / 12
    b = SpatialModelBuilder("driven-rod")
    b.add_body("rod", mass=m, inertia=[1e-4, J, J], position=(d, 0, 0))
    b.revolute("pin", None, "rod", point=(0, 0, 0), axis=(0, 1, 0))
    return b, m, d, om


def _driven_rod():
    """The rod driven at the constant rate om from theta = 0 (horizontal), under gravity."""
    b, m, d, om = _driven_rod_builder()
    b.driver("pin", Motion.constant_rate(0.0, om))
    b.gravity(G)
    return b.build(), m, d, om


def test_rod_driven_at_constant_rate_needs_m_g_L_half_cos_theta():
    """Rod about a horizontal axis at constant rate: the driver multiplier (the torque on the rod is
    -lam n) equals m g (L/2) cos theta, theta from the horizontal; the motion is prescribed exactly."""
    b, m, d, om = _driven_rod_builder()
    assert b.driver("pin", Motion.constant_rate(0.0, om)) == "pin-driver"
    b.gravity(G)
    r = simulate(b.build(), t_end=2.0, options=TIGHT)
    th = om * r.t
    assert np.max(np.abs(r.q[:, 0] - d * np.cos(th))) < 1e-12
    assert np.max(np.abs(r.q[:, 2] + d * np.sin(th))) < 1e-12
    lam = r.column("multipliers", "pin-driver.theta")
    assert np.max(np.abs(lam - m * G * d * np.cos(th))) < 1e-9 * m * G * d


def test_slide_driver_moves_the_slider_and_needs_m_g_sin_alpha():
    """A block on an incline (P pair along a) driven at u = u0 + 0.3 t^2: the multiplier of the slide
    row is the axial force m (u'' - g . a) that the driver exerts along -a (dPhi/du = 1)."""
    m = 2.0
    a = np.array([np.cos(0.4), 0.0, np.sin(0.4)])
    b = SpatialModelBuilder("incline")
    b.add_body("block", mass=m, inertia=[0.1, 0.1, 0.1], position=(0.2, 0, 0))
    b.prismatic("rail", None, "block", point=(0, 0, 0), point2=(0.2, 0, 0), axis=a)
    u0 = 0.2 * np.cos(0.4)
    b.driver("rail", Motion.polynomial([u0, 0.0, 0.3]))
    b.gravity(G)
    r = simulate(b.build(), t_end=1.0, options=TIGHT)
    u = r.q[:, :3] @ a
    assert np.max(np.abs(u - (u0 + 0.3 * r.t ** 2))) < 1e-12
    lam = r.column("multipliers", "rail-driver.u")
    assert np.max(np.abs(lam - (-m * (0.6 + G * np.sin(0.4))))) < 1e-9


def test_spatial_slider_crank_follows_its_closed_form():
    """Slider y(theta) = r sin theta + sqrt(l^2 - h^2 - (r cos theta - c)^2), theta = 2 pi t."""
    model = spatial_slider_crank()
    r = simulate(model, t_end=1.0, options=RunOptions(rtol=1e-9, atol=1e-11))
    y = r.column("q", "slider.y")
    assert np.max(np.abs(y - slider_position(SLIDER_CRANK["rate"] * r.t))) < 1e-9
    crank = r.column("q", "crank.x") + 1j * r.column("q", "crank.y")
    assert np.max(np.abs(crank - SLIDER_CRANK["r"] / 2 * np.exp(1j * SLIDER_CRANK["rate"] * r.t))) < 1e-12


def test_heavy_top_torque_about_the_vertical_changes_L_z_by_its_integral():
    """Gravity and the pivot have no moment about the vertical through the pivot: with an applied
    torque tau_z(t) = a sin(5 t), L_z(t) = L_z(0) + a/5 (1 - cos 5 t) for any motion of the top."""
    amp, tilt, L, spin = 0.05, 0.5, 0.1, 20.0
    c, s = np.cos(tilt), np.sin(tilt)
    D = np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
    b = SpatialModelBuilder("driven-top")
    b.add_body("top", mass=1.0, inertia=[0.01, 0.01, 0.004], position=L * D[:, 2], directors=D,
               velocity=np.cross(spin * D[:, 2], L * D[:, 2]), omega=spin * D[:, 2])
    b.spherical("pivot", None, "top", point=(0, 0, 0))
    b.torque("top", lambda t, q, v: np.array([0.0, 0.0, amp * np.sin(5 * t)]), name="motor")
    b.gravity(G)
    model = b.build()
    bodies = model.constraints[0]
    r = simulate(model, t_end=0.5, options=RunOptions(rtol=1e-9, atol=1e-11))
    Lz = np.array([bodies.momenta(q, v)[1][2] for q, v in zip(r.q, r.v)])
    assert np.max(np.abs(Lz - Lz[0] - amp / 5 * (1 - np.cos(5 * r.t)))) < 1e-8 * amp


def test_force_at_a_body_point_spins_a_free_body():
    """Free body at rest, no gravity, force f0 d1 at the body point X = a d2: moment about the centre
    of mass a d2 x f0 d1 = -a f0 d3, a principal axis, so omega = -a f0 t / J3 d3 and the centre
    of mass accelerates along d1(t), |v_phi| <= f0 t / m."""
    m, J3, f0, a = 2.0, 0.3, 1.5, 0.2
    b = SpatialModelBuilder("free")
    b.add_body("box", mass=m, inertia=[0.2, 0.25, J3], position=(0, 0, 0))
    b.force("box", lambda t, q, v: f0 * q[3:6], point=(0, a, 0), name="push")
    r = simulate(b.build(), t_end=1.0, options=TIGHT)
    w = _omega(r.q, r.v)
    assert np.max(np.abs(w - np.outer(-a * f0 * r.t / J3, r.q[:, 9:12][0]))) < 1e-9
    psi = -a * f0 * r.t ** 2 / (2 * J3)
    assert np.max(np.abs(r.q[:, 3:6] - np.column_stack([np.cos(psi), np.sin(psi), 0 * psi]))) < 1e-9


def _two_bodies():
    b = SpatialModelBuilder("bad")
    b.add_body("a", mass=1.0, inertia=[1, 1, 1], position=(0, 0, 0))
    b.spherical("ball", None, "a", point=(0, 0, 1))
    return b


def test_bad_elements_name_themselves():
    b = _two_bodies()
    with pytest.raises(ModelError, match="rotational spring-damper 'k'.*'ball' is a S pair"):
        b.rotational_spring_damper("k", "ball", stiffness=1.0)
    with pytest.raises(ModelError, match="driver on 'ball'.*a S pair"):
        b.driver("ball", Motion.constant_rate(0, 1))
    with pytest.raises(ModelError, match="no joint 'nope'"):
        b.rotational_spring_damper("k", "nope", stiffness=1.0)
    b.force("a", lambda t, q, v: np.zeros(2), name="wind")
    with pytest.raises(ModelError, match="force 'wind'.*3 finite global components"):
        b.build()
    b = _two_bodies()
    b.spring_damper("s", None, "a", point1=(0, 0, 2), point2=(0, 0, 0), stiffness=-1.0)
    with pytest.raises(ModelError, match="spring-damper 's'.*non-negative"):
        b.build()
    b = _two_bodies()
    b.add_body("c", mass=1.0, inertia=[1, 1, 1], position=(0, 0, 3))
    b.cylindrical("tube", "a", "c", point=(0, 0, 2), axis=(0, 0, 1))
    with pytest.raises(ModelError, match="driver on 'tube' \\(C pair\\).*one of theta, u"):
        b.driver("tube", Motion.constant_rate(0, 1))
    b.driver("tube", Motion.constant_rate(1.0, 0.5), coordinate="u")
    b.hold("a.x", "nope.z")
    with pytest.raises(ModelError, match="cannot hold nope.z"):
        b.build()


BAD_FILES = {
    "torsion_on_ball.py": "b.rotational_spring_damper('k', 'ball', stiffness=1.0)",
    "driver_on_ball.py": "b.driver('ball', Motion.constant_rate(0, 1))",
    "bad_force.py": "b.force('a', lambda t, q, v: np.zeros(4), name='wind')",
}
MESSAGES = {"torsion_on_ball.py": "rotational spring-damper 'k'", "driver_on_ball.py": "driver on 'ball'",
            "bad_force.py": "force 'wind'"}


@pytest.mark.parametrize("name", list(BAD_FILES))
def test_bad_elements_exit_2_from_the_cli(tmp_path, name):
    from click.testing import CliRunner

    from multibody.cli import main

    path = tmp_path / name
    path.write_text("import numpy as np\nfrom multibody import Motion, SpatialModelBuilder\n"
                    "def build():\n    b = SpatialModelBuilder('bad')\n"
                    "    b.add_body('a', mass=1.0, inertia=[1, 1, 1], position=(0, 0, 0))\n"
                    "    b.spherical('ball', None, 'a', point=(0, 0, 1))\n"
                    f"    {BAD_FILES[name]}\n    return b.build()\n")
    res = CliRunner().invoke(main, ["run", str(path), "--out", str(tmp_path / "x.h5")])
    assert res.exit_code == 2, res.output
    assert MESSAGES[name] in res.output and "Traceback" not in res.output
    assert not (tmp_path / "x.h5").exists()


# ----------------------------------------------------------------------------- energy-momentum scheme
def _spring_body(damping=0.0, torsion=False):
    """A free box hanging on an off-centre spring-damper from the ground (a spinning elastic
    pendulum); with ``torsion`` a second box on a revolute pair of the first with a torsion spring."""
    b = SpatialModelBuilder("spring-body")
    b.add_body("box", mass=2.0, inertia=[0.05, 0.08, 0.1], position=(0.3, 0.1, -0.8), velocity=(0.5, -0.3, 0.2),
               omega=(1.0, -2.0, 0.5))
    b.spring_damper("s", None, "box", point1=(0, 0, 0), point2=(0.35, 0.1, -0.7), stiffness=80.0, damping=damping,
                    free_length=0.6)
    if torsion:
        b.add_body("flap", mass=0.5, inertia=[0.01, 0.02, 0.02], position=(0.3, 0.1, -1.0), omega=(1.0, 3.0, 0.5))
        b.revolute("hinge", "box", "flap", point=(0.3, 0.1, -0.9), axis=(0, 1, 0))
        b.rotational_spring_damper("t", "hinge", stiffness=2.0, damping=damping / 10, free_angle=0.4)
    b.gravity(G)
    return b.build()


def _em(model, scheme, t_end, dt=0.01):
    return simulate(model, t_end=t_end, formulation=scheme,
                    options=RunOptions(integrator="energy-momentum", step=dt))


@pytest.mark.parametrize("scheme", ["reduced", "constrained"])
def test_energy_momentum_conserves_energy_with_springs(scheme):
    """Discrete gradients of gravity, the spring (l^2 quadratic in q) and the torsion spring (Gonzalez):
    E_{n+1} = E_n to round-off (integrate.discrete_forces), here over 300 steps."""
    r = _em(_spring_body(torsion=True), scheme, 3.0)
    assert r.summary["energy_drift_rel"] < 1e-12


@pytest.mark.parametrize("scheme", ["reduced", "constrained"])
def test_energy_momentum_conserves_energy_on_a_closed_loop_with_a_spring(scheme):
    """RSSR linkage (closure rows of eq. 190 in the reduced scheme) with an undamped spring: 100 steps."""
    from multibody.models.spatial_mechanisms import rssr_spring
    r = _em(rssr_spring(damping=0.0), scheme, 0.5, 0.005)
    assert r.summary["energy_drift_rel"] < 1e-12


@pytest.mark.slow
def test_energy_momentum_conserves_energy_over_10_4_steps():
    r = _em(_spring_body(torsion=True), "reduced", 100.0)
    assert r.summary["energy_drift_rel"] < 1e-12


def _lengths(q):
    """Spring length |p2 - p1| of _spring_body from the stored coordinates (eq. 16: p = phi + X_I d_I)."""
    X = np.array([0.05, 0.0, 0.1])        # body-frame point (directors = identity at the start)
    p = q[:, :3] + sum(X[i] * q[:, 3 + 3 * i:6 + 3 * i] for i in range(3))
    return np.linalg.norm(p, axis=1)


@pytest.mark.parametrize("scheme", ["reduced", "constrained"])
def test_energy_momentum_dampers_dissipate_their_discrete_work(scheme):
    """E_{n+1} - E_n = -c (l_{n+1} - l_n)^2 / dt per step (the torsion damper's share is computed from
    the hinge angle the same way), to round-off relative to E."""
    c, dt = 1.5, 0.01
    model = _spring_body(damping=c, torsion=True)
    r = _em(model, scheme, 1.0, dt)
    E = r["energy"][:, 2]
    theta = np.unwrap(r.column("joints", "hinge.theta"))
    work = -c * np.diff(_lengths(r.q)) ** 2 / dt - c / 10 * np.diff(theta) ** 2 / dt
    assert np.max(np.abs(np.diff(E) - work)) < 1e-12 * np.max(np.abs(E))
    assert np.all(work <= 0) and E[-1] < E[0]


def test_energy_momentum_and_dopri5_give_the_same_motion():
    """The scheme is second order (paper 004 Sect. 2.2, the mid-point rule): against dopri5 at rtol
    1e-10 its error over 0.2 s falls by 4 when dt halves, and is below 1e-4 at dt = 2e-3."""
    model = _spring_body(damping=0.5, torsion=True)
    errors = []
    for dt in (4e-3, 2e-3):
        em = _em(model, "constrained", 0.2, dt)
        ref = simulate(model, t_end=0.2, options=RunOptions(rtol=1e-10, atol=1e-12, output_times=tuple(em.t)))
        errors.append(np.max(np.abs(em.q - ref.q)))
    assert 3.5 < errors[0] / errors[1] < 4.5 and errors[1] < 1e-4


def test_physical_reactions_of_a_driven_rod():
    """Rod at constant rate about e2 (as above): the pin's force on the rod is m (a - g) with the
    centripetal a = -w^2 phi; the driver's moment on the rod about e2 is -m g d cos theta and the pin's
    moment about the centre of mass, (-phi) x m g e3, cancels it (J theta'' = 0); the ground takes -F."""
    model, m, d, om = _driven_rod()
    r = simulate(model, t_end=1.0, options=TIGHT)
    th = om * r.t
    F = np.column_stack([r.column("reactions", f"pin.on_rod.F{c}") for c in "xyz"])
    phi = d * np.column_stack([np.cos(th), 0 * th, -np.sin(th)])
    scale = m * G
    assert np.max(np.abs(F - m * (-om ** 2 * phi + [0, 0, G]))) < 1e-10 * scale
    assert np.max(np.abs(r.column("reactions", "pin-driver.on_rod.My") + m * G * d * np.cos(th))) < 1e-10 * scale
    assert np.max(np.abs(r.column("reactions", "pin.on_rod.My") - m * G * d * np.cos(th))) < 1e-10 * scale
    assert np.max(np.abs(r.column("reactions", "pin.on_ground.Fz") + F[:, 2])) < 1e-12 * scale
    # joint frame {m1, m2, n} = {e1, -e3, e2} of the ground pin (director.complement): the driver's
    # effort is M_n = -m g d cos theta, the pin's M_n = My, F_m1 = F . e1, F_m2 = -F . e3
    assert np.max(np.abs(r.column("reactions", "pin-driver.on_rod.M_n") + m * G * d * np.cos(th))) < 1e-10 * scale
    assert np.max(np.abs(r.column("reactions", "pin.on_rod.M_n") - m * G * d * np.cos(th))) < 1e-10 * scale
    assert np.max(np.abs(r.column("reactions", "pin.on_rod.F_m1") - F[:, 0])) < 1e-12 * scale
    assert np.max(np.abs(r.column("reactions", "pin.on_rod.F_m2") + F[:, 2])) < 1e-12 * scale
    assert np.all(r.column("reactions_unique", "pin.on_rod.Fx") == 1.0)


def test_reduced_energy_momentum_rejects_drivers_by_name():
    from multibody.errors import MultibodyError
    with pytest.raises(MultibodyError, match="reduced energy-momentum scheme does not take drivers.*crank-pin-driver"):
        _em(spatial_slider_crank(), "reduced", 0.02)


def test_constrained_energy_momentum_with_a_driver():
    """The driven rod under the constrained scheme: theta = w t_n exactly at every step (Phi(q_{n+1},
    t_{n+1}) = 0), E_{n+1} - E_n = -lam G(q_mid, t_mid) dq (the driver's discrete work,
    integrate.discrete_forces) to round-off. The discrete multiplier alternates by O(dt) about the
    driver torque (the mid-point rule on the index-3 equations does not damp that mode); the mean of
    two consecutive ones tends to m g d cos(w t_n) at second order."""
    from multibody.assembly import Workspace

    model, m, d, om = _driven_rod()
    ws, row = Workspace(model), model.constraint_labels.index("pin-driver.theta")
    errors = []
    for dt in (0.02, 0.01):
        r = _em(model, "constrained", 0.6, dt)
        assert np.max(np.abs(np.unwrap(np.arctan2(-r.q[:, 2], r.q[:, 0])) - om * r.t)) < 1e-12
        lam = r.column("multipliers", "pin-driver.theta")[1:]
        tm = r.t[1:] - dt / 2
        E = r["energy"][:, 2]
        work = [-lam[k] * ws.constraints(tm[k], 0.5 * (r.q[k] + r.q[k + 1]), np.zeros(model.n))[1][row]
                @ (r.q[k + 1] - r.q[k]) for k in range(len(tm))]
        assert np.max(np.abs(np.diff(E) - work)) < 1e-12 * np.max(np.abs(E))
        errors.append(np.max(np.abs(0.5 * (lam[:-1] + lam[1:]) - m * G * d * np.cos(om * r.t[1:-1]))))
    assert 3.5 < errors[0] / errors[1] < 4.5


def test_locking_a_coaxial_revolute_pair_conserves_angular_momentum():
    """Two discs on a common vertical axis (A on the ground, B on A) spinning at w_A, w_B; locking the
    pair A-B at t = 0.5 (paper 002 eq. 24, a momentum-consistent jump): both turn at
    (J_A w_A + J_B w_B) / (J_A + J_B), the kinetic energy drops by J_A J_B (w_A - w_B)^2 / (2 (J_A + J_B))
    and the lock's angular impulse on B is J_B (w+ - w_B) (multiplier with the torque -lam n)."""
    from multibody.simulation.spatial_lock import lock_pair_at

    JA, JB, wA, wB = 0.2, 0.05, 3.0, -10.0
    b = SpatialModelBuilder("coaxial")
    b.add_body("A", mass=1.0, inertia=[0.15, 0.15, JA], position=(0, 0, 0.1), omega=(0, 0, wA))
    b.add_body("B", mass=0.5, inertia=[0.03, 0.03, JB], position=(0, 0, 0.3), omega=(0, 0, wB))
    b.revolute("a", None, "A", point=(0, 0, 0), axis=(0, 0, 1))
    b.revolute("ab", "A", "B", point=(0, 0, 0.2), axis=(0, 0, 1))
    b.gravity(G)
    r = simulate(b.build(), t_end=0.8, events=(lock_pair_at(0.5, "ab"),), options=TIGHT)
    w_plus = (JA * wA + JB * wB) / (JA + JB)
    after = r.t > 0.5
    for body in (0, 1):
        assert np.max(np.abs(_omega(r.q[after], r.v[after], body)[:, 2] - w_plus)) < 1e-8
    event = r.events[0]
    assert event["activated"] == ["lock-ab.theta"]
    assert event["kinetic_energy_of_jump"] == pytest.approx(JA * JB * (wA - wB) ** 2 / (2 * (JA + JB)), rel=1e-8)
    assert -event["impulse"]["lock-ab.theta"] == pytest.approx(JB * (w_plus - wB), rel=1e-8)


def test_lock_names_a_missing_pair():
    from multibody.errors import MultibodyError
    from multibody.simulation.spatial_lock import lock_pair_at

    with pytest.raises(MultibodyError, match="no R, C or P pair crank-rod"):
        simulate(spatial_slider_crank(), t_end=0.1, events=(lock_pair_at(0.05, "crank-rod"),))


def test_gimbal_lock_model():
    """Built-in gimbal-lock: before the lock the gimbal turns at Omega and the spin s is steady
    ((J_gz + J_perp) psi'' = 0 for a disc symmetric about its axis), the spin-axis pair carries the
    gyroscopic moment J_x s Omega; the lock stops the gimbal, keeps the spin (no impulse about the disc
    axis) and takes 1/2 (J_gz + J_perp) Omega^2 of kinetic energy (paper 002 eq. 24)."""
    from multibody.models import MODELS
    from multibody.models.spatial_mechanisms import GIMBAL as d

    entry = MODELS["gimbal-lock"]
    r = simulate(entry.factory(), t_end=0.6, events=entry.events, options=RunOptions(rtol=1e-9, atol=1e-11))
    Jx, Jp = d["mass"] * d["radius"] ** 2 / 2, d["mass"] * (3 * d["radius"] ** 2 + d["thickness"] ** 2) / 12
    before, after = r.t < d["t_lock"], r.t > d["t_lock"]
    w_gimbal, w_disc = _omega(r.q, r.v, 0), _omega(r.q, r.v, 1)
    spin = np.einsum("ki,ki->k", w_disc, r.q[:, 15:18])             # omega . d1 of the disc
    tol = 1e-7 * d["spin"]     # global error of rtol 1e-9 over ~5 revolutions of the disc, on rates of size s
    assert np.max(np.abs(w_gimbal[before, 2] - d["rate"])) < tol and np.max(np.abs(w_gimbal[after])) < tol
    assert np.max(np.abs(spin - d["spin"])) < tol
    M = np.column_stack([r.column("reactions", f"spin-axis.on_disc.M{c}") for c in "xyz"])
    assert np.max(np.abs(np.linalg.norm(M[before], axis=1) - Jx * d["spin"] * d["rate"])) < 1e-7
    loss = r.events[0]["kinetic_energy_of_jump"]
    assert loss == pytest.approx(0.5 * (d["gimbal_J"][2] + Jp) * d["rate"] ** 2, rel=1e-6)


def test_ball_rolling_down_an_incline_user_constraint_and_pfaffian():
    """A solid ball (J = 2/5 m R^2) on an incline: user constraint n . phi = R and the no-slip Pfaffian
    rows t_i . (v_phi - R omega x n) = 0 with omega = 1/2 sum d_I x v_I, i.e. Psi = [t_i, 1/2 c_i x d_I],
    c_i = -R n x t_i; from rest it rolls down at a = 5/7 g sin(alpha) (classical closed form)."""
    m, R, alpha = 1.2, 0.05, 0.3
    t1, t2 = np.array([np.cos(alpha), 0, -np.sin(alpha)]), np.array([0.0, 1.0, 0.0])
    nrm = np.array([np.sin(alpha), 0, np.cos(alpha)])
    J = 0.4 * m * R ** 2

    def psi(q, t):
        rows = []
        for tt in (t1, t2):
            c = -R * np.cross(nrm, tt)
            rows.append(np.concatenate([tt] + [0.5 * np.cross(c, q[3 + 3 * i:6 + 3 * i]) for i in range(3)]))
        return np.array(rows)

    b = SpatialModelBuilder("rolling-ball")
    b.add_body("ball", mass=m, inertia=[J, J, J], position=R * nrm)
    b.constraint("plane", lambda q, t: np.array([nrm @ q[:3] - R]))
    b.pfaffian("no-slip", psi, rows=2)
    b.gravity(G)
    r = simulate(b.build(), t_end=0.3, options=RunOptions(rtol=1e-9, atol=1e-11))
    s = (r.q[:, :3] - R * nrm) @ t1
    assert np.max(np.abs(s - 5 / 14 * G * np.sin(alpha) * r.t ** 2)) < 1e-8
    assert np.max(np.abs(r.q[:, :3] @ t2)) < 1e-12


def test_cylindrical_pair_torsion_spring_and_free_fall():
    """A sleeve on a vertical C pair with a torsion spring: it falls freely, z = z0 - g t^2/2, and turns
    harmonically, theta = theta0 cos(sqrt(k / J_z) t) (the two motions decouple)."""
    Jz, k, th0 = 0.02, 0.5, 0.7
    b = SpatialModelBuilder("sleeve")
    b.add_body("sleeve", mass=0.7, inertia=[0.03, 0.03, Jz], position=(0, 0, 1.0))
    b.cylindrical("post", None, "sleeve", point=(0, 0, 0), point2=(0, 0, 1.0), axis=(0, 0, 1))
    b.rotational_spring_damper("coil", "post", stiffness=k, free_angle=-th0)
    b.gravity(G)
    r = simulate(b.build(), t_end=1.0, options=TIGHT)
    assert np.max(np.abs(r.q[:, 2] - (1.0 - G * r.t ** 2 / 2))) < 1e-9
    theta = np.arctan2(r.q[:, 4], r.q[:, 3])            # d1 turns about e3 from e1
    assert np.max(np.abs(theta - th0 * np.cos(np.sqrt(k / Jz) * r.t) + th0)) < 1e-8


def test_motors_on_an_imported_robot_match_pinocchio_inverse_dynamics(tmp_path):
    """A model file drives both joints of the URDF double pendulum at constant rates (file key
    [[drivers]], issue 23); the driver efforts -lam (torque on the child about the joint axis, with
    dPhi/dtheta = 1) equal Pinocchio's recursive Newton-Euler torques tau = rnea(q, q', 0)
    (Featherstone 2008, ch. 5) along the prescribed motion."""
    pin = pytest.importorskip("pinocchio")
    from pathlib import Path

    from multibody.io.model_file import load_model_file

    urdf = Path(__file__).parent / "data" / "two_link.urdf"
    (tmp_path / "robot.urdf").write_text(urdf.read_text())
    w1, w2 = 1.0, -2.0
    path = tmp_path / "driven.toml"
    path.write_text('format = "multibody-model/1"\nname = "driven"\nkind = "spatial"\nurdf = "robot.urdf"\n\n'
                    f'[[drivers]]\njoint = "shoulder"\nmotion = {{ type = "constant-rate", start = 0.0, rate = {w1} }}\n\n'
                    f'[[drivers]]\njoint = "elbow"\nmotion = {{ type = "constant-rate", start = 0.0, rate = {w2} }}\n')
    model = load_model_file(path).model
    r = simulate(model, t_end=0.5, options=TIGHT)
    mp = pin.buildModelFromUrdf(str(urdf))
    data = mp.createData()
    tau = np.array([pin.rnea(mp, data, np.array([w1 * t, np.cos(w2 * t), np.sin(w2 * t)]), np.array([w1, w2]),
                             np.zeros(2)) for t in r.t])
    effort = -np.column_stack([r.column("multipliers", f"{j}-driver.theta") for j in ("shoulder", "elbow")])
    np.testing.assert_allclose(effort, tau, rtol=0, atol=1e-8 * np.abs(tau).max())


def test_model_file_rotational_spring_equals_the_builder(tmp_path):
    """[[rotational_springs]] builds the builder's element: the same generalized forces and potential at
    a state off the start; a driver on a spherical pair is refused naming its place in the file."""
    from multibody.assembly import Workspace
    from multibody.errors import MultibodyError
    from multibody.io.model_file import load_model_file

    th0, k = 0.3, 4.0
    built, _, _ = _pendulum(th0, k, damping=0.2)
    q0 = built.q0
    D = q0[3:12].reshape(3, 3).T
    path = tmp_path / "torsion.toml"
    path.write_text('format = "multibody-model/1"\nname = "torsion-pendulum"\nkind = "spatial"\n'
                    'gravity = [0.0, 0.0, -9.81]\n\n[[bodies]]\nname = "rod"\nmass = 1.5\n'
                    f'inertia = [0.08, 0.08, 0.0001]\nposition = {q0[:3].tolist()}\ndirectors = {D.T.tolist()}\n\n'
                    '[[joints]]\nname = "pin"\ntype = "revolute"\nbodies = ["ground", "rod"]\npoint = [0.0, 0.0, 0.0]\n'
                    'axis = [0.0, 1.0, 0.0]\n\n'
                    f'[[rotational_springs]]\nname = "spring"\njoint = "pin"\nstiffness = {k}\ndamping = 0.2\n'
                    f'free_angle = {-th0}\n')
    loaded = load_model_file(path).model
    rng = np.random.default_rng(3)
    q, v = q0 + 0.05 * rng.normal(size=12), rng.normal(size=12)
    for model in (built, loaded):
        assert model.forces[1].names == ("spring",)
    np.testing.assert_allclose(Workspace(loaded).forces(0.0, q, v), Workspace(built).forces(0.0, q, v), atol=1e-14)
    assert Workspace(loaded).potential(0.0, q) == pytest.approx(Workspace(built).potential(0.0, q), rel=1e-14)
    path.write_text(path.read_text().replace('type = "revolute"', 'type = "spherical"').replace(
        "[[rotational_springs]]", '[[drivers]]\njoint = "pin"\nmotion = { type = "polynomial", coefficients = [0.0] }'
        '\n\n[[rotational_springs]]'))
    with pytest.raises(MultibodyError, match=r"drivers\[0\]\.joint.*unknown revolute or prismatic or cylindrical"):
        load_model_file(path)


@pytest.mark.parametrize("scheme", ["reduced", "constrained"])
def test_energy_momentum_torque_work_balance(scheme):
    """A torque tau(t) about the vertical on the top (as above): the scheme's energy change per step is
    the mid-point work of the load, Q(t_mid, q_mid, dq/dt) . dq (integrate.discrete_forces), to
    round-off; L_z follows L_z(0) + a/5 (1 - cos 5 t) up to the scheme's O(dt^2) error."""
    amp, tilt, L, spin = 0.05, 0.5, 0.1, 20.0
    c, s = np.cos(tilt), np.sin(tilt)
    D = np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
    b = SpatialModelBuilder("driven-top")
    b.add_body("top", mass=1.0, inertia=[0.01, 0.01, 0.004], position=L * D[:, 2], directors=D,
               velocity=np.cross(spin * D[:, 2], L * D[:, 2]), omega=spin * D[:, 2])
    b.spherical("pivot", None, "top", point=(0, 0, 0))
    b.torque("top", lambda t, q, v: np.array([0.0, 0.0, amp * np.sin(5 * t)]), name="motor")
    b.gravity(G)
    model = b.build()
    dt = 2e-3
    r = _em(model, scheme, 0.2, dt)
    loads = model.forces[1]
    E = r["energy"][:, 2]
    work = [loads.discrete(np.append(q0, 0), np.append(q1, 0), dt, t + dt / 2)[:-1] @ (q1 - q0)
            for t, q0, q1 in zip(r.t[:-1], r.q[:-1], r.q[1:])]
    assert np.max(np.abs(np.diff(E) - work)) < 1e-12 * np.max(np.abs(E))
    Lz = np.array([model.constraints[0].momenta(q, v)[1][2] for q, v in zip(r.q, r.v)])
    assert np.max(np.abs(Lz - Lz[0] - amp / 5 * (1 - np.cos(5 * r.t)))) < (spin * dt) ** 2 * amp   # O(dt^2) bound


def test_driver_rows_jacobian_phi_t_and_gamma_are_exact():
    """Angle and slide driver rows (director_drivers): Phi_q and Phi_t equal central differences of Phi,
    and gamma = -d^2/ds^2 Phi(q + s v, t + s) the central difference of the first derivative A v + Phi_t
    (truncation ~h^2 = 1e-10), at random states, with harmonic, polynomial and constant-rate motions."""
    b = SpatialModelBuilder("drivers")
    b.add_body("a", mass=1.0, inertia=[0.1, 0.2, 0.25], position=(0.2, 0.1, 0))
    b.add_body("c", mass=1.0, inertia=[0.1, 0.2, 0.25], position=(0.2, 0.1, -0.5))
    b.revolute("r", None, "a", point=(0, 0, 0), axis=(0.3, 1, 0.2))
    b.cylindrical("cyl", "a", "c", point=(0.2, 0.1, -0.2), axis=(0.1, 0.2, 1))
    b.driver("r", Motion.harmonic(0.4, 3.0, phase=0.2))
    b.driver("cyl", Motion.polynomial([0.1, 0.5, -0.2]), coordinate="u")
    b.driver("cyl", Motion.constant_rate(0.2, 1.5), coordinate="theta", name="spin")
    model = b.build()
    n, h = model.n, 1e-5
    groups = [g for g in model.constraints if g.motions]
    assert {type(g).__name__ for g in groups} == {"AngleDriver", "SlideDriver"}

    def ev(g, t, q, v=np.zeros(n)):
        return g.evaluate(t, np.append(q, 0), np.append(v, 0))

    def jac(g, t, q):
        A = np.zeros((g.rows, n + 1))
        np.add.at(A, (np.arange(g.rows)[:, None], g.cols), ev(g, t, q).jac)
        return A[:, :-1]

    rng = np.random.default_rng(5)
    for _ in range(3):
        q, v, t = model.q0 + 0.2 * rng.normal(size=n), rng.normal(size=n), rng.uniform(0, 2)
        for g in groups:
            val = ev(g, t, q, v)
            dphi = np.array([(ev(g, t, q + h * e).phi - ev(g, t, q - h * e).phi) / (2 * h) for e in np.eye(n)]).T
            assert np.allclose(jac(g, t, q), dphi, atol=1e-8)
            assert np.allclose(val.phi_t, (ev(g, t + h, q).phi - ev(g, t - h, q).phi) / (2 * h), atol=1e-8)
            first = lambda s: jac(g, t + s, q + s * v) @ v + ev(g, t + s, q + s * v).phi_t  # noqa: E731
            assert np.allclose(val.gamma, -(first(h) - first(-h)) / (2 * h), atol=1e-7 * (1 + np.abs(val.gamma).max()))
