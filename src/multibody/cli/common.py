"""What every command shares: the error contract (one paragraph on stderr, exit 2, no traceback) and
the BLAS thread limit."""
from __future__ import annotations

import os

import click

from ..errors import MultibodyError

EXIT_USER_ERROR = 2


class ErrorGroup(click.Group):
    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except MultibodyError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(EXIT_USER_ERROR)


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
