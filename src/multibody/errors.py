"""Errors a user can act on.

Every exception raised for bad input derives from :class:`MultibodyError`; the command line prints its
message as one paragraph and exits with a non-zero code, without a traceback.
"""


class MultibodyError(Exception):
    """Base class of all errors caused by user input (model, options, files)."""


class ModelError(MultibodyError):
    """The model description is invalid (unknown body, non-positive mass, NaN, ...)."""


class AssemblyError(MultibodyError):
    """Initial positions or velocities cannot be made consistent with the constraints."""


class SimulationError(MultibodyError):
    """A run could not be completed (step size collapse, singular system, ...)."""


class FileFormatError(MultibodyError):
    """A file to be read (result file, sweep table) is not what it claims, is damaged or is refused as
    unsafe (external links or storage, oversized content)."""
