"""Coordinate partitioning and the projective criterion (paper 001 Sects 2, 3, 6).

Expected values: the closed forms of paper 001 (eq. 26 physical pendulum, the mathematical pendulum
of Sect. 3, eqs 40-43 of the four-bar), the identity cos^2 alpha + cos^2 beta = 1 (eqs 11, 15, 23),
the independence of cos^2 alpha from the partition D is built from (after eq. 26), agreement with
the multipliers formulation, closed-form slider positions; the chart's flatness (analysis.partition_chart) from the
double four-bar's reduced mass (3 kg m^2 in the crank angle) and the exact reduction theta'' = -k cos theta.
"""
import json

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from multibody import Workspace, pivoted_qr
from multibody.analysis.partition import (Partition, criterion, criterion_at, geometric_criterion, set_quality,
                                          tangent_matrix)
from multibody.cli import main
from multibody.errors import MultibodyError
from multibody.analysis.partition_chart import FLAT, admissible_floor, choose, flattest, variation
from multibody.formulations.partition_guard import QUALITY_FLOOR, REJECT_ERROR, PartitionGuard
from multibody.formulations.partitioning import Partitioning, SwitchPolicy
from multibody.integrate.controllers import error_norm
from multibody.integrate.explicit import solve
from multibody.kinematics import consistent_state, solve_positions
from multibody.models import MODELS
from multibody.models.four_bars import crank_rate_constant, n_four_bar
from multibody.models.linkages import slider_crank, slider_position
from multibody.models.modified_four_bars import crank_angle_exact_cells, double_four_bar_modified
from multibody.models.pendulums import pendulum
from multibody.models.projective import (FOUR_BAR_RELATIVE, four_bar_angles, four_bar_rates,
                                         four_bar_relative, physical_pendulum)
from multibody.simulation import RunOptions, simulate

EPS = 1e-12           # round-off level of the criterion (O(1) quantities, a few factorisations)
ANGLES = np.linspace(-np.pi, np.pi, 37)
TIGHT = RunOptions(rtol=1e-10, atol=1e-12)
#: random states are kept when every R_ii / R_11 of the pivoted QR of C is either above this or at
#: round-off: near a singular configuration M_c = C M^-1 C^T is ill-conditioned and the identities
#: lose accuracy like eps / sigma^2 (sigma the distance), as any rank-deciding computation does
RANK_GAP = 1e-3


@settings(max_examples=40, deadline=None)
@given(m=st.floats(0.1, 10), J=st.floats(0.01, 5), rho=st.floats(0.1, 3), gamma=st.floats(-np.pi, np.pi))
def test_physical_pendulum_matches_eq_26(m, J, rho, gamma):
    """Paper 001 eq. 26: cos^2 alpha_x = m rho^2 sin^2 g / (m rho^2 + J), cos^2 alpha_y the same
    with cos^2 g, cos^2 alpha_gamma = J / (m rho^2 + J); cos^2 beta_i = 1 - cos^2 alpha_i."""
    model = physical_pendulum(mass=m, inertia=J, rho=rho, angle=gamma)
    crit = criterion_at(model, model.q0)
    share = m * rho ** 2 / (m * rho ** 2 + J)
    expected = np.array([share * np.sin(gamma) ** 2, share * np.cos(gamma) ** 2, J / (m * rho ** 2 + J)])
    np.testing.assert_allclose(crit.cos2_alpha, expected, atol=EPS)
    np.testing.assert_allclose(crit.cos2_beta, 1 - expected, atol=EPS)


@pytest.mark.parametrize("gamma", ANGLES)
def test_mathematical_pendulum_sect_3(gamma):
    """Sect. 3, Fig. 1: q = [x, y], cos^2 alpha_x = sin^2 gamma, cos^2 alpha_y = cos^2 gamma; the
    best choice is y for |cos gamma| > |sin gamma| and x otherwise."""
    model = pendulum(length=1.7, angle=gamma)
    crit = criterion_at(model, model.q0)
    np.testing.assert_allclose(crit.cos2_alpha, [np.sin(gamma) ** 2, np.cos(gamma) ** 2], atol=EPS)
    if abs(abs(np.cos(gamma)) - abs(np.sin(gamma))) > 1e-9:
        assert crit.best() == ((1,) if abs(np.cos(gamma)) > abs(np.sin(gamma)) else (0,))


def _random_state(model, data):
    """A random consistent configuration near the model's initial one (Newton from a perturbation)."""
    q0 = consistent_state(model)[0]
    scale = 0.2 * max(1.0, model.length_scale)
    dq = np.array(data.draw(st.lists(st.floats(-1, 1), min_size=model.n, max_size=model.n)))
    try:
        return solve_positions(model, q0 + scale * dq, 0.0, hold=model.hold)
    except MultibodyError:
        assume(False)


# n-four-bar (81 bars): the pivoted R diagonal of a long chain spans more than RANK_GAP at every state, so no
# random state passes the clear-rank filter; its equations are the double four-bar's repeated (covered here)
@pytest.mark.parametrize("name", sorted(set(MODELS) - {"n-four-bar"}))
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_cosines_add_to_one_on_every_model(name, data):
    """cos^2 alpha_i + cos^2 beta_i = 1 (M^-1 = T_cd^T M_cd^-1 T_cd, eqs 11, 15, 23), each in [0, 1],
    for every coordinate of random consistent states of every built-in model (with a clear rank, see
    RANK_GAP); and cos^2 alpha does not
    depend on the admissible partition D is built from (paper 001 after eq. 26)."""
    model = MODELS[name].factory()
    q = _random_state(model, data)
    C = Workspace(model).constraints(0.0, q, np.zeros(model.n))[1]
    R = pivoted_qr(C).R_diag
    rel = R / R[0] if R.size and R[0] > 0 else R
    assume(np.all((rel > RANK_GAP) | (rel < 1e-12)))   # a clear rank: away from singular configurations
    M = model.mass(q)
    crit = criterion(M, C)
    np.testing.assert_allclose(crit.cos2_alpha + crit.cos2_beta, 1.0, atol=1e-9)
    assert np.all(crit.cos2_alpha > -1e-9) and np.all(crit.cos2_beta > -1e-9)
    other = crit.best_partition()
    if other.independent != crit.partition.independent and crit.quality(other.independent) > 1e-6:
        np.testing.assert_allclose(criterion(M, C, other).cos2_alpha, crit.cos2_alpha, atol=1e-9)


@pytest.mark.parametrize("alpha1", np.linspace(0, 2 * np.pi, 25))
def test_four_bar_closing_conditions_eqs_40_to_43(alpha1):
    """Eqs 40-41 close the loop (Phi = 0) and D for q_I = [alpha1] is [1, dalpha2/dalpha1,
    dalpha3/dalpha1] of eq. 42 (eq. 43)."""
    model = four_bar_relative()
    q = four_bar_angles(alpha1)
    ws = Workspace(model)
    Phi, C, _, _ = ws.constraints(0.0, q, np.zeros(3))
    np.testing.assert_allclose(Phi, 0.0, atol=EPS)
    D, _ = tangent_matrix(C, Partition.from_independent(3, [0], [0, 1]))
    L = np.array([FOUR_BAR_RELATIVE[k] for k in ("l1", "l2", "l3")])
    np.testing.assert_allclose(D[0], [1.0, *four_bar_rates(q, L, FOUR_BAR_RELATIVE["l0"])], atol=1e-10)


def test_four_bar_criterion_predicts_singular_choice():
    """alpha3 is a singular choice (cos^2 alpha_3 = 0) exactly where C_D = C[:, (alpha1, alpha2)] is
    singular: at alpha1 = pi/2 and 3 pi/2 (O2 on the line O1 O4, eq. 42 has cos(alpha1) = 0); alpha1
    and alpha2 are admissible everywhere (paper 001 Sect. 6, Fig. 3); the geometry-only criterion
    has the same singular points (they are kinematic)."""
    model = four_bar_relative()
    ws = Workspace(model)
    for a1 in (np.pi / 2, 3 * np.pi / 2):
        q = four_bar_angles(a1)
        C = ws.constraints(0.0, q, np.zeros(3))[1]
        assert abs(np.linalg.det(C[:, :2])) < EPS
        assert criterion_at(model, q).cos2_alpha[2] < EPS
        assert geometric_criterion(C).cos2_alpha[2] < EPS
    sweep = np.linspace(0, 2 * np.pi, 181)
    values = np.array([criterion_at(model, four_bar_angles(a)).cos2_alpha for a in sweep])
    dets = np.array([[np.linalg.det(ws.constraints(0.0, four_bar_angles(a), np.zeros(3))[1][:, cols])
                      for cols in ([1, 2], [0, 2], [0, 1])] for a in sweep])
    assert np.all((values > 1e-6) == (np.abs(dets) > 1e-9))
    assert values[:, :2].min() > 0 and np.all(values[:, 2] <= values[:, :2].max(axis=1))


def test_mass_and_geometry_choices_differ_on_the_four_bar():
    """The projective criterion includes the inertia, the SVD-type choice does not (paper 001
    Sect. 6): they disagree somewhere along a turn; other link masses leave the geometric values
    unchanged and change the projective ones."""
    model = four_bar_relative()
    sweep = np.linspace(0, 2 * np.pi, 91)
    mass = [criterion_at(model, four_bar_angles(a)).best() for a in sweep]
    geo = [criterion_at(model, four_bar_angles(a), metric="geometry").best() for a in sweep]
    assert mass != geo
    light = four_bar_relative(masses=(1.0, 0.2, 5.0))      # the coupler light, the rocker heavy
    q = four_bar_angles(1.0)
    np.testing.assert_allclose(criterion_at(light, q, metric="geometry").cos2_alpha,
                               criterion_at(model, q, metric="geometry").cos2_alpha, atol=EPS)
    assert not np.allclose(criterion_at(light, q).cos2_alpha, criterion_at(model, q).cos2_alpha, atol=1e-3)


def test_four_bar_run_switches_between_alpha1_and_alpha2_and_agrees_with_lagrange():
    """Over three turns of the crank the run switches only between alpha1 and alpha2 (paper 001
    Sect. 6, its rule "quality"), never runs on a set worse than the hysteresis allows, and matches the multipliers
    run."""
    model = four_bar_relative()
    policy = SwitchPolicy(ratio=0.7, rule="quality")
    opts = RunOptions(rtol=1e-9, atol=1e-11)
    part = simulate(model, t_end=2.2, formulation="partitioning", options=opts,
                    formulation_options={"switching": policy})
    lag = simulate(model, t_end=2.2, options=opts)
    switches = part.summary["coordinate_switches"]
    turns = int((part.q[-1, 0] - part.q[0, 0]) // (2 * np.pi))
    assert turns >= 2 and len(switches) >= 2 * turns
    for s in switches:
        assert {s["old"][0], s["new"][0]} == {"alpha1", "alpha2"}
    c2, flags = part["cos2_alpha"], part["independent"].astype(bool)
    current = c2[flags].reshape(-1)
    assert np.all(current >= policy.ratio * c2.max(axis=1) - 1e-12)
    for key in ("final_q", "final_v"):
        np.testing.assert_allclose(part.summary[key], lag.summary[key], atol=1e-6)


@pytest.mark.parametrize("name", ["pendulum", "pendulum-redundant", "physical-pendulum", "double-four-bar"])
def test_partitioning_agrees_with_lagrange(name):
    """Same model, two formulations, same motion and multipliers (minimum-norm where redundant)."""
    model = MODELS[name].factory()
    runs = [simulate(model, t_end=1.0, formulation=f, options=TIGHT) for f in ("partitioning", "lagrange")]
    np.testing.assert_allclose(runs[0].summary["final_q"], runs[1].summary["final_q"], atol=1e-7)
    assert runs[0].summary["constraint_violation_max"] < 1e-10
    lam = [r["multipliers"][-1] for r in runs]
    np.testing.assert_allclose(lam[0], lam[1], atol=1e-5 * max(1.0, np.abs(lam[1]).max()))


def test_driven_slider_crank_has_no_independent_coordinate():
    """k = 0: every coordinate is dependent and the slider follows the closed form."""
    res = simulate(slider_crank(), t_end=0.5, formulation="partitioning", options=TIGHT)
    assert res.summary["independent_initial"] == [] and res.summary["coordinate_switches"] == []
    phi = np.pi / 3 + 2 * np.pi * res.t
    np.testing.assert_allclose(res.column("q", "slider.x"), slider_position(phi), atol=1e-9)


def test_requested_singular_choice_is_refused():
    """x is a singular choice for the pendulum at x = l (cos^2 alpha_x = sin^2 0 = 0)."""
    model = pendulum()
    form = Partitioning(model, independent=["x"], switching=SwitchPolicy(enabled=False))
    q, v = consistent_state(model)
    with pytest.raises(MultibodyError, match="inadmissible"):
        form.initial_state(0.0, q, v)
    with pytest.raises(MultibodyError, match="degrees of freedom"):
        Partitioning(model, independent=["x", "z"]).initial_state(0.0, q, v)


def test_pendulum_switches_at_45_degrees_without_chatter():
    """The pendulum released from the horizontal starts on z (cos^2 alpha_z = 1) and switches to x once
    cos^2 alpha_z < ratio cos^2 alpha_x, i.e. tan^2 gamma > 1 / ratio, past 45 degrees (hysteresis)."""
    ratio = 0.7
    res = simulate(pendulum(), t_end=0.6, formulation="partitioning", options=TIGHT,
                   formulation_options={"switching": SwitchPolicy(ratio=ratio, rule="quality")})
    s = res.summary["coordinate_switches"]
    assert res.summary["independent_initial"] == ["z"] and s[0]["new"] == ["x"]
    k = int(np.searchsorted(res.t, s[0]["t"]))
    x, z = res.q[k]
    assert (z / x) ** 2 >= 1 / ratio and (res.q[k - 1, 1] / res.q[k - 1, 0]) ** 2 < 1 / ratio


def test_criterion_cli_json_and_plot(tmp_path):
    runner = CliRunner()
    out = runner.invoke(main, ["criterion", "physical-pendulum", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    names = [c["name"] for c in data["coordinates"]]
    assert names == ["G.x", "G.y", "G.theta"]
    m, J, rho = 1.0, 0.1, 0.5          # physical_pendulum defaults, released at gamma = 0
    np.testing.assert_allclose([c["cos2_alpha"] for c in data["coordinates"]],
                               [0.0, m * rho ** 2 / (m * rho ** 2 + J), J / (m * rho ** 2 + J)], atol=EPS)
    assert data["independent"] == ["G.y"]
    out = runner.invoke(main, ["criterion", "four-bar-relative", "--sweep", "alpha1", "0", str(2 * np.pi), "9",
                               "--plot", str(tmp_path), "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert len(data["independent"]) == 9 and len(data["coordinates"][2]["cos2_alpha"]) == 9
    assert data["coordinates"][2]["cos2_alpha"][2] < EPS          # alpha1 = pi/2: alpha3 singular
    assert (tmp_path / "four-bar-relative-criterion-alpha1.png").stat().st_size > 0
    bad = runner.invoke(main, ["criterion", "four-bar-relative", "--sweep", "beta", "0", "1", "3"])
    assert bad.exit_code == 2 and "no coordinate 'beta'" in bad.output


def test_run_json_lists_switches(tmp_path):
    out = CliRunner().invoke(main, ["run", "pendulum", "--formulation", "partitioning", "--t-end", "1",
                                    "--out", str(tmp_path / "p.h5"), "--json"])
    assert out.exit_code == 0, out.output
    switches = json.loads(out.stdout)["coordinate_switches"]
    assert switches and all(set(s) == {"t", "old", "new"} for s in switches)


@pytest.mark.parametrize("name", ["double-four-bar", "four-bar-2x2-modified", "four-bar-relative"])
def test_set_quality_is_the_criterion_quality(name):
    """set_quality(M, D M D^T, I) = sigma_min(Z[:, I])^2 (analysis.partition: Z[:, I] = L_d^-1 S^-1), for k = 1 and 2."""
    model = MODELS[name].factory()
    q, _ = consistent_state(model)
    ws = Workspace(model)
    C, M = ws.constraints(0.0, q, np.zeros(model.n))[1], model.mass(q)
    crit = criterion(M, C)
    part = crit.best_partition()
    D = tangent_matrix(C, part)[0]
    assert np.isclose(set_quality(M, D @ M @ D.T, part.independent), crit.quality(part.independent), rtol=1e-10)


def test_guard_rejects_an_attempt_below_the_floor():
    """An attempt whose stages fall below QUALITY_FLOOR times the reference is rejected (asked twice, one answer), and
    its error vector has a scaled norm of at least REJECT_ERROR / max(rtol, atol)."""
    guard = PartitionGuard()
    guard.start(1.0)
    for t, quality in ((0.0, 1.0), (0.5, 0.9 * QUALITY_FLOOR), (1.0, 0.8)):
        guard.stage(t, quality)
    assert not guard.holds(0.0, 1.0) and not guard.holds(0.0, 1.0) and guard.rejected == 1
    y = np.array([3.0, -0.5, 0.0])
    assert error_norm(guard.reject(y, y), y, y, 1e-4, 1e-6) >= REJECT_ERROR / 1e-4
    guard.stage(0.2, 1.1 * QUALITY_FLOOR)
    assert guard.holds(0.0, 0.2, end=lambda: 1.1 * QUALITY_FLOOR)
    guard.start(None)                                     # unguarded (switching disabled): every attempt holds
    guard.stage(0.3, 0.0)
    assert guard.holds(0.2, 0.3)


@pytest.mark.parametrize("integrator,atol", [("dop853", 1e-4), ("dopri5", 1e-4), ("dop853", 1e-6)])
def test_modified_double_four_bar_at_rtol_1e4_keeps_its_crossings_and_energy(integrator, atol):
    """Issue 12: at rtol 1e-4 a step of the coupler's height past its stationary point (the crank's lowest point)
    gained 6.7 % of the energy and the crank crossed the singular position 11 times in 10 s. The count is the exact
    reduction's (theta'' = -k cos theta: sign changes of sin theta); the energy may not drift by the kinetic energy at
    the start, where the cranks stand at the upper equilibrium: that is the margin above the separatrix, more would
    stop the cranks below the top or change their period qualitatively. The cranks stay parallel (the branch)."""
    model = double_four_bar_modified()
    res = simulate(model, t_end=10.0, formulation="partitioning",
                   options=RunOptions(integrator=integrator, rtol=1e-4, atol=atol))
    s = np.sin(crank_angle_exact_cells(np.linspace(0.0, 10.0, 20001), cells=2))
    expected = int(np.count_nonzero(s[:-1] * s[1:] < 0))
    assert expected == 10 and len(res.summary["singular_crossings"]) == expected
    energy = res["energy"]
    assert np.max(np.abs(energy[:, 2] - energy[0, 2])) < energy[0, 0]
    cranks = np.stack([res.column("q", c) for c in ("bar1.theta", "bar3.theta", "bar5.theta")], axis=1)
    assert np.max(np.abs(cranks - cranks[:, :1])) < 1e-9


def test_requested_poor_set_runs_and_switches_after_the_first_step():
    """A requested admissible set below SwitchPolicy.ratio times the best (the crank angle of the double four-bar: the
    couplers carry most of the kinetic energy) is guarded relative to its own quality, not the best set's (which it
    never reaches: every attempt would be rejected until the step collapsed); paper 001's rule ("quality") switches
    after the first step. The rule "flat" keeps it: on the parallel branch its cos^2 alpha is constant (its chart
    is flat, analysis.partition_chart) and admissible: 1 / 36 against the floor eps / rtol = 2.2e-10 at rtol 1e-6."""
    model = MODELS["double-four-bar"].factory()
    q, _ = consistent_state(model)
    crit = criterion_at(model, q)
    crank = model.coordinate_index("bar1.theta")
    assert admissible_floor(1e-6) < crit.quality([crank]) < QUALITY_FLOOR * crit.quality(crit.best())
    runs = {rule: simulate(model, t_end=0.2, formulation="partitioning", options=RunOptions(rtol=1e-6, atol=1e-6),
                           formulation_options={"independent": ["bar1.theta"], "switching": SwitchPolicy(rule=rule)})
            for rule in ("quality", "flat")}
    first = runs["quality"].summary["coordinate_switches"][0]
    assert first["old"] == ["bar1.theta"] and first["t"] == runs["quality"].t[1]
    assert runs["flat"].summary["coordinate_switches"] == []


def _double_four_bar_at(theta):
    """q of the double four-bar on its parallel branch at crank angle theta (cranks hinged at x = 0, 1, 2, couplers
    horizontal between the crank tips; four_bars.double_four_bar)."""
    c, s = np.cos(theta), np.sin(theta)
    return np.array([0.5 * c, 0.5 * s, theta, 0.5 + c, s, 0.0, 1 + 0.5 * c, 0.5 * s, theta,
                     1.5 + c, s, 0.0, 2 + 0.5 * c, 0.5 * s, theta])


def test_crank_chart_is_flat_and_the_couplers_chart_is_not():
    """On the parallel branch of the double four-bar the reduced mass in the crank angle is constant, M_d = 3 cranks
    m L^2 / 3 + 2 couplers m L^2 = 3 kg m^2, so cos^2 alpha of a crank angle is (m L^2 / 12) / 3 = 1 / 36 at every
    angle (eq. 23 a); the coupler's x moves by L sin(theta) per radian: cos^2 alpha = sin^2(theta) / 3. Over a step
    from 1.2 to 1.1 rad the crank's chart is flat (nu = FLAT) and the coupler's changes by |ln(sin^2 1.1 / sin^2 1.2)|;
    the criterion's best set (the coupler's x) is left for a crank angle, which is kept; a floor above the crank's
    quality 1 / 36 leaves no flat admissible chart, and paper 001's rule keeps the coupler's x. The floor of the
    tightest tolerance of the matrix, eps / 1e-12 = 2.2e-4, admits the crank."""
    model = MODELS["double-four-bar"].factory()
    old, new = (criterion_at(model, _double_four_bar_at(a)) for a in (1.2, 1.1))
    index = model.coordinate_index
    cranks = {index(f"bar{k}.theta") for k in (1, 3, 5)}
    x = index("bar2.x")
    for crit, a in ((old, 1.2), (new, 1.1)):
        np.testing.assert_allclose(crit.cos2_alpha[sorted(cranks)], 1 / 36, rtol=1e-12)
        np.testing.assert_allclose(crit.cos2_alpha[x], np.sin(a) ** 2 / 3, rtol=1e-12)
        assert crit.best() == (x,)
    assert all(variation(old, new, [c]) == FLAT for c in cranks)
    assert np.isclose(variation(old, new, [x]), abs(np.log(np.sin(1.1) ** 2 / np.sin(1.2) ** 2)), rtol=1e-10)
    assert flattest(old, new)[0] in cranks
    chosen = choose(old, new, (x,), ratio=0.7)
    assert chosen[0] in cranks and choose(old, new, chosen, ratio=0.7) == chosen
    floor = 1 / 36
    assert choose(old, new, (x,), ratio=0.7, floor=1.01 * floor) == (x,)
    assert choose(old, new, (x,), ratio=0.7, floor=0.99 * floor)[0] in cranks
    assert admissible_floor(1e-12) < floor


def test_admissibility_floor_admits_the_n_four_bars_crank_at_rtol_1e12():
    """The admissible sets' smallest quality keeps the round-off eps / Q a chart's accelerations put into the error
    estimate below rtol (analysis.partition_chart): Q >= eps / rtol. The crank angle of the N-four-bar with 40 cells
    on its parallel branch has Q = 1 / (M^-1(i, i) M_d) = 1 / (12 (41 / 3 + 40)) at every angle (41 cranks m L^2 / 3,
    40 couplers m L^2 in M_d; centroidal inertia m L^2 / 12), above the floor at rtol 1e-12 and flat."""
    assert np.isclose(admissible_floor(1e-12), np.finfo(float).eps / 1e-12, rtol=1e-14)
    model = n_four_bar(cells=4)     # the same quality formula with 4 cells (5 cranks, 4 couplers), cheaper
    crank = model.coordinate_index("bar1.theta")
    for theta in (1.2, 1.1):
        q = _chain_at(model, theta)
        assert np.max(np.abs(Workspace(model).constraints(0.0, q, np.zeros(model.n))[0])) < 1e-14
        np.testing.assert_allclose(criterion_at(model, q).quality([crank]), 1 / (12 * (5 / 3 + 4)), rtol=1e-10)
    assert admissible_floor(1e-12) < 1 / (12 * (41 / 3 + 40))


def _chain_at(model, theta):
    """q of an N-four-bar on its parallel branch at crank angle theta (four_bars.n_four_bar: crank k hinged at x = k,
    coupler between the tips of cranks k and k + 1, horizontal)."""
    q = np.zeros(model.n)
    for i, name in enumerate(model.coordinate_names):
        bar, c = name.split(".")
        k = int(bar[3:])
        x0 = (k - 1) / 2 if k % 2 else (k - 2) / 2 + 0.5
        tip = (np.cos(theta), np.sin(theta)) if k % 2 == 0 else (0.5 * np.cos(theta), 0.5 * np.sin(theta))
        q[i] = {"x": x0 + tip[0], "y": tip[1], "theta": theta if k % 2 else 0.0}[c]
    return q


def test_flat_rule_is_paper_001s_rule_where_no_chart_is_flat():
    """The four-bar in relative coordinates has no flat chart (the reduced mass in each relative angle changes along
    the motion): the rule "flat" switches exactly as paper 001's rule (Sect. 6, alpha1 <-> alpha2), no chattering."""
    model = four_bar_relative()
    runs = {rule: simulate(model, t_end=2.2, formulation="partitioning", options=RunOptions(rtol=1e-6, atol=1e-8),
                           formulation_options={"switching": SwitchPolicy(rule=rule)}) for rule in ("flat", "quality")}
    switches = [r.summary["coordinate_switches"] for r in runs.values()]
    assert switches[0] == switches[1] and len(switches[0]) >= 4
    np.testing.assert_array_equal(runs["flat"].q, runs["quality"].q)


def test_flat_rule_keeps_the_physical_pendulums_angle():
    """Paper 001 eq. 26: cos^2 alpha_gamma = J / (m rho^2 + J) at every angle, so the rotation angle's chart is flat;
    the rule "flat" takes it once the initial set's chart changes along the motion and keeps it (paper 001's rule
    alternates between x and y)."""
    model = physical_pendulum()
    res = simulate(model, t_end=2.0, formulation="partitioning", options=RunOptions(rtol=1e-8, atol=1e-10))
    switches = res.summary["coordinate_switches"]
    assert len(switches) == 1 and switches[0]["new"] == res.summary["independent_final"] == [model.coordinate_names[2]]


@pytest.mark.parametrize("name", ["double-four-bar", "double-four-bar-modified"])
def test_dop853_at_rtol_1e12_is_as_accurate_as_the_exact_reduction(name):
    """Issue 12: with the coupler's coordinates independent (the projective criterion's choice) dop853 at rtol = atol
    = 1e-12 gained energy on the steps before each crossing (true local error up to 1.7 tolerances where the
    estimate said 0.4) and the crank-tip error over 10 s was 6.6 (double) and 8 (modified) times that of the same
    integrator on the exact reduction theta'' = -k cos theta. The flat chart (the crank angle, constant reduced mass)
    integrates the reduction itself: within 2 times it (the issue's yardstick), on the branch, every crossing."""
    model = MODELS[name].factory()
    t_end = 10.0
    res = simulate(model, t_end=t_end, formulation="partitioning",
                   options=RunOptions(integrator="dop853", rtol=1e-12, atol=1e-12))
    k = crank_rate_constant(2)
    t, y, _ = solve(lambda _, x: np.array([x[1], -k * np.cos(x[0])]), (0.0, t_end), np.array([np.pi / 2, -1.0]),
                    method="dop853", rtol=1e-12, atol=1e-12)

    def tip(times, theta):
        exact = crank_angle_exact_cells(times, cells=2)
        return np.hypot(np.cos(theta) - np.cos(exact), np.sin(theta) - np.sin(exact)).max()

    cranks = np.stack([res.column("q", f"bar{k}.theta") for k in (1, 3, 5)], axis=1)
    assert tip(res.t, cranks[:, 0]) <= 2 * tip(t, y[0])
    assert np.max(np.abs(cranks - cranks[:, :1])) < 1e-9
    s = np.sin(crank_angle_exact_cells(np.linspace(0.0, t_end, 20001), cells=2))
    assert len(res.summary["singular_crossings"]) == np.count_nonzero(s[:-1] * s[1:] < 0)
