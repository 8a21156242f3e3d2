"""Built-in benchmark mechanisms, shared by tests, benchmarks and the command line.

Each entry maps a model name to a factory (a function with a docstring naming its source) and the
default end time of ``multibody run``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .four_bars import double_four_bar
from .linkages import four_bar, slider_crank
from .pendulums import pendulum, pendulum_redundant


@dataclass(frozen=True)
class Entry:
    factory: Callable
    t_end: float

    @property
    def summary(self) -> str:
        doc = (self.factory.__doc__ or "").strip().splitlines()
        return doc[0] if doc else ""


MODELS: dict[str, Entry] = {
    "pendulum": Entry(pendulum, 2.0),
    "pendulum-redundant": Entry(pendulum_redundant, 2.0),
    "slider-crank": Entry(slider_crank, 1.0),
    "four-bar": Entry(four_bar, 1.0),
    "double-four-bar": Entry(double_four_bar, 10.0),
}
