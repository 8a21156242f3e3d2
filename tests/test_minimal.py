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
