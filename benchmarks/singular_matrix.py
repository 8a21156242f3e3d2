"""Parallelogram chains through their singular configurations (issue 12): the whole matrix model x formulation x
integrator x rtol x atol.

Per run it prints and writes (``--csv``, one row after each run): the exit status (``ok``, ``STOPPED`` with the run's
own SimulationError message, ``TIMEOUT`` after ``--timeout`` CPU s, ``n/a`` where the integrator does not integrate
that formulation), the crank spread (modulo 2 pi; 0 on the parallel branch; for the 2x2 four-bar the largest spread
within the lower and within the upper cranks), the crank-tip error against the exact reduction theta'' = -k cos theta
(models.modified_four_bars.crank_angle_exact_cells: the double four-bar, the modified double and triple four-bars and
the N-four-bar share it with their number of cells; the 2-DOF 2x2 four-bar has no closed form: "-"), the singular
crossings reported against the number expected (sign changes of sin theta of the exact solution; 7 in 2 s for the 2x2
four-bar, paper 000 Sect. 3.5) and those the run's own crank passes (crossings_own, the multiples of pi between its
accepted angles, so a step across two counts two; models with an exact reduction), accepted steps, the smallest step,
the largest after-step move (error scales; and as StepWatch judges it: the largest turn of the velocity / shift of the
positions, and the largest velocity change in tolerances, simulation.step_watch), the relative energy drift, the wall
time and the run's CPU time (the machine may be shared), the code it ran on (source: the git tree hash of ``src``,
source_tree; ``--check`` counts the rows measured on the source as it is), and for a model with an exact reduction the
tip error of the same integrator at the same rtol / atol on the reduction itself (reduced_tip_error_m: the project's
own Runge-Kutta on theta'' = -k cos theta), the yardstick (reduced_envelope_m: the largest such reduced error over
rtol, atol x 10^(j/8), |j| <= 3) and tip_ratio = phase(tip error) / phase(yardstick); the criterion a cell must meet
(on the branch, every crossing, tip_ratio <= 1) and its reasons are in singular_yardstick.py, and ``--check CSV``
lists the failing cells and exits 1 if there are any. The columns are appended to FIELDS, and rows appended to a CSV
written before keep that file's columns. Each run is a forked process (a hung or very long run is cut at ``--timeout``
CPU seconds, or ten times that in wall time; CPU, not wall: on a shared machine the wall time measures the
neighbours). Run it under two BLAS kernels, e.g. OPENBLAS_CORETYPE=Haswell and OPENBLAS_CORETYPE=Prescott, with one
BLAS thread:

    PYTHONPATH=src OPENBLAS_NUM_THREADS=1 python benchmarks/singular_matrix.py [--models double-four-bar,n-four-bar-10]
        [--formulations lagrange,nullspace-flow] [--integrators dopri5,dop853,generalized-alpha] [--rtols 1e-4,1e-8]
        [--atols same,hundredth] [--timeout 600] [--csv benchmarks/results/singular_matrix.csv]
    python benchmarks/singular_matrix.py --table benchmarks/results/singular_matrix.csv [--kernel Prescott]  # summary
    python benchmarks/singular_matrix.py --add-reference benchmarks/results/singular_matrix.csv  # fill the reference
    python benchmarks/singular_matrix.py --check benchmarks/results/singular_matrix.csv [--kernel Prescott]  # judge
    PYTHONPATH=src python benchmarks/singular_matrix.py --rerun-stale benchmarks/results/singular_matrix.csv \
        --csv NEW.csv  # the rows of this kernel measured on another source, again (merge NEW.csv by key)

Formulation names are those of ``--formulation``; ``nullspace-flow`` is nullspace with ``--basis flow``
(``nullspace`` alone: the default continued basis). generalized-alpha takes fixed steps (``--ga-steps``), not rtol.
"""
from __future__ import annotations

import argparse
import csv
import multiprocessing as mp
import os
import re
import resource
import subprocess
import time
from pathlib import Path

import numpy as np

import multibody
from multibody import RunOptions, simulate
from multibody.errors import MultibodyError, SimulationError
from multibody.models.modified_four_bars import crank_angle_exact_cells
from singular_yardstick import MODELS, check, crank_groups, envelope, off_branch, reduced_tip_error
from singular_yardstick import tip_ratio as yardstick_ratio

ALL_FORMULATIONS = "lagrange,nullspace,nullspace-flow,partitioning,projection,minimal"
#: crossings of the 2x2 four-bar in 2 s (paper 000 Sect. 3.5; tests/test_crossings.py)
CROSSINGS_2X2 = 7
FIELDS = ["model", "formulation", "integrator", "rtol", "atol", "step", "status", "crank_spread_rad", "tip_error_m",
          "crossings", "crossings_expected", "steps", "min_step_s", "max_jump_scales", "energy_drift_rel",
          "wall_s", "blas_kernel", "message", "cpu_s", "max_branch_move", "max_action_tolerances",
          "reduced_tip_error_m", "tip_ratio", "reduced_envelope_m", "crossings_own", "source"]


def expected_crossings(cells, t_end) -> int:
    """Sign changes of sin theta of the exact solution (the cranks horizontal: every bar collinear)."""
    if cells is None:
        return CROSSINGS_2X2
    s = np.sin(crank_angle_exact_cells(np.linspace(0.0, t_end, 20001), cells=cells))
    return int(np.count_nonzero(s[:-1] * s[1:] < 0))


def with_reference(row, cells, t_end) -> dict:
    """The row with reduced_tip_error_m (the reduced run at the row's rtol / atol), reduced_envelope_m (the yardstick:
    the largest reduced run over the neighbouring tolerances, singular_yardstick.envelope) and tip_ratio (phase of the
    tip error over phase of the envelope; <= 1 is consistent with the tolerance) where they exist (a finished rtol run
    of a model with an exact reduction)."""
    if cells is None or row.get("status") != "ok" or row["step"] or row.get("tip_error_m", "-") == "-":
        return row
    rtol, atol = float(row["rtol"]), float(row["atol"])
    ref = reduced_tip_error(cells, t_end, row["integrator"], rtol, atol)
    bar = envelope(cells, t_end, row["integrator"], rtol, atol, reduced=reduced_tip_error)
    return {**row, "reduced_tip_error_m": f"{ref:.2e}", "reduced_envelope_m": f"{bar:.2e}",
            "tip_ratio": f"{yardstick_ratio(float(row['tip_error_m']), bar):.3g}"}


def measure(r, cells) -> dict:
    """The row's numbers from a finished run."""
    groups = crank_groups(r.series["q"].labels)
    spread = max(float(np.abs(np.angle(np.exp(1j * (th - th[:, :1])))).max()) for th in     # modulo 2 pi
                 (np.stack([r.column("q", c) for c in g], axis=1) for g in groups))
    tip, own = "-", ""
    if cells is not None:
        th, exact = r.column("q", groups[0][0]), crank_angle_exact_cells(r.t, cells=cells)
        tip = f"{np.hypot(np.cos(th) - np.cos(exact), np.sin(th) - np.sin(exact)).max():.2e}"
        own = int(np.abs(np.diff(np.floor(th / np.pi))).sum())      # multiples of pi the run's own crank passes
    s = r.summary
    crossings = len(s.get("singular_crossings", []))
    return {"status": "ok", "crank_spread_rad": f"{spread:.1e}", "tip_error_m": tip,
            "crossings": f"{crossings}{'' if s.get('singular_crossings_monitored', True) else ' (not monitored)'}",
            "crossings_own": own,
            "steps": s.get("steps", ""), "min_step_s": f"{s['min_step']:.1e}",
            "max_jump_scales": f"{s.get('max_projection_jump', 0.0):.1e}",
            "max_branch_move": f"{s.get('max_branch_move', 0.0):.1e}",
            "max_action_tolerances": f"{s.get('max_action_tolerances', 0.0):.1e}",
            "energy_drift_rel": f"{float(s.get('energy_drift_rel', np.nan)):.1e}"}


def one(name, formulation, integrator, rtol, atol, step) -> dict:
    """One run of the matrix (in the forked child)."""
    factory, cells, t_end = MODELS[name]
    form, form_opts = formulation, {}
    if formulation == "nullspace-flow":
        form, form_opts = "nullspace", {"basis": "flow"}
    opts = RunOptions(integrator=integrator, step=step) if step else RunOptions(integrator=integrator, rtol=rtol,
                                                                                  atol=atol)
    model = factory()
    try:
        r = simulate(model, t_end=t_end, formulation=form, options=opts, formulation_options=form_opts)
    except SimulationError as exc:
        return {"status": "STOPPED", "message": " ".join(str(exc).split())[:300]}
    except MultibodyError as exc:
        return {"status": "n/a", "message": " ".join(str(exc).split())[:300]}
    return measure(r, cells)


def _child(conn, args, cpu_limit=None):
    if cpu_limit:       # a CPU limit, not a wall one: on a shared machine the wall time measures the neighbours
        resource.setrlimit(resource.RLIMIT_CPU, (int(np.ceil(cpu_limit)), resource.RLIM_INFINITY))
    try:
        c0 = time.process_time()
        row = one(*args)
        conn.send({**row, "cpu_s": f"{time.process_time() - c0:.1f}"})
    except Exception as exc:     # noqa: BLE001 (a crash is a row of the matrix, not the end of it)
        conn.send({"status": "ERROR", "message": f"{type(exc).__name__}: {exc}"[:300]})


def isolated(args, timeout: float, wall_factor: float = 10.0) -> dict:
    """one(*args) in a forked process, cut after ``timeout`` CPU seconds (SIGXCPU in the child) or ``wall_factor``
    times that in wall time."""
    parent, child = mp.get_context("fork").Pipe(duplex=False)
    p = mp.get_context("fork").Process(target=_child, args=(child, args, timeout))
    p.start()
    deadline, out = time.monotonic() + wall_factor * timeout, None
    while out is None and p.is_alive() and time.monotonic() < deadline:
        if parent.poll(1.0):
            out = parent.recv()
    if out is None and parent.poll(0.1):
        out = parent.recv()
    if out is None:
        cpu = _cpu_of(p.pid)
        out = {"status": "TIMEOUT", "cpu_s": f"{cpu:.1f}" if cpu is not None else "",
               "message": f"> {timeout:g} s CPU" if p.exitcode is not None or (cpu or 0) >= timeout else
               f"> {wall_factor * timeout:g} s wall (CPU {cpu:.1f} s)"}
    if p.is_alive():
        p.kill()
    p.join()
    return out


def _cpu_of(pid: int):
    """User + system CPU seconds of a live process (Linux /proc), None once it is gone."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def source_tree(imported: bool = True) -> str:
    """The code a row was measured on: the git tree hash of this checkout's ``src`` directory (``git rev-parse
    HEAD:src``), with ``+dirty`` when that directory differs from it; ``unknown`` when git cannot tell or, with
    ``imported``, when the package the runs import is not that directory. Two commits with the same ``src`` give the
    same hash, so a row stays current across benchmark, test and documentation commits and goes stale with any
    change of the package."""
    root = Path(__file__).resolve().parents[1]
    if imported and Path(multibody.__file__).resolve().parent != root / "src" / "multibody":
        return "unknown"
    git = ["git", "-C", str(root)]
    tree = subprocess.run(git + ["rev-parse", "HEAD:src"], capture_output=True, text=True)
    dirty = subprocess.run(git + ["status", "--porcelain", "--", "src"], capture_output=True, text=True)
    if tree.returncode or dirty.returncode:
        return "unknown"
    return tree.stdout.strip()[:12] + ("+dirty" if dirty.stdout.strip() else "")


def measured_on(row, source: str) -> bool:
    """Whether a CSV row was measured on ``source`` (a source_tree value); never for a dirty or unknown source, whose
    hash does not name one code."""
    return row.get("source") == source and not source.endswith(("+dirty", "unknown"))


def provenance(path: str, kernel: str = "") -> str:
    """How many rows of a CSV (of ``kernel``, all when empty) were measured on the source as it is now, per kernel."""
    now = source_tree(imported=False)
    counts = {}
    for r in csv.DictReader(open(path, newline="")):
        if not kernel or r.get("blas_kernel") == kernel:
            c = counts.setdefault(r.get("blas_kernel", ""), [0, 0])
            c[0] += measured_on(r, now)
            c[1] += 1
    parts = ", ".join(f"{k} {c[0]} of {c[1]}" for k, c in sorted(counts.items()))
    return f"rows measured on this source (src tree {now}): {parts}"


def step_label(step: float) -> str:
    """A generalized-alpha step as written in the rows: 1e-03, or all its digits when it is not round (a step chosen
    to put a grid point on a crossing, e.g. 0.0010004979401862)."""
    return f"{step:.0e}" if float(f"{step:.0e}") == step else f"{step:.17g}"


def stale_cases(path: str, kernel: str):
    """(model, formulation, integrator, rtol, atol, step) of the rows of a CSV of ``kernel`` not measured on the source
    as it is (``--rerun-stale``), in the file's order."""
    now = source_tree()
    for r in csv.DictReader(open(path, newline="")):
        if r.get("blas_kernel") == kernel and not measured_on(r, now) and r["model"] in MODELS:
            step = float(r["step"]) if r.get("step") else None
            yield (r["model"], r["formulation"], r["integrator"], float(r["rtol"] or 0.0), float(r["atol"] or 0.0),
                   step)


def cases(a):
    """(model, formulation, integrator, rtol, atol, step) in the order they run."""
    if a.rerun_stale:
        yield from stale_cases(a.rerun_stale, os.environ.get("OPENBLAS_CORETYPE", "default"))
        return
    for name in a.models.split(","):
        for f in a.formulations.split(","):
            for i in a.integrators.split(","):
                if i == "generalized-alpha":
                    for h in map(float, a.ga_steps.split(",")):
                        yield name, f, i, 0.0, 0.0, h
                    continue
                for rtol in map(float, a.rtols.split(",")):
                    for kind in a.atols.split(","):
                        atol = {"same": rtol, "hundredth": rtol / 100}.get(kind) or float(kind)
                        yield name, f, i, rtol, atol, None


def table(path: str, kernel: str = "default") -> str:
    """A Markdown table of a CSV written by this script: one line per model, formulation and integrator, one
    column per (rtol, atol) or generalized-alpha step; a cell is the crank-tip error (the crank spread for the
    2x2 four-bar), tip_ratio (x ratio, where the CSV has it: the tip's phase error over the yardstick's, <= 1 is
    consistent with the tolerance, singular_yardstick) and the crossings found / expected (OFF BRANCH first where the
    cranks are not parallel), or STOPPED at the time named, TIMEOUT; n/a rows are left out. Then one line
    "(exact reduction)" per model and integrator with the reduced run's tip error at the cell's tolerance and the
    yardstick, the envelope over the neighbouring tolerances ("at tol / envelope"). Only the rows measured under the BLAS kernel ``kernel`` (column
    blas_kernel); rows written before the reference columns existed have none."""
    rows = [r for r in csv.DictReader(open(path)) if r["blas_kernel"] == kernel]
    cols = sorted(dict.fromkeys((r["rtol"], r["atol"], r["step"]) for r in rows if r["status"] != "n/a"),
                  key=lambda c: (bool(c[2]), -float(c[0] or 0), -float(c[1] or 0), -float(c[2] or 0)))
    head = [f"h {h}" if h else f"{a} / {b}" for a, b, h in cols]
    lines = ["| model | formulation | integrator | " + " | ".join(head) + " |", "|---" * (3 + len(cols)) + "|"]
    for key in dict.fromkeys((r["model"], r["formulation"], r["integrator"]) for r in rows):
        cells = {(r["rtol"], r["atol"], r["step"]): r for r in rows
                 if (r["model"], r["formulation"], r["integrator"]) == key}
        if all(r["status"] == "n/a" for r in cells.values()):
            continue
        lines.append("| " + " | ".join(key) + " | " + " | ".join(_cell(cells.get(c)) for c in cols) + " |")
    refs = {}
    for r in rows:
        if r.get("reduced_tip_error_m"):
            env = f" / {r['reduced_envelope_m']}" if r.get("reduced_envelope_m") else ""
            refs.setdefault((r["model"], r["integrator"]), {})[(r["rtol"], r["atol"], r["step"])] = \
                r["reduced_tip_error_m"] + env
    for (model, integrator), ref in refs.items():
        lines.append(f"| {model} | (exact reduction) | {integrator} | " + " | ".join(ref.get(c, "") for c in cols)
                     + " |")
    return "\n".join(lines)


def _cell(r) -> str:
    if r is None:
        return ""
    if r["status"] == "ok":
        err = r["tip_error_m"] if r["tip_error_m"] != "-" else f"spread {r['crank_spread_rad']}"
        off = f"OFF BRANCH (spread {r['crank_spread_rad']} rad) " if off_branch(r) else ""
        ratio = f" x{r['tip_ratio']}" if r.get("tip_ratio") else ""     # absent in rows written before the column
        return f"{off}{err}{ratio} ({r['crossings']}/{r['crossings_expected']})"
    if r["status"] == "STOPPED":
        at = re.search(r" at t = ([-+0-9.e]+[0-9])", r["message"]) or re.search(r" to ([-+0-9.e]+[0-9]) \(", r["message"])
        return f"STOPPED t = {at.group(1)}" if at else "STOPPED"
    return r["status"]


def add_reference(path: str) -> None:
    """Rewrite a CSV written by this script (any earlier layout) with FIELDS, the reference columns filled."""
    rows = list(csv.DictReader(open(path, newline="")))
    for i, r in enumerate(rows):
        if r["model"] in MODELS and r.get("status") == "ok":
            rows[i] = with_reference({**r, "reduced_tip_error_m": "", "tip_ratio": "", "reduced_envelope_m": ""},
                                     *MODELS[r["model"]][1:])
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, FIELDS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def _header(path) -> list[str]:
    """The columns of an existing CSV (rows appended to a file written before a column was added keep its layout),
    else FIELDS."""
    try:
        with open(path, newline="") as f:
            return next(csv.reader(f), None) or FIELDS
    except FileNotFoundError:
        return FIELDS


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--formulations", default=ALL_FORMULATIONS)
    p.add_argument("--integrators", default="dopri5,dop853,generalized-alpha")
    p.add_argument("--rtols", default="1e-4,1e-5,1e-6,1e-7,1e-8,1e-9,1e-10,1e-11,1e-12")
    p.add_argument("--atols", default="same,hundredth",
                   help="same: atol = rtol; hundredth: atol = rtol / 100; a number: that atol")
    p.add_argument("--ga-steps", default="1e-3,1e-4")
    p.add_argument("--timeout", type=float, default=600.0, help="CPU seconds per run (a wall limit of ten times that)")
    p.add_argument("--csv", default="")
    p.add_argument("--rerun-stale", default="", help="instead of the product of the options: the rows of this CSV of "
                                                      "the current kernel not measured on the source as it is")
    p.add_argument("--table", default="", help="print a CSV written by --csv as a Markdown table and stop")
    p.add_argument("--kernel", default="", help="--table: the rows of this blas_kernel (default, Prescott, ...; "
                                                "default when not given); --check: only its rows (all when not given)")
    p.add_argument("--add-reference", default="", help="fill reduced_tip_error_m, reduced_envelope_m and tip_ratio of "
                                                        "every row of this CSV (rewritten with FIELDS) and stop")
    p.add_argument("--check", default="", help="print the cells of this CSV that fail the criterion "
                                               "(singular_yardstick) and exit 1 if there are any; --kernel K: only K")
    a = p.parse_args()
    if a.check:
        status = check(a.check, a.kernel)
        print(provenance(a.check, a.kernel))
        raise SystemExit(status)
    if a.add_reference:
        add_reference(a.add_reference)
        return
    if a.table:
        print(table(a.table, a.kernel or "default"))
        return
    kernel, source = os.environ.get("OPENBLAS_CORETYPE", "default"), source_tree()
    expected = {}
    out = open(a.csv, "a", newline="") if a.csv else None
    writer = csv.DictWriter(out, _header(a.csv), extrasaction="ignore") if out else None
    if out and out.tell() == 0:
        writer.writeheader()
    for name, f, i, rtol, atol, step in cases(a):
        if name not in expected:
            expected[name] = expected_crossings(*MODELS[name][1:])
        t0 = time.perf_counter()
        row = {"model": name, "formulation": f, "integrator": i, "rtol": f"{rtol:.0e}" if step is None else "",
               "atol": f"{atol:.0e}" if step is None else "", "step": "" if step is None else step_label(step),
               "crossings_expected": expected[name], "blas_kernel": kernel, "source": source,
               **isolated((name, f, i, rtol, atol, step), a.timeout)}
        row["wall_s"] = f"{time.perf_counter() - t0:.1f}"
        row = with_reference(row, MODELS[name][1], MODELS[name][2])
        label = f"h {step_label(step)}" if step else f"rtol {rtol:.0e} atol {atol:.0e}"
        body = (row.get("message", "") if row["status"] != "ok" else
                f"spread {row['crank_spread_rad']} rad  tip {row['tip_error_m']} m  crossings {row['crossings']}/"
                f"{row['crossings_expected']}  steps {row['steps']}  min step {row['min_step_s']} s  jump "
                f"{row['max_jump_scales']} scales, turn {row['max_branch_move']}, {row['max_action_tolerances']} tol"
                f"  reduced tip {row.get('reduced_tip_error_m', '-')} m, envelope {row.get('reduced_envelope_m', '-')} m, "
                f"ratio {row.get('tip_ratio', '-')}")
        print(f"{name:24s} {f:14s} {i:17s} {label}  {row['status']}  {body[:260]}  ({row['wall_s']} s, "
              f"CPU {row.get('cpu_s', '-')} s)", flush=True)
        if writer:
            writer.writerow(row)
            out.flush()


if __name__ == "__main__":
    main()
