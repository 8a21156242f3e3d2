"""multibody: dynamics of constrained mechanical systems in redundant coordinates.

Flat public API (re-exports only)."""
from .assembly import State, Terms, Workspace, evaluate
from .errors import AssemblyError, ModelError, MultibodyError, SimulationError
from .kinematics import consistent_state, solve_positions, solve_velocities
from .linalg.rank import RankTolerance, pivoted_qr
from .model import Model, ModelBuilder, Motion, matrix_system, serial_chain
from .results.result import Result, Series
from .simulation.driver import RunOptions, simulate

__all__ = [
    "AssemblyError", "Model", "ModelBuilder", "ModelError", "Motion", "MultibodyError", "Result", "Series",
    "SimulationError", "State", "Terms", "Workspace", "RankTolerance", "consistent_state", "evaluate",
    "matrix_system", "pivoted_qr", "serial_chain", "simulate", "RunOptions", "solve_positions",
    "solve_velocities",
]

