"""What every command shares: the error contract (one paragraph on stderr, exit 2, no traceback) and
the BLAS thread limit."""
from __future__ import annotations

import os

import click
import numpy as np

from ..errors import MultibodyError

EXIT_USER_ERROR = 2


EXIT_RUN_FAILURE = 1
#: numerical failures deep in a run that no check caught: a run failure (exit 1), not a traceback
NUMERICAL = (ArithmeticError, ValueError, np.linalg.LinAlgError)


class ErrorGroup(click.Group):
    """Every error ends as one paragraph on stderr: MultibodyError exit 2; anything unforeseen (a bug
    or an uncaught numerical failure) exit 1 with its type and message, the traceback only with
    MULTIBODY_TRACEBACK=1; a memory error or an interrupt likewise (issue 17)."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except MultibodyError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(EXIT_USER_ERROR)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except KeyboardInterrupt:
            click.echo("error: interrupted (no half-written file is left).", err=True)
            ctx.exit(130)
        except Exception as exc:  # noqa: BLE001 - the last resort of the error contract
            _unforeseen(ctx, exc)


def _unforeseen(ctx, exc: Exception) -> None:
    if os.environ.get("MULTIBODY_TRACEBACK"):
        raise exc
    what = " ".join(f"{type(exc).__name__}: {exc}".split())[:500]
    name = ctx.invoked_subcommand or "multibody"
    if isinstance(exc, MemoryError):
        click.echo(f"error: '{name}' ran out of memory.", err=True)
    elif isinstance(exc, NUMERICAL):
        click.echo(f"error: '{name}' failed in a computation ({what}). Check the "
                   "options and the model's values.", err=True)
    else:
        click.echo(f"error: internal error in '{name}' ({what}). This is a bug: please "
                   "report it with the command line (MULTIBODY_TRACEBACK=1 shows the traceback).", err=True)
    ctx.exit(EXIT_RUN_FAILURE)


def limit_blas_threads() -> None:
    """One BLAS thread unless MULTIBODY_BLAS_THREADS says otherwise, for the whole command (simulate()
    limits its own run the same way): the dense systems of a mechanism are small, and a threaded BLAS on
    a loaded machine made a 300 x 300 solve 200 times slower (measured on the 2-core development machine)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(int(os.environ.get("MULTIBODY_BLAS_THREADS", "1")), user_api="blas")


def clean_messages() -> None:
    """Warnings and the library's notices (logger ``multibody``) as one line each on stderr, without
    file names and source lines (issue 13 item 9)."""
    import logging
    import warnings

    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger("multibody")
    if not logger.handlers:
        logger.addHandler(handler)
        logger.propagate = False
    warnings.showwarning = lambda message, category, *_args, **_kw: logger.warning(
        f"warning: {' '.join(str(message).split())}")
