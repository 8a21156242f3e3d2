"""The minimal (Voronets) formulation recovers its dependent coordinates by continuation (paper 002
eqs 10-13): however long the integrator's step, Newton starts next to the branch it left."""
import numpy as np
import pytest

from multibody import RunOptions, simulate
from multibody.models import MODELS


def test_driven_four_bar_returns_to_its_start_after_whole_crank_turns():
    """The four-bar's crank is driven at 2 pi rad/s and the model has no freedom left, so the integrator
    takes one step for the whole run. After 2 s (two crank turns) a Grashof crank-rocker is exactly back
    in its initial configuration: every coordinate equals q0 except the crank angle, which grew by 4 pi.
    Before the continuation, Newton from the start went straight to t = 2 s and put the coupler 73 turns
    away (the same pose, the wrong angle)."""
    model = MODELS["four-bar"].factory()
    result = simulate(model, t_end=2.0, formulation="minimal", options=RunOptions())
    expected = np.array(model.q0, float)
    expected[model.coordinate_names.index("crank.theta")] += 4 * np.pi
    np.testing.assert_allclose(result["q"][-1], expected, atol=1e-9)


def test_minimal_stops_at_a_singular_configuration():
    """Where A loses rank the dependent block A_p is singular for every choice of minimal coordinates
    (paper 002 Sect. 3.3: they are only locally valid), so Newton would pick a branch by round-off (at
    rtol 1e-4 the cranks ended 270 rad apart and the run exited 0). The run stops at the double four-bar's
    first singular (all-horizontal) configuration instead: theta = 0 of the exact reduction
    theta'' = -k cos theta, from theta0 = pi/2."""
    import re

    import pytest
    from scipy.optimize import brentq

    from multibody.errors import SimulationError
    from multibody.models.four_bars import crank_angle_exact

    model = MODELS["double-four-bar"].factory()
    with pytest.raises(SimulationError, match="singular configuration") as info:
        simulate(model, t_end=2.0, formulation="minimal", options=RunOptions(rtol=1e-4, atol=1e-4))
    t_stop = float(re.search(r"at t = ([0-9.]+)", str(info.value)).group(1))
    t_exact = brentq(lambda t: float(np.ravel(crank_angle_exact(np.array([t])))[0]), 0.3, 1.0)
    assert abs(t_stop - t_exact) < 1e-3


@pytest.mark.parametrize("integrator, rtol, atol", [("dop853", 1e-6, 1e-8), ("dopri5", 1e-4, 1e-4),
                                                     ("dop853", 1e-4, 1e-6), ("dopri5", 1e-12, 1e-14)])
def test_minimal_stops_at_the_first_crossing_and_names_it(integrator, rtol, atol):
    """dop853 at rtol 1e-6 / atol 1e-8 once stopped at t = 0.428 with "cannot be recovered" (a rejected step's stage
    beyond the crossing put Newton on another assembly), dop853 at 1e-4 / 1e-6 located the crossing 1.4e-3 s late
    (a step across it). Now every run stops loudly at the double four-bar's first singular configuration (theta = 0
    of theta'' = -k cos theta from theta0 = pi/2) and names it with the rank there: 12 of the 14 kept rows (paper 000
    Sect. 3.2), or 13 where the rank tolerance cuts only one of the two vanishing singular values. 1e-4 s is the
    phase error of the exact reduction itself at rtol 1e-4 (the singular matrix's reduced runs)."""
    import re

    from scipy.optimize import brentq

    from multibody.errors import SimulationError
    from multibody.models.four_bars import crank_angle_exact

    model = MODELS["double-four-bar"].factory()
    with pytest.raises(SimulationError, match="cannot vouch for its branch") as info:
        simulate(model, t_end=2.0, formulation="minimal", options=RunOptions(integrator=integrator, rtol=rtol,
                                                                               atol=atol))
    found = re.search(r"a singular configuration at t = ([0-9.]+) \(rank (\d+) of 14", str(info.value))
    assert found, str(info.value)
    t_exact = brentq(lambda t: float(np.ravel(crank_angle_exact(np.array([t])))[0]), 0.3, 1.0)
    assert abs(float(found.group(1)) - t_exact) < 1e-4
    assert int(found.group(2)) in (12, 13)


def test_a_stage_beyond_the_crossing_does_not_move_the_next_attempt():
    """The dependent coordinates of a stage are continued from the accepted state that starts its step, never from
    a stage of another attempt: right-hand sides at t = 0.61 are bitwise the same after a stage at t = 0.8 (beyond
    the double four-bar's crossing at 0.714) as in a fresh formulation."""
    from multibody.formulations.minimal import Minimal

    model = MODELS["double-four-bar"].factory()
    run = simulate(model, t_end=0.6, formulation="lagrange", options=RunOptions(rtol=1e-10, atol=1e-10))
    q, v = run["q"][-1], run["v"][-1]
    values = []
    for detour in (False, True):
        form = Minimal(model)
        y = form.initial_state(0.6, q, v)
        f0 = form.rhs(0.6, y)
        if detour:
            form.rhs(0.8, y + 0.2 * f0)
        values.append(form.rhs(0.61, y + 0.01 * f0))
    np.testing.assert_array_equal(values[0], values[1])


def test_a_stage_that_cannot_be_recovered_rejects_its_attempt():
    """A stage whose dependent coordinates cannot be recovered does not end the run: the attempt's error (both of
    DOP853's estimates) is infinite, so the controller rejects it and takes its smallest factor
    (integrate.controllers); the next attempt is measured as usual."""
    from multibody.formulations.minimal import Minimal

    model = MODELS["double-four-bar"].factory()
    form = Minimal(model)
    y = form.initial_state(0.0, np.array(model.q0, float), np.array(model.v0, float))
    err = np.full_like(y, 1e-9)
    form._failed = (0.5, "Newton did not converge")
    assert np.all(np.isinf(form.error_filter(0.5, y, err))) and np.all(np.isinf(form.error_filter(0.5, y, err)))
    np.testing.assert_array_equal(form.error_filter(0.1, y, err), err)


def test_minimal_failure_hint_names_the_singular_configuration():
    """A failure (step collapse, Newton) at the all-horizontal configuration of the double four-bar, where A
    has rank 12 of 14 (paper 000 Sect. 3.2), says that minimal coordinates cannot pass it; at the vertical
    start (rank 14, a regular configuration) it adds nothing."""
    from multibody.formulations.minimal import Minimal

    model = MODELS["double-four-bar"].factory()
    form = Minimal(model)
    form.initial_state(0.0, np.array(model.q0, float), np.array(model.v0, float))
    assert form.failure_hint(0.0, None) == ""
    q = np.asarray(model.configuration("singular"), float)
    form._accepted = (0.0, q, np.zeros_like(q))
    assert "cannot vouch for its branch" in form.failure_hint(0.0, None)
