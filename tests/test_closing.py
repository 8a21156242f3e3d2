"""Paper 001 Sects 4-5: explicit closing conditions q_D = g(q_I, t) as a formulation (eqs 27-29) and
the physical reactions f of a distribution matrix B recorded by runs (eq. 32)."""
import dataclasses
import json

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.integrate import solve_ivp

from multibody.cli import main
from multibody.errors import MultibodyError
from multibody.model.closing import ClosingConditions
from multibody.models.pendulums import pendulum
from multibody.models.projective import four_bar_angles, four_bar_relative, physical_pendulum
from multibody.simulation import RunOptions, simulate

TIGHT = RunOptions(rtol=1e-10, atol=1e-12)
G = 9.81


def test_closing_conditions_leave_no_constraint_violation_and_agree_with_lagrange():
    """Eq. 29: the closing conditions replace Phi = 0, so |Phi| stays at the round-off of g (eqs 40-41)
    with no projection; the motion is that of the multiplier equations (same ODE on the manifold)."""
    m = four_bar_relative()
    a = simulate(m, t_end=3.0, formulation="closing", options=TIGHT)
    b = simulate(m, t_end=3.0, formulation="lagrange", options=TIGHT)
    assert a.summary["constraint_violation_max"] < 1e-13
    assert np.max(np.abs(a.q[-1] - b.q[-1])) < 1e-7
    assert np.max(np.abs(np.diff(a.q[:, 1]))) < 1.0        # alpha2 continued over the atan2 cut
    assert a.summary["energy_drift_rel"] < 1e-8            # conservative: only gravity
    assert np.allclose(a.q[:, 1:], four_bar_angles(a.q[:, 0])[:, 1:] + 2 * np.pi * np.round(
        (a.q[:, 1:] - four_bar_angles(a.q[:, 0])[:, 1:]) / (2 * np.pi)), atol=1e-14)


def test_physical_pendulum_by_closing_conditions_is_the_closed_form_equation():
    """Paper 001 eqs 24-26: (J + m rho^2) gamma'' = -m g rho cos(gamma), integrated independently."""
    mass, J, rho = 1.0, 0.1, 0.5
    r = simulate(physical_pendulum(mass=mass, inertia=J, rho=rho), t_end=2.0, formulation="closing",
                 options=TIGHT)
    ref = solve_ivp(lambda t, y: [y[1], -mass * G * rho * np.cos(y[0]) / (J + mass * rho ** 2)], (0, 2.0),
                    [0.0, 0.0], rtol=1e-12, atol=1e-12, t_eval=[2.0])
    assert r.q[-1, 2] == pytest.approx(ref.y[0, -1], abs=1e-8)


def test_the_recorded_pin_force_is_newtons_law_for_the_body():
    """Pin force on G: f = m a_G + (0, m g) (Newton for the centre of mass), from the recorded
    accelerations, for every continuous formulation."""
    mass = 1.0
    model = physical_pendulum(mass=mass)
    for form in ("lagrange", "closing", "partitioning", "nullspace", "projection"):
        r = simulate(model, t_end=1.0, formulation=form, options=TIGHT)
        f = r["physical_reactions"]
        expected = mass * r["a"][:, :2] + [0.0, mass * G]
        assert np.allclose(f, expected, atol=1e-9 * np.max(np.abs(expected))), form
        assert r.series["physical_reactions"].labels == ("O.fx", "O.fy")


def test_wrong_branch_and_missing_conditions_are_refused():
    m = four_bar_relative()
    other = ClosingConditions(("alpha1",), lambda qi, t: four_bar_angles(qi[0], branch=-1)[1:])
    with pytest.raises(MultibodyError, match="another assembly branch"):
        simulate(dataclasses.replace(m, closing=other), t_end=0.1, formulation="closing")
    with pytest.raises(MultibodyError, match="no closing conditions"):
        simulate(pendulum(), t_end=0.1, formulation="closing")


def test_cli_closing_formulation_writes_the_physical_reactions(tmp_path):
    out = CliRunner().invoke(main, ["run", "four-bar-relative", "--formulation", "closing", "--t-end", "0.5",
                                    "--json", "--out", str(tmp_path / "r.h5"), "--plot", str(tmp_path)])
    assert out.exit_code == 0, out.output
    s = json.loads(out.stdout)
    assert s["formulation"] == "closing" and s["constraint_violation_max"] < 1e-13
    assert any(p.endswith("four-bar-relative-physical-reactions.png") for p in s["figures"])
