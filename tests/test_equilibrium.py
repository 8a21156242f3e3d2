"""Static equilibrium, linearisation and modes (analysis.equilibrium; issue 21) against closed forms."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from multibody import ModelBuilder, RunOptions, simulate
from multibody.analysis.equilibrium import equilibrium
from multibody.analysis.linearize import linearize, modes
from multibody.cli import main
from multibody.errors import MultibodyError
from multibody.models import MODELS

G, L = 9.81, 1.0


def double_pendulum(duplicate: bool = False):
    """Two unit point masses on massless rods of length L (distance joints), released off the vertical."""
    mb = ModelBuilder("double-pendulum", gravity=(0.0, -G))
    mb.add_point_mass("a", mass=1.0, position=(0.1, -1.0))
    mb.add_point_mass("b", mass=1.0, position=(0.3, -2.0))
    mb.distance("r1", "ground", "a", at_a=(0.0, 0.0), at_b=(0.1, -1.0), length=L)
    mb.distance("r2", "a", "b", at_a=(0.1, -1.0), at_b=(0.3, -2.0), length=L)
    if duplicate:
        mb.distance("r2-copy", "a", "b", at_a=(0.1, -1.0), at_b=(0.3, -2.0), length=L)
    return mb.build()


def test_pendulum_hangs_and_swings_at_sqrt_g_over_l():
    """The point-mass pendulum of paper 000 eq. 29 (released horizontally, where Newton alone stalls: lambda =
    0 and no stiffness) hangs at (0, -l), stable, with w = sqrt(g / l)."""
    model = MODELS["pendulum"].factory()
    eq = equilibrium(model)
    np.testing.assert_allclose(eq.q, [0.0, -1.0], atol=1e-10)
    assert eq.stable
    md = modes(model, eq)
    np.testing.assert_allclose(md.frequencies_hz, [np.sqrt(G / 1.0) / (2 * np.pi)], rtol=1e-8)


@pytest.mark.parametrize("duplicate", [False, True])
def test_double_pendulum_frequencies_and_a_duplicated_rod(duplicate):
    """w^2 = (g / l)(2 -+ sqrt 2) (two equal masses, equal lengths: the classic closed form in minimal
    coordinates); a duplicated rod changes no frequency, and its reaction and its twin's are flagged not
    unique (paper 003 eq. 27) while the other rod's stays unique."""
    model = double_pendulum(duplicate)
    eq = equilibrium(model)
    np.testing.assert_allclose(eq.q, [0.0, -1.0, 0.0, -2.0], atol=1e-10)
    md = modes(model, eq)
    w = 2 * np.pi * md.frequencies_hz
    np.testing.assert_allclose(w, np.sqrt(G / L * np.array([2 - np.sqrt(2), 2 + np.sqrt(2)])), rtol=1e-8)
    # mode shapes: in the rod angles theta2 / theta1 = +sqrt 2 (lower), -sqrt 2 (upper); the horizontal
    # displacements x_a = l theta1, x_b = l (theta1 + theta2) give x_b / x_a = 1 + sqrt 2 and 1 - sqrt 2
    xa, xb = md.shapes[0], md.shapes[2]
    np.testing.assert_allclose(xb / xa, [1 + np.sqrt(2), 1 - np.sqrt(2)], rtol=1e-8)
    assert eq.unique["r1"]
    assert eq.unique["r2"] is (not duplicate)


def test_slider_crank_holding_torque_by_virtual_work():
    """Crank (1 kg, centre 0.1 m from O) and rod (2 kg, centre at half the crank tip's height) of the slider-
    crank: V(theta) = g (1 * 0.1 + 2 * 0.1) sin theta, so the driver holds it with tau = dV/dtheta =
    0.3 g cos theta (virtual work), 1.4715 N m at theta = 60 degrees."""
    eq = equilibrium(MODELS["slider-crank"].factory())
    assert eq.driver_efforts == pytest.approx({"O-driver.angle": 0.3 * G * np.cos(np.pi / 3)}, rel=1e-9)


def test_linearisation_agrees_with_finite_differences_of_the_equations():
    """K_r = T^T K T: the reduced generalized force T^T f(q* + T z) (on Phi = 0) changes by -K_r dz to first
    order (central differences of the nonlinear forces along the tangent basis)."""
    model = double_pendulum()
    eq = equilibrium(model)
    lin = linearize(model, eq)
    from multibody.assembly import Workspace
    from multibody.kinematics import solve_positions
    ws, h = Workspace(model), 1e-6

    def reduced_force(z):
        q = solve_positions(model, eq.q + lin.T @ z, ws=ws)
        A = ws.constraints(0.0, q, np.zeros(model.n))[1]
        f = ws.forces(0.0, q, np.zeros(model.n))
        lam = np.linalg.lstsq(A.T, f, rcond=None)[0]
        return lin.T.T @ (f - A.T @ lam)
    K_fd = -np.column_stack([(reduced_force(h * e) - reduced_force(-h * e)) / (2 * h) for e in np.eye(2)])
    np.testing.assert_allclose(0.5 * (lin.K + lin.K.T), K_fd, atol=1e-5 * np.abs(lin.K).max())


def test_a_perturbation_along_a_mode_oscillates_at_its_frequency():
    """Released 1e-3 rad along the pendulum's mode, the project's own integrator swings with the period 1/f
    (amplitude correction of the period theta0^2 / 16 ~ 6e-8 relative)."""
    model = MODELS["pendulum"].factory()
    eq = equilibrium(model)
    f = modes(model, eq).frequencies_hz[0]
    eps = 1e-3
    mb = ModelBuilder("small-swing", gravity=(0.0, -G))
    mb.add_point_mass("m", mass=1.0, position=(np.sin(eps), -np.cos(eps)))
    mb.distance("rod", "ground", "m", at_a=(0.0, 0.0), at_b=(np.sin(eps), -np.cos(eps)), length=1.0)
    r = simulate(mb.build(), t_end=3.0 / f, options=RunOptions(rtol=1e-10, atol=1e-12, output_step=1e-3))
    x = r.column("q", "m.x")
    k = np.flatnonzero(x[:-1] * x[1:] < 0)
    tz = r.t[k] - x[k] * (r.t[k + 1] - r.t[k]) / (x[k + 1] - x[k])
    period = 2 * np.mean(np.diff(tz))
    assert period == pytest.approx(1.0 / f, rel=1e-6)


def test_cli_equilibrium_and_modes_json_and_errors():
    out = CliRunner().invoke(main, ["equilibrium", "slider-crank", "--json"])
    assert out.exit_code == 0, out.output
    d = json.loads(out.stdout)
    assert {"q", "stable", "driver_efforts", "reactions", "residual", "iterations"} <= set(d)
    out = CliRunner().invoke(main, ["modes", "pendulum", "--json"])
    assert out.exit_code == 0, out.output
    d = json.loads(out.stdout)
    assert d["frequencies_hz"] == pytest.approx([np.sqrt(G) / (2 * np.pi)], rel=1e-8) and len(d["shapes"]) == 1
    out = CliRunner().invoke(main, ["equilibrium", "gyro-top"])       # a spinning top has no static equilibrium
    assert out.exit_code == 2 and "equilibrium" in out.output and "Traceback" not in out.output
    out = CliRunner().invoke(main, ["modes", "pendulum", "--at", "initial"])
    assert out.exit_code == 2 and "not a static equilibrium" in out.output


#: built-in models without a static equilibrium within reach of the guess, or refused, and why
NO_STATIC = {"gyro-top": "its equilibria (upright, hanging) lie 60 and 120 degrees from the start",
             "six-body-linkage": "no equilibrium found from the start within 60 iterations (9 s: not run here)",
             "mobile-robot": "nonholonomic rows: refused", "knife-edge-sled": "nonholonomic rows: refused"}


@pytest.mark.parametrize("name", sorted(set(MODELS) - set(NO_STATIC)))
def test_built_in_models_with_a_static_equilibrium(name):
    """Every built-in model with a static equilibrium: found (imbalance below the tolerance), and modes computed
    (a stable equilibrium has real frequencies, positive except for neutral freedoms: 0 Hz)."""
    model = MODELS[name].factory()
    eq = equilibrium(model)
    assert eq.residual <= 1e-10
    md = modes(model, eq)
    if eq.stability in ("stable", "neutral"):
        assert np.all(md.frequencies_hz >= 0)
    if eq.stable:
        assert np.all(md.frequencies_hz > 0)


@pytest.mark.parametrize("name", ["gyro-top", "mobile-robot", "knife-edge-sled"])
def test_built_in_models_without_a_static_equilibrium_fail_cleanly(name):
    """The others end with one MultibodyError naming the model (CLI: exit 2)."""
    with pytest.raises(MultibodyError, match=name):
        modes(MODELS[name].factory())


def test_kinematic_analysis_of_the_driven_slider_crank():
    """Crank driven at 2 pi rad/s from 60 degrees (r = 0.2, l = 0.6, slider on y = 0): the slider follows the
    closed form x = r cos th + sqrt(l^2 - r^2 sin^2 th), and the driver's power balances the mechanism's
    energy, tau omega = d(T + V)/dt (no friction, the constraints do no work)."""
    from multibody.simulation.kinematic import kinematic_analysis
    model = MODELS["slider-crank"].factory()
    t = np.linspace(0.0, 1.0, 2001)
    r = kinematic_analysis(model, t)
    th = np.pi / 3 + 2 * np.pi * t
    exact = 0.2 * np.cos(th) + np.sqrt(0.36 - 0.04 * np.sin(th) ** 2)
    np.testing.assert_allclose(r.column("q", "slider.x"), exact, atol=1e-10)
    from multibody.assembly import Workspace, kinetic_energy
    ws = Workspace(model)
    E = np.array([kinetic_energy(model.mass(q), v) + ws.potential(s, q) for s, q, v in zip(t, r.q, r.v)])
    dE = np.gradient(E, t, edge_order=2)
    tau = r.column("driver_efforts", "O-driver.angle")
    np.testing.assert_allclose(tau[5:-5] * 2 * np.pi, dE[5:-5], atol=1e-4 * np.abs(dE).max())


def test_kinematics_refuses_free_motions_and_runs_from_the_cli(tmp_path):
    out = CliRunner().invoke(main, ["kinematics", "pendulum"])
    assert out.exit_code == 2 and "not fully driven" in out.output and "Traceback" not in out.output
    path = tmp_path / "k.h5"
    out = CliRunner().invoke(main, ["kinematics", "slider-crank", "--t-end", "0.5", "--out", str(path), "--json"])
    assert out.exit_code == 0, out.output
    from multibody import Result
    assert Result.load(path).series["driver_efforts"].labels == ("O-driver.angle",)


def test_run_start_at_equilibrium_stays_at_rest(tmp_path):
    """`run --start-at-equilibrium`: the pendulum released horizontally in the model starts at rest at the bottom
    instead, and stays there (no transient: q'' = 0 at a static equilibrium)."""
    out = CliRunner().invoke(main, ["run", "pendulum", "--start-at-equilibrium", "--json",
                                    "--out", str(tmp_path / "p.h5")])
    assert out.exit_code == 0, out.output
    d = json.loads(out.stdout)
    np.testing.assert_allclose(d["final_q"], [0.0, -1.0], atol=1e-9)


def test_modes_plot_draws_each_mode_on_the_mechanism(tmp_path):
    out = CliRunner().invoke(main, ["modes", "physical-pendulum", "--plot", str(tmp_path), "--json"])
    assert out.exit_code == 0, out.output
    figures = json.loads(out.stdout)["figures"]
    assert len(figures) == 1 and (tmp_path / "physical-pendulum-mode1.png").stat().st_size > 10_000


def test_quasi_static_slider_crank_torque_is_the_holding_torque_along_the_revolution():
    """Without inertia the driver holds the slider-crank against gravity at every crank angle: tau(theta) =
    dV/dtheta = 0.3 g cos theta (virtual work, as in the equilibrium test) over a whole revolution."""
    from multibody.simulation.kinematic import kinematic_analysis
    t = np.linspace(0.0, 1.0, 101)
    r = kinematic_analysis(MODELS["slider-crank"].factory(), t, quasi_static=True)
    th = np.pi / 3 + 2 * np.pi * t
    np.testing.assert_allclose(r.column("driver_efforts", "O-driver.angle"), 0.3 * G * np.cos(th), atol=1e-9)
    assert r.summary["analysis"] == "quasi-static"
    out = CliRunner().invoke(main, ["kinematics", "slider-crank", "--quasi-static", "--json"])
    assert out.exit_code == 0 and json.loads(out.stdout)["analysis"] == "quasi-static"
