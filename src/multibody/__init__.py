"""multibody: dynamics of constrained mechanical systems in redundant coordinates.

Flat public API (re-exports only)."""
from .analysis.equilibrium import equilibrium
from .analysis.linearize import linearize, modes
from .assembly import State, Terms, Workspace, evaluate
from .errors import AssemblyError, ModelError, MultibodyError, SimulationError
from .kinematics import consistent_state, solve_positions, solve_velocities
from .linalg.rank import RankTolerance, pivoted_qr
from .model import Model, ModelBuilder, Motion, matrix_system, serial_chain
from .results.result import Result, Series
from .model.director_builder import SpatialModelBuilder
from .simulation.driver import RunOptions, simulate
from .simulation.events import lock_at
from . import docstrings  # noqa: E402,F401  numpydoc sections of the names below (issue 22)

try:
    from importlib.metadata import PackageNotFoundError, version as _version
    __version__ = _version("multibody")
except PackageNotFoundError:     # running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = [
    "AssemblyError", "Model", "ModelBuilder", "ModelError", "Motion", "MultibodyError", "Result", "Series",
    "SimulationError", "State", "Terms", "Workspace", "RankTolerance", "consistent_state", "evaluate",
    "matrix_system", "pivoted_qr", "serial_chain", "simulate", "RunOptions", "solve_positions",
    "solve_velocities", "SpatialModelBuilder", "lock_at", "equilibrium", "linearize", "modes", "__version__",
]

