"""After an accepted crossing step the next step is the one the step controller proposed before it (issue 12, kernel
independence): the crossing step's own error estimate carries the acceleration solve's round-off from the stage
next to the singular configuration (amplified by 1 / sigma_r), so a step chosen from it differs between BLAS kernels
(simulation.crossings.CrossingMonitor.steer). Logic on a monitor with two synthetic samples of sigma_r / sigma_1
falling linearly to zero at t* = 0.2 (paper 000 Sect. 2.5: a transversal crossing) and a stand-in stepper."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from multibody.integrate.tableaux import DOPRI5
from multibody.simulation.crossing_step import CROSSING_FRACTION, crossing_node
from multibody.simulation.crossings import CrossingMonitor


def _monitor(samples):
    m = object.__new__(CrossingMonitor)         # steer needs only these (no model: the samples are synthetic)
    m.active, m.samples, m.resume, m.pieces = True, list(samples), None, []
    m.form = SimpleNamespace(passes_singular_configurations=True)
    return m


def _stepper(t, h):
    return SimpleNamespace(t=t, h=h, direction=1.0, max_step=np.inf, tableau=DOPRI5, fixed_step=None)


def test_the_step_after_the_crossing_step_is_the_one_proposed_before_it():
    node, _ = crossing_node(DOPRI5)              # 0.55: the crossing in the middle of the widest gap of the nodes
    m, s = _monitor([(0.0, 0.02), (0.1, 0.01)]), _stepper(0.1, 0.4)
    assert node * CROSSING_FRACTION * 0.4 >= 0.1          # the crossing, 0.1 ahead, lies within the lead: step across
    m.steer(s)
    assert s.h == pytest.approx(0.1 / node)               # the crossing step: t* at node h
    s.t, s.h = s.t + s.h, 1.3                              # accepted as chosen; the controller proposes 1.3 from it
    m.samples.append((s.t, 0.0082))                        # behind the crossing: sigma_r grows again
    m.steer(s)
    assert s.h == 0.4 and m.resume is None                 # the proposal before the crossing step
    s.t, s.h = s.t + s.h, 0.7                              # later steps are the controller's own
    m.samples.append((s.t, 0.1 * (s.t - 0.2)))
    m.steer(s)
    assert s.h == 0.7


def test_a_rejected_crossing_step_keeps_the_controllers_steps():
    m, s = _monitor([(0.0, 0.02), (0.1, 0.01)]), _stepper(0.1, 0.4)
    m.steer(s)
    s.t, s.h = s.t + 0.5 * s.h, 0.05                       # the crossing step was rejected and halved
    m.samples.append((s.t, 0.1 * (0.2 - s.t)))
    fresh, other = _monitor(m.samples), _stepper(s.t, 0.05)   # the same samples without a crossing step under way
    m.steer(s)
    fresh.steer(other)
    assert s.h == other.h and m.resume == fresh.resume      # a new crossing step, from the controller's step
