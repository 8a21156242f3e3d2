"""Equations of motion from a model (the contract: :mod:`.base`; the names a run can use: :mod:`.registry`)."""
