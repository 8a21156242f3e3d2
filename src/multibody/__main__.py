"""``python -m multibody``: the command line (same as the ``multibody`` script)."""
from .cli import main

main(prog_name="multibody")
