"""Animations of a run (matplotlib.animation): the mechanism at decimated stored states, a time readout, a
timeline with the events (singular crossings dashed red, locks/releases/impulses solid black) and a
cursor, and the event named in the frame while it happens (the mechanism drawn red at a singular
crossing, orange at a topology event). Written as GIF (pillow), MP4 (ffmpeg) or self-contained HTML
(matplotlib's JavaScript player, ``to_jshtml``)."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from ..errors import MultibodyError
from .scenes import scene_for
from .source import write_atomically
from .timeline import active_marker, frame_indices, locked_coordinates, markers

#: default number of frames (long runs are decimated to about this many stored states)
MAX_FRAMES = 200
#: colours of the mechanism: normal, at a singular crossing, at a topology event
COLORS = {None: "C0", "singular": "C3", "topology": "C1"}


class Animation:
    """The figure and FuncAnimation of one result; ``fps`` plays the run at about real time
    (clamped to 5-25 frames per second)."""

    def __init__(self, result, model, max_frames: int = MAX_FRAMES, dpi: int = 80):
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.animation import FuncAnimation

        if max_frames < 2:
            raise MultibodyError(f"--max-frames must be at least 2, got {max_frames}.")
        self.result, self.marks = result, markers(result)
        t = np.asarray(result.t, float)
        self.idx = frame_indices(t, max_frames, [m.t for m in self.marks])
        span = float(t[-1] - t[0]) if len(t) > 1 else 0.0
        self.window = max(2.0 * span / max(len(self.idx) - 1, 1), 0.02 * span)
        self.fps = float(np.clip(len(self.idx) / span if span > 0 else 10.0, 5.0, 25.0))
        self.scene = scene_for(model, result.q[self.idx])
        self.fig = plt.figure(figsize=(7.5, 6.4), dpi=dpi)
        self._layout(plt)
        self.anim = FuncAnimation(self.fig, self._frame, frames=len(self.idx), interval=1000.0 / self.fps,
                                  blit=False)

    def _layout(self, plt):
        fig, r = self.fig, self.result
        grid = fig.add_gridspec(2, 1, height_ratios=(8, 1), hspace=0.35)
        self.ax = fig.add_subplot(grid[0], projection="3d" if self.scene.three_d else None)
        self.scene.draw(self.ax, r.q[self.idx[0]], "0.8")      # the start, faint, stays
        self.ax.plot([], [], color="0.8", lw=2, label=f"start (t = {r.t[0]:.3g} s)")
        self.scene.finish(self.ax, f"{r.summary.get('model', '')} ({r.summary.get('formulation', '')}, "
                                   f"{r.summary.get('integrator', '')})")
        tl = self.tl = fig.add_subplot(grid[1])
        t = r.t
        tl.set_xlim(t[0], t[-1] if t[-1] > t[0] else t[0] + 1.0)
        tl.set_yticks([])
        tl.set_xlabel("t [s]", fontsize=8)
        tl.tick_params(labelsize=7)
        for m in self.marks:
            tl.axvline(m.t, color="C3" if m.kind == "singular" else "k", ls="--" if m.kind == "singular" else "-",
                       lw=1.2)
        self.cursor = tl.axvline(t[0], color="C0", lw=3, alpha=0.6)
        tl.set_title("events: singular crossing (red, dashed), lock / release / impulse (black)", fontsize=7)
        self.clock = fig.text(0.02, 0.965, "", fontsize=12, family="monospace")
        self.banner = fig.text(0.02, 0.93, "", fontsize=10, color="C3")
        self.artists = []

    def _frame(self, i: int):
        k = self.idx[i]
        t = float(self.result.t[k])
        for a in self.artists:
            a.remove()
        mark = active_marker(self.marks, t, self.window)
        color = COLORS[mark.kind if mark else None]
        self.artists = self.scene.draw(self.ax, self.result.q[k], color, locked_coordinates(self.result, k))
        self.cursor.set_xdata([t, t])
        self.clock.set_text(f"t = {t:9.4f} s")
        self.banner.set_text(f"{mark.text} at t = {mark.t:.4g} s" if mark else "")
        self.banner.set_color(color)
        return self.artists

    def jshtml(self) -> str:
        """The animation as an HTML fragment (matplotlib's JavaScript player, frames embedded as PNG)."""
        import matplotlib

        with matplotlib.rc_context({"animation.embed_limit": 200.0}):
            html = self.anim.to_jshtml(fps=self.fps, embed_frames=True, default_mode="once")
        self.close()
        return offline(html)

    def close(self):
        import matplotlib.pyplot as plt

        plt.close(self.fig)

    def save(self, path: Path) -> Path:
        """Write ``path`` by its suffix (.gif, .mp4, .html) atomically; MP4 needs ffmpeg on the PATH."""
        suffix = path.suffix.lower()
        if suffix == ".mp4":
            check_ffmpeg(path)
        if suffix == ".html":
            title = self.result.summary.get("model", "animation")
            page = (f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{title}</title></head>"
                    f"<body>{self.jshtml()}</body></html>\n")
            return write_atomically(path, lambda tmp: tmp.write_text(page, encoding="utf-8"))
        from matplotlib.animation import FFMpegWriter, PillowWriter

        writer = PillowWriter(fps=self.fps) if suffix == ".gif" else FFMpegWriter(fps=self.fps)
        try:
            return write_atomically(path, lambda tmp: self.anim.save(str(tmp), writer=writer))
        finally:
            self.close()


#: the player's button icons (Font Awesome classes) as plain text, so that the page needs no network
_ICONS = {"minus": "&#8722;", "plus": "+", "fast-backward": "|&#9664;&#9664;", "step-backward": "|&#9664;",
          "play.fa-flip-horizontal": "&#9664;", "pause": "||", "play": "&#9654;", "step-forward": "&#9654;|",
          "fast-forward": "&#9654;&#9654;|"}


def offline(html: str) -> str:
    """matplotlib's player without its one network reference (the Font Awesome stylesheet on a CDN): the
    icons become text drawn by an inline stylesheet."""
    import html as html_lib
    import re

    css = "".join(f'.fa.fa-{k}::before{{content:"{html_lib.unescape(v)}"}}' for k, v in _ICONS.items())
    style = f"<style>.fa{{font-style:normal;font-family:sans-serif}}{css}</style>"
    return re.sub(r'<link rel="stylesheet"\s+href="https?://[^"]*">', lambda _m: style, html)


def check_ffmpeg(path) -> None:
    """MP4 is written by ffmpeg: a clear error before any work when it is not installed."""
    if shutil.which("ffmpeg") is None:
        raise MultibodyError(f"-o {path}: writing MP4 needs ffmpeg, which is not installed (not on the PATH); "
                             "install it (e.g. apt-get install ffmpeg) or write .gif or .html instead.")


def animate(result, model, path, max_frames: int = MAX_FRAMES) -> Path:
    """Write the animation of ``result`` (drawn with ``model``) to ``path`` (.gif, .mp4 or .html)."""
    path = Path(path)
    if path.suffix.lower() == ".mp4":
        check_ffmpeg(path)
    return Animation(result, model, max_frames).save(path)
