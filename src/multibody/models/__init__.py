"""Built-in benchmark mechanisms, shared by tests, benchmarks and the command line.

Each entry maps a model name to a factory (a function with a docstring naming its source) and the
default end time of ``multibody run``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .four_bars import double_four_bar, n_four_bar
from .linkages import four_bar, slider_crank
from .modified_four_bars import double_four_bar_modified, four_bar_2x2_modified, triple_four_bar_modified
from .pendulums import pendulum, pendulum_redundant
from .projective import four_bar_relative, physical_pendulum
from .locking import PENDULUM_EVENTS, ROBOT_EVENTS, robot_emergency_stop, three_r_pendulum_locking
from .locking import three_r_pendulum_locking_vertical
from .nonholonomic_models import door_two_hinges, knife_edge_sled, mobile_robot
from .spatial_models import cylindrical_pair, gyro_top, planar_pair, six_body_linkage
from .spatial_mechanisms import GIMBAL_EVENTS, gimbal_lock, rssr_spring, spatial_slider_crank


@dataclass(frozen=True)
class Entry:
    factory: Callable
    t_end: float
    #: events applied by ``multibody run`` (constraint activation, :mod:`multibody.simulation.events`)
    events: tuple = ()
    #: the fixed step of the paper's figures, the default --step of ``--integrator energy-momentum``
    step: float | None = None
    #: run settings ``multibody run`` uses unless given (as a model file's [simulation] table: rtol, atol, ...)
    settings: tuple = ()

    @property
    def summary(self) -> str:
        doc = (self.factory.__doc__ or "").strip().splitlines()
        return doc[0] if doc else ""


#: spatial models: dt = 0.01 as in paper 004 Figs 9, 13-14, 17, 23 and 25
MODELS: dict[str, Entry] = {
    "pendulum": Entry(pendulum, 2.0),
    "pendulum-redundant": Entry(pendulum_redundant, 2.0),
    "slider-crank": Entry(slider_crank, 1.0),
    "four-bar": Entry(four_bar, 1.0),
    "double-four-bar": Entry(double_four_bar, 10.0),
    # rtol 1e-7: the IFToMM benchmark's 1e-3 m crank-tip accuracy (measured 1.1e-4 m; the global default 1e-6
    # gives 2.5e-3 m: tolerances relative to |x| loosen for the bars far from the origin)
    "n-four-bar": Entry(n_four_bar, 20.0, settings=(("rtol", 1e-7),)),
    "double-four-bar-modified": Entry(double_four_bar_modified, 10.0),
    "triple-four-bar-modified": Entry(triple_four_bar_modified, 10.0),
    "four-bar-2x2-modified": Entry(four_bar_2x2_modified, 2.0),
    "physical-pendulum": Entry(physical_pendulum, 2.0),
    "four-bar-relative": Entry(four_bar_relative, 3.0),
    "three-r-pendulum-locking": Entry(three_r_pendulum_locking, 2.0, PENDULUM_EVENTS),
    "three-r-pendulum-locking-vertical": Entry(three_r_pendulum_locking_vertical, 2.0, PENDULUM_EVENTS),
    "robot-emergency-stop": Entry(robot_emergency_stop, 0.5, ROBOT_EVENTS),
    "gyro-top": Entry(gyro_top, 1.0, step=0.01),
    "cylindrical-pair": Entry(cylindrical_pair, 1.0, step=0.01),
    "planar-pair": Entry(planar_pair, 0.1, step=0.01),
    "six-body-linkage": Entry(six_body_linkage, 0.3, step=0.01),
    "mobile-robot": Entry(mobile_robot, 8.0),
    "door-two-hinges": Entry(door_two_hinges, 1.0),
    "knife-edge-sled": Entry(knife_edge_sled, 10.0),
    "spatial-slider-crank": Entry(spatial_slider_crank, 1.0),
    "rssr-spring": Entry(rssr_spring, 2.0, step=0.005),
    "gimbal-lock": Entry(gimbal_lock, 1.0, GIMBAL_EVENTS),
}
