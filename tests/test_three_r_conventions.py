"""Paper 002 Sect. 6: the text does not say where the 3R pendulum's q1 is measured from (Fig. 1 is not in it);
both readings are built in: from the x-axis and from the downward vertical."""
import numpy as np

from multibody.formulations.registry import make_formulation
from multibody.models import MODELS
from multibody.simulation import RunOptions, simulate


def test_vertical_convention_hangs_at_rest_at_zero():
    """q = 0 from the downward vertical is the hanging equilibrium: no acceleration at rest (in the x-axis reading
    the same configuration is q = (-pi/2, 0, 0))."""
    for name, q in (("three-r-pendulum-locking-vertical", np.zeros(3)),
                    ("three-r-pendulum-locking", np.array([-np.pi / 2, 0.0, 0.0]))):
        model = MODELS[name].factory()
        acc = make_formulation("lagrange", model).accelerations(0.0, q, np.zeros(3))
        np.testing.assert_allclose(acc.vdot, 0.0, atol=1e-12)


def test_the_two_readings_differ_by_a_rotation_of_q1_by_pi_2():
    """The vertical reading from q0 is the x-axis reading from q0 - (pi/2, 0, 0): the same motion, locks
    included, with q1 shifted (both released from rest at (pi/6, pi/6, pi/6) in their own reading)."""
    opts = RunOptions(rtol=1e-10, atol=1e-12)
    entry = MODELS["three-r-pendulum-locking-vertical"]
    events = list(entry.events)
    vertical = simulate(entry.factory(), t_end=2.0, events=events, options=opts)
    base = MODELS["three-r-pendulum-locking"].factory()
    xaxis = simulate(base.with_initial(q0=base.q0 - np.array([np.pi / 2, 0, 0])), t_end=2.0, events=events,
                     options=opts)
    np.testing.assert_allclose(vertical.q[-1], xaxis.q[-1] + np.array([np.pi / 2, 0, 0]), atol=1e-7)
    other = simulate(base, t_end=2.0, events=events, options=opts)      # the x-axis reading from q0
    assert np.max(np.abs(vertical.q[-1] - other.q[-1])) > 0.1
