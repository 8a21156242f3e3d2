"""Model description: bodies, markers, joints, constraints, forces -> an immutable Model."""
from .builder import ModelBuilder
from .chain import serial_chain
from .motion import Motion
from .system import Model, matrix_system

__all__ = ["Model", "ModelBuilder", "Motion", "matrix_system", "serial_chain"]
