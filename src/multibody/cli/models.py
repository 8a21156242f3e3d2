"""``multibody models``: the built-in models."""
from __future__ import annotations

import click


@click.command("models")
def models_cmd():
    """List the built-in models."""
    from ..models import MODELS

    width = max(map(len, MODELS))
    for name, entry in MODELS.items():
        click.echo(f"{name:<{width}}  {entry.summary}")
