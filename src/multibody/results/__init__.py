"""Results of a run: labelled series, summary and events (:mod:`.result`). Re-exports only."""
from .result import Result, Series

__all__ = ["Result", "Series"]
