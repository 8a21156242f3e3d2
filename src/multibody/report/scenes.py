"""How a mechanism is drawn in one animation frame (matplotlib artists, no physics): planar bodies by their
outlines (plot.standard.draw_mechanism), serial chains by their joint polylines (``model.points``), spatial
bodies by their director frames d1, d2, d3 (red, green, purple), their outlines if given, the links from each
body's centre to its joint points, the joint axes and the ground pivots (paper 004 Sect. 4.5)."""
from __future__ import annotations

import numpy as np

from ..errors import MultibodyError
from ..model.director import LowerPairs, SpatialBodies
from ..plot.standard import draw_mechanism, finish_mechanism_axes, ground_points

#: colours of the directors d1, d2, d3 (not C0, the bodies' colour)
DIRECTOR_COLORS = ("C3", "C2", "C4")


def scene_for(model, q_frames: np.ndarray):
    """The scene that draws ``model`` (SpatialScene if it has director bodies, else PlanarScene)."""
    bodies = next((g for g in model.constraints if isinstance(g, SpatialBodies)), None)
    if bodies is not None:
        return SpatialScene(model, bodies, q_frames)
    if not model.bodies and not model.points:
        raise MultibodyError(f"model '{model.name}' has nothing to draw: no bodies (ModelBuilder), no director "
                             "bodies (SpatialModelBuilder) and no drawing points (model.points).")
    return PlanarScene(model, q_frames)


def _new_artists(ax, draw):
    """The artists that ``draw()`` added to ``ax`` (to be removed at the next frame)."""
    before = set(ax.get_children())
    draw()
    return [a for a in ax.get_children() if a not in before]


class PlanarScene:
    """Bodies with outlines and distance rods (draw_mechanism), and the polylines of ``model.points``."""

    three_d = False

    def __init__(self, model, q_frames):
        self.model = model
        polylines = [np.vstack([f(q) for q in q_frames]) for f in model.points.values()]
        self.fixed = []                      # a polyline's first point that never moves: a ground pivot
        for pts in polylines:
            first = pts[:: len(pts) // len(q_frames)]
            if np.ptp(first, axis=0).max() <= 1e-12 * max(1.0, model.length_scale):
                self.fixed.append(first[0])
        corners = [self._body_points(q) for q in q_frames] + polylines + [ground_points(model)]
        allp = np.vstack([c for c in corners if len(c)])
        self.lo, self.hi = allp.min(axis=0), allp.max(axis=0)
        width, height = np.maximum(self.hi - self.lo, 1e-9 * max(1.0, model.length_scale))
        self.aspect = float(width / height)      # a wide mechanism gets a wide, low figure

    def _body_points(self, q):
        from ..linalg.rotations import rotate

        out = [np.array([q[b.cols[0]], q[b.cols[1]]])
               + rotate(np.full(len(b.outline), q[b.cols[2]] if b.cols[2] >= 0 else 0.0), b.outline)
               for b in self.model.bodies]
        return np.vstack(out) if out else np.zeros((0, 2))

    def draw(self, ax, q, color, locked=(), muted=False):
        """The mechanism at q in ``color`` with the locked joints marked (``muted``: one colour anyway)."""
        def paint():
            if self.model.bodies:
                draw_mechanism(ax, self.model, q, color=color)
            for f in self.model.points.values():
                pts = f(q)
                ax.plot(pts[:, 0], pts[:, 1], "-o", color=color, lw=2.5, ms=4)
            held = self._locked_joints(q, locked)
            if len(held):
                ax.plot(held[:, 0], held[:, 1], "s", ms=11, mfc="none", mec="k", mew=2, label="locked joint")
        return _new_artists(ax, paint)

    def _locked_joints(self, q, locked):
        """Positions of the locked joints of a serial chain (``model.points["joints"]``: the base and every
        link's end, joint k at point k - 1 for coordinate q_k); other models: none (the banner names them)."""
        joints = self.model.points.get("joints")
        names = self.model.coordinate_names
        if joints is None or not locked:
            return np.zeros((0, 2))
        pts = joints(q)
        rows = [names.index(c) for c in locked if c in names and names.index(c) < len(pts)]
        return pts[rows]

    def finish(self, ax, title):
        pad = 0.08 * max(float(np.max(self.hi - self.lo)), 1e-9)
        finish_mechanism_axes(ax, self.model, title)
        if self.fixed:
            piv = np.array(self.fixed)
            ax.plot(piv[:, 0], piv[:, 1], "k^", ms=9, mfc="0.7", zorder=5, label="pivot (ground)")
        if "joints" in self.model.points:
            ax.plot([], [], "s", ms=9, mfc="none", mec="k", mew=2, label="locked joint")
        ax.legend(loc="upper right", fontsize=7, framealpha=0.8)     # inside: the frame has no margin for it
        ax.set_xlim(self.lo[0] - pad, self.hi[0] + pad)
        ax.set_ylim(self.lo[1] - pad, self.hi[1] + pad)
        ax.set_aspect("equal", adjustable="box")      # every frame fits: the box shrinks, not the limits


class SpatialScene:
    """Director frames, outlines, links to the joint points, joint axes (R, C, P, E pairs) and ground pivots."""

    three_d, aspect = True, 1.0

    def __init__(self, model, bodies: SpatialBodies, q_frames):
        self.model, self.bodies = model, bodies
        self.pairs = [g for g in model.constraints if isinstance(g, LowerPairs)]
        phis = np.vstack([self._frames(q)[0] for q in q_frames])
        joints = np.vstack([self._joint_points(q)[0] for q in q_frames] or [np.zeros((0, 3))])
        allp = np.vstack([phis, joints, np.zeros((1, 3))] + [self._outlines(q) for q in q_frames])
        span = float(np.max(np.ptp(allp, axis=0)))
        self.scale = 0.25 * (span if span > 0 else model.length_scale)
        self.centre = 0.5 * (allp.min(axis=0) + allp.max(axis=0))
        self.half = 0.5 * span + self.scale

    def _frames(self, q):
        """phi (b + 1, 3) and D (b + 1, 3, 3), the ground as the last index (-1), as model.director."""
        phi, D = self.bodies.frames(q)
        return np.concatenate([phi, np.zeros((1, 3))]), np.concatenate([D, np.eye(3)[None]])

    def _outlines(self, q) -> np.ndarray:
        """All outline points at q (m, 3), global."""
        phi, D = self._frames(q)
        pts = [phi[b] + np.asarray(o) @ D[b].T for b, o in enumerate(self.bodies.outlines) if o is not None]
        return np.vstack(pts) if pts else np.zeros((0, 3))

    def _joint_points(self, q):
        """Global joint points on the parent and child side, the parents' and children's centres, the
        global joint axes n of every pair (each (k, 3), stacked over the pair groups)."""
        phi, D = self._frames(q)
        out = [[], [], [], [], []]
        for g in self.pairs:
            p1 = phi[g.parent] + np.einsum("kij,kj->ki", D[g.parent], g.X1)
            p2 = phi[g.child] + np.einsum("kij,kj->ki", D[g.child], g.X2)
            n = np.einsum("kij,kj->ki", D[g.parent], g.n) if g.kind != "S" else np.zeros_like(p1)
            for lst, arr in zip(out, (p1, p2, phi[g.parent], phi[g.child], n)):
                lst.append(arr)
        return [np.vstack(x) if x else np.zeros((0, 3)) for x in out]

    def lines(self, q) -> dict[str, list[np.ndarray]]:
        """The polylines (k, 3) of the mechanism at q by kind: the directors "d1", "d2", "d3" (length
        ``scale``), the body "outline"s, the "link"s from each body's centre to its joint points, the joint
        "axis" n of R, C, P, E pairs; and the points "centre" (bodies) and "pivot" (joints to the ground)."""
        phi, D = self._frames(q)
        out = {k: [] for k in ("d1", "d2", "d3", "outline", "link", "axis")}
        for b in range(len(self.bodies.names)):
            for i in range(3):
                out[f"d{i + 1}"].append(np.array([phi[b], phi[b] + self.scale * D[b][:, i]]))
            outline = self.bodies.outlines[b] if b < len(self.bodies.outlines) else None
            if outline is not None:
                out["outline"].append(phi[b] + np.asarray(outline) @ D[b].T)   # as _outlines
        p1, p2, c1, c2, n = self._joint_points(q)
        grounded = np.concatenate([g.parent < 0 for g in self.pairs]) if self.pairs else np.zeros(0, bool)
        for k in range(len(p1)):
            if not grounded[k]:
                out["link"].append(np.array([c1[k], p1[k]]))
            out["link"].append(np.array([p2[k], c2[k]]))
            if np.any(n[k]):
                out["axis"].append(np.array([p1[k] - 0.6 * self.scale * n[k], p1[k] + 0.6 * self.scale * n[k]]))
        out["centre"], out["pivot"] = [phi[:-1]], [p1[grounded]]
        return out

    def draw(self, ax, q, color, locked=(), muted=False):
        """The bodies at q in ``color``; the directors in their own colours unless ``muted``."""
        styles = {"d1": dict(color=DIRECTOR_COLORS[0], lw=2), "d2": dict(color=DIRECTOR_COLORS[1], lw=2),
                  "d3": dict(color=DIRECTOR_COLORS[2], lw=2), "outline": dict(color=color, lw=1.2),
                  "link": dict(color=color, lw=1, ls="--"), "axis": dict(color="k", lw=2.5),
                  "centre": dict(color=color, marker="o", ms=5, ls="none"),
                  "pivot": dict(color="k", marker="^", ms=9, mfc="0.7", ls="none")}

        def paint():
            for kind, polylines in self.lines(q).items():
                style = dict(styles[kind], color=color) if muted and kind.startswith("d") else styles[kind]
                for pts in polylines:
                    if len(pts):
                        ax.plot(*pts.T, **style)
        return _new_artists(ax, paint)

    def finish(self, ax, title):
        for setter, c0 in zip((ax.set_xlim, ax.set_ylim, ax.set_zlim), self.centre):
            setter(c0 - self.half, c0 + self.half)
        ax.set_box_aspect((1, 1, 1))
        ax.set_xlabel("x [m]")
        ax.set_ylabel("y [m]")
        ax.set_zlabel("z [m]")
        for i, c in enumerate(DIRECTOR_COLORS):
            ax.plot([], [], color=c, lw=2, label=f"director d{i + 1}")
        ax.plot([], [], color="k", lw=2.5, label="joint axis")
        ax.plot([], [], "k^", mfc="0.7", label="pivot (ground)")
        ax.legend(loc="upper left", fontsize=7, frameon=False)
        ax.set_title(title)
