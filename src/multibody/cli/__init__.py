"""Command line: a thin layer over models, simulate, results and plot; one module per command.

Every user error (unknown model or option, bad model file, inconsistent initial conditions) is
printed as one paragraph on stderr with exit code 2 and no traceback; a failed run writes nothing.
A new command is one module defining a ``click.command`` and one line in :data:`COMMANDS`.
"""
from __future__ import annotations

import click

from .analyze import analyze_cmd
from .animate import animate_cmd
from .common import ErrorGroup, clean_messages, limit_blas_threads
from .criterion import criterion_cmd
from ..results.tempfiles import exit_on_signals
from .export import export_cmd
from .import_urdf import import_urdf_cmd
from .kinematics_cmd import kinematics_cmd
from .models import models_cmd
from .reactions import reactions_experiment_cmd
from .report import report_cmd
from .run import run_cmd
from .statics import equilibrium_cmd, linearize_cmd, modes_cmd
from .sweep import sweep_cmd

COMMANDS = (models_cmd, run_cmd, analyze_cmd, criterion_cmd, sweep_cmd, reactions_experiment_cmd, export_cmd,
            import_urdf_cmd, equilibrium_cmd, modes_cmd, linearize_cmd, kinematics_cmd)
COMMANDS += (animate_cmd, report_cmd)   # issue 15


@click.group(cls=ErrorGroup)
@click.version_option(package_name="multibody")
def main():
    """multibody: dynamics of constrained mechanical systems in redundant coordinates."""
    limit_blas_threads()
    clean_messages()
    click.get_current_context().call_on_close(exit_on_signals())   # handlers restored when the command ends


for _command in COMMANDS:
    main.add_command(_command)
