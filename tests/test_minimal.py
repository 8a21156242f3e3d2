"""The minimal (Voronets) formulation recovers its dependent coordinates by continuation (paper 002
eqs 10-13): however long the integrator's step, Newton starts next to the branch it left."""
import numpy as np

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


def test_minimal_never_runs_past_the_first_crossing():
    """dop853 at rtol 1e-6 / atol 1e-8 rejects long steps whose stages lie beyond the double four-bar's first
    singular configuration (theta = 0 of theta'' = -k cos theta from theta0 = pi/2); Newton's continuation
    from such a stage once took p onto another assembly (crank angle 647 rad at t = 0.43, exit 0 without the
    stops). Whatever branch Newton picks, the run stops loudly no later than that crossing: at it, or where
    its kept constraint rows lose rank (depending on the BLAS kernel)."""
    import re

    import pytest
    from scipy.optimize import brentq

    from multibody.errors import SimulationError
    from multibody.models.four_bars import crank_angle_exact

    model = MODELS["double-four-bar"].factory()
    with pytest.raises(SimulationError, match="cannot vouch") as info:
        simulate(model, t_end=2.0, formulation="minimal",
                 options=RunOptions(integrator="dop853", rtol=1e-6, atol=1e-8))
    times = [float(x) for x in re.findall(r"t = ([0-9.]+)", str(info.value))]
    t_exact = brentq(lambda t: float(np.ravel(crank_angle_exact(np.array([t])))[0]), 0.3, 1.0)
    assert max(times) < t_exact + 1e-3


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
