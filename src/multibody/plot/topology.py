"""Figures of runs with constraint activation, in the style of paper 002 Figs 2-4 (and 6-8).

- ``<prefix>-naive.png`` (Fig. 2): joint angles and generalized momenta without momentum-consistent
  switching;
- ``<prefix>-angles-rates.png`` (Fig. 3): joint angles and joint rates with consistent switching;
- ``<prefix>-momenta-energy.png`` (Fig. 4): generalized momenta of the unlocked joints and total energy;
- ``<prefix>-naive-vs-consistent.png``: the angles of both runs on one axis (Figs 2a/3a, 8a/8b).

Event times are drawn as dotted vertical lines. Only plotting here: every number comes from the
Result (series ``q``, ``v``, ``momentum``, ``energy`` and the event log).
"""
from __future__ import annotations

from pathlib import Path


def _events(ax, res):
    for e in res.events:
        ax.axvline(e["t"], color="0.6", lw=0.8, ls=":")


def _lines(ax, res, key, ylabel, title, labels=None, scale=1.0):
    s = res.series[key]
    for j, name in enumerate(labels or s.labels):
        ax.plot(res.t, scale * s.data[:, j], lw=1.2, label=name)
    _events(ax, res)
    ax.set_xlabel("t [s]")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="best")


def _pair(path, res, left, right, suptitle):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    _lines(axes[0], res, *left)
    if right[0] == "energy":
        axes[1].plot(res.t, res["energy"][:, 2], color="k", lw=1.2, label="total")
        _events(axes[1], res)
        axes[1].set(xlabel="t [s]", ylabel="energy [J]")
        axes[1].set_title(right[2], fontsize=10)
        axes[1].grid(True, alpha=0.3)
    else:
        _lines(axes[1], res, *right)
    fig.suptitle(suptitle, fontsize=11)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def topology_figures(consistent, out_dir, *, naive=None, prefix: str | None = None,
                     gear_ratio: float | None = None) -> list[Path]:
    """Write the figures listed in the module docstring; returns their paths.

    consistent: Result of a run with a momentum-consistent transition; naive: optional Result of the
    same run with ``transition="naive"``; gear_ratio: draw motor angles and rates (gear_ratio x the
    joint's, paper 002 Figs 7b, 8) instead of joint angles and rates."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    prefix = prefix or consistent.summary.get("model", "run")
    how = consistent.summary.get("transition", "")
    what, scale = ("motor", gear_ratio) if gear_ratio else ("joint", 1.0)
    paths = [
        _pair(out / f"{prefix}-angles-rates.png", consistent,
              ("q", f"{what} angle [rad]", f"a) {what} angles", None, scale),
              ("v", f"{what} rate [rad/s]", f"b) {what} rates", None, scale),
              f"{prefix}: momentum-consistent switching ({how}) - paper 002 Fig. 3"
              + (f" (motor = {gear_ratio:g} x joint, Figs 7-8)" if gear_ratio else "")),
        _pair(out / f"{prefix}-momenta-energy.png", consistent,
              ("momentum", "P = F^T M v", "a) generalized momenta of the unlocked joints"),
              ("energy", "", "b) total energy"),
              f"{prefix}: momentum-consistent switching ({how}) - paper 002 Fig. 4"),
    ]
    if naive is not None:
        paths.append(_pair(out / f"{prefix}-naive.png", naive,
                           ("q", "joint angle [rad]", "a) joint angles"),
                           ("momentum", "P = F^T M v", "b) generalized momenta of the unlocked joints"),
                           f"{prefix}: NAIVE switching (locked rates zeroed, not momentum consistent)"
                           " - paper 002 Fig. 2"))
        paths.append(_compare(out / f"{prefix}-naive-vs-consistent.png", consistent, naive, prefix))
    return paths


def _compare(path, consistent, naive, prefix):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    names = consistent.coordinate_names
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for j, name in enumerate(names):
        c = colors[j % len(colors)]
        axes[0].plot(consistent.t, consistent.q[:, j], color=c, lw=1.2, label=f"{name} consistent")
        axes[0].plot(naive.t, naive.q[:, j], color=c, lw=1.0, ls="--", label=f"{name} naive")
    for res, ls, label in ((consistent, "-", "consistent"), (naive, "--", "naive")):
        axes[1].plot(res.t, res["energy"][:, 2], color="k", ls=ls, lw=1.2, label=label)
    for ax, title, ylabel in ((axes[0], "a) joint angles", "joint angle [rad]"),
                              (axes[1], "b) total energy", "energy [J]")):
        _events(ax, consistent)
        ax.set(xlabel="t [s]", ylabel=ylabel)
        ax.set_title(title, fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
    fig.suptitle(f"{prefix}: naive (dashed) vs momentum-consistent (solid) switching", fontsize=11)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def event_table(res) -> str:
    """The event log as text (t, energy before/after, momentum continuity error, impulses)."""
    rows = []
    for e in res.events:
        imp = "-" if e["impulse"] is None else ", ".join(f"{k}={v:.6g}" for k, v in e["impulse"].items())
        rows.append(f"t={e['t']:g}  {e['name']}  E {e['energy_before']:.6g} -> {e['energy_after']:.6g} J  "
                    f"dP={e['momentum_continuity_error']:.2e}  Lambda: {imp}")
    return "\n".join(rows) if rows else "no events"

