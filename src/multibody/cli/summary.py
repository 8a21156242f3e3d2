"""The human-readable summary of a run (``multibody run`` without --json)."""
from __future__ import annotations


def human_summary(s: dict) -> str:
    # a fixed step has no error control: rtol/atol do not apply (energy-momentum's Newton tolerance is below)
    tols = f"step {s['step']:g} s" if s.get("step") is not None else f"rtol {s['rtol']:g}, atol {s['atol']:g}"
    lines = [f"model {s['model']}  formulation {s['formulation']}  integrator {s['integrator']} ({tols})"
             f"  {s.get('backend', 'numpy')} path",
             f"  t_end {s['t_end']:g} s: {s['steps']} steps ({s['rejected_steps']} rejected), "
             f"{s['rhs_evaluations']} right-hand-side evaluations, {s['wall_time_s']:.3g} s wall",
             (f"  energy drift (relative)  {s['energy_drift_rel']:.3e}" if s.get("energy_conserved", True) else
              f"  energy change (relative) {s['energy_drift_rel']:.3e}  ({s['energy_note'].split(':')[0]}: "
              "not an error measure)" + (f"\n  energy balance (relative) {s['energy_balance_rel']:.3e}  "
                                          "(E - E0 - work of drivers and forces)" if "energy_balance_rel" in s else "")),
             f"  max |Phi|                {s['constraint_violation_max']:.3e}",
             f"  max |A v + Phi_t|        {s['velocity_violation_max']:.3e}"
             + ("  (at the nodes; the scheme enforces G v_n+1/2 = 0, paper 004 eq. 12)"
                if "velocity_violation_note" in s else ""),
             "  final q  " + ", ".join(f"{n}={x:.6g}" for n, x in zip(s["coordinate_names"], s["final_q"]))]
    if "newton_iterations" in s and "factorizations" in s:   # generalized-alpha
        lines[1] = (f"  t_end {s['t_end']:g} s: {s['steps']} steps of {s['step']:g} s ({s['halved_steps']} halved), "
                    f"{s['newton_iterations']} Newton iterations, {s['factorizations']} sparse factorisations, "
                    f"{s['wall_time_s']:.3g} s wall (rho_inf {s['rho_inf']:g})")
    if s.get("integrator") == "energy-momentum":
        lines.append(f"  Newton (tol {s['newton_tolerance']:g}): max {s['newton_iterations_max']} iterations per "
                     f"step; iteration-matrix condition {s['condition_min']:.3g} .. {s['condition_max']:.3g}; "
                     f"{s['unknowns']} unknowns, {s['degrees_of_freedom']} DOF, redundant "
                     f"{', '.join(s['redundant_constraints']) or 'none'}")
    for e in s.get("events", []):
        lines.append(f"  event t={e['t']:g} {e['name']} ({e['transition']}): energy {e['energy_before']:.6g} -> "
                     f"{e['energy_after']:.6g} J, momentum continuity error {e['momentum_continuity_error']:.2e}")
    if "singular_events" in s:   # nullspace (paper 000): basis, rank and singular configurations
        lines.append(f"  basis {s['basis']}: rank {s['generic_rank']}, dof {s['dof']}, redundancy {s['redundancy']}; "
                     f"largest qd jump {s['qd_ind_jump_max_rel']:.3g} (relative); singular at t = "
                     + (", ".join(f"{e['t']:.6g} (rank {e['rank']})" for e in s["singular_events"]) or "none"))
    if "coordinate_switches" in s:   # partitioning (paper 001): independent coordinates and their switches
        lines.append(f"  independent {', '.join(s['independent_initial']) or '-'}; "
                     f"{len(s['coordinate_switches'])} switches" + "".join(
                         f"; t={w['t']:.4g} {','.join(w['old'])}->{','.join(w['new'])}"
                         for w in s["coordinate_switches"][:6]))
    if s.get("non_unique_reactions"):   # paper 003: reactions a rigid model does not determine
        lines.append(f"  NOT unique (redundancy {s['redundancy_max']}): reactions of "
                     f"{', '.join(s['non_unique_reactions'])} (see series reactions_unique)")
    for key in ("result_file", "csv_file", "report_file"):
        if key in s:
            lines.append(f"  wrote {s[key]}")
    for p in s.get("figures", []):
        lines.append(f"  figure {p}")
    return "\n".join(lines)
