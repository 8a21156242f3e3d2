"""A tqdm bar over simulated time, shown only when asked (the CLI: on a terminal)."""
from __future__ import annotations


class Progress:
    """``with Progress(enabled, t0, t1) as bar: bar.update(t)``."""

    def __init__(self, enabled: bool, t0: float, t1: float):
        self.enabled, self.t0, self.t1, self.bar, self.last = enabled, t0, t1, None, t0

    def __enter__(self):
        if self.enabled:
            from tqdm import tqdm
            self.bar = tqdm(total=self.t1 - self.t0, unit="s sim", leave=False,
                            bar_format="{l_bar}{bar}| {n:.3g}/{total:.3g} s [{elapsed}<{remaining}]")
        return self

    def update(self, t: float) -> None:
        if self.bar is not None:
            self.bar.update(t - self.last)
            self.last = t

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.close()
