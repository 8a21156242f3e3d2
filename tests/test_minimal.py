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
