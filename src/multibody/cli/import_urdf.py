"""``multibody import-urdf``: write a URDF robot as a spatial model file (to which loop closures can be added)."""
from __future__ import annotations

from pathlib import Path

import click

from ..results.outputs import atomic_write, check_file


@click.command("import-urdf")
@click.argument("urdf", type=click.Path(dir_okay=False))
@click.option("-o", "--out", default=None, metavar="PATH",
              help="Model file to write (.toml; default URDF's name with .toml).")
def import_urdf_cmd(urdf, out):
    """Read URDF with Pinocchio and write its tree (revolute, continuous, prismatic joints; fixed joints
    merged) as spatial director bodies and pairs in a model file. `multibody run robot.urdf` runs a URDF
    directly; a model file with `urdf = "robot.urdf"` adds joints (loop closures) on top."""
    from ..io.toml_writer import dumps
    from ..io.urdf import urdf_data

    path = Path(Path(urdf).with_suffix(".toml").name if out is None else out)
    check_file("--out", path, (".toml",))
    text = f"# multibody model file imported from {urdf} (SI units)\n" + dumps(urdf_data(urdf))
    atomic_write(path, lambda tmp: Path(tmp).write_text(text), "--out")
    click.echo(f"wrote {path}")
