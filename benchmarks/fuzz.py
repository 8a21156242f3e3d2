"""The long fuzz run of issue 17: the properties of tests/test_fuzz_cli.py and tests/test_fuzz_api.py
with hypothesis's random search, in rounds, until at least --cases cases ran (default 10,000).

Every property of every round runs in its own process (``--child``) under a wall-time limit
(--property-limit; its process group is killed after it): a case stuck where no Python signal handler
runs (C code) ends its process through faulthandler (tests/fuzzing.py: stacks printed) and is
reported as a hang; the next property still runs. Progress, one line per property and round, goes to
--log (default benchmarks/results/fuzz_progress.log) as it happens.

Prints, per property, the cases and their outcomes (ok, user error = exit 2, run failure = exit 1,
clean error = MultibodyError of the API) and the properties that failed (a traceback, an uncaught
exception, an "internal error", a message not naming its culprit, a hang over 60 s, a changed earlier
result); exit code 1 if any failed. Usage::

    PYTHONPATH=src nice python3 benchmarks/fuzz.py [--cases 10000] [--per-round 400] [--log FILE]
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = [ROOT / "tests" / "test_fuzz_cli.py", ROOT / "tests" / "test_fuzz_api.py"]
OUTCOMES = ("ok", "user error", "run failure", "clean error")


def properties() -> list[str]:
    """Node ids of the fuzz properties (test functions of FILES, in file order)."""
    ids = []
    for f in FILES:
        ids += [f"{f}::{line.split('(')[0][4:]}" for line in f.read_text().splitlines()
                if line.startswith("def test_")]
    return ids


def child(node: str, seed: int, out: str) -> int:
    """Run one property (pytest in this process) and write {"outcomes": {...}, "failed": bool} to ``out``."""
    sys.path.insert(0, str(ROOT / "tests"))
    import pytest

    import fuzzing

    code = pytest.main(["-q", "-x", "-p", "no:cacheprovider", "--hypothesis-seed", str(seed), node])
    Path(out).write_text(json.dumps({"outcomes": {k: dict(v) for k, v in fuzzing.OUTCOMES.items()},
                                     "failed": int(code) != 0}))
    return int(code)


def run_property(node: str, seed: int, limit: float, log) -> tuple[dict, str | None]:
    """One property in a child process: ({property: Counter}, None or why it failed)."""
    with tempfile.TemporaryDirectory(prefix="mbfuzz-round-") as d:
        out, hang_log = Path(d) / "outcomes.json", Path(d) / "hang.log"
        cmd = [sys.executable, __file__, "--child", node, str(seed), str(out)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True, env={**os.environ, "MULTIBODY_FUZZ_HANG_LOG": str(hang_log)})
        try:
            text, _ = proc.communicate(timeout=limit)
            why = None if proc.returncode == 0 else f"exit {proc.returncode}"
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            text, _ = proc.communicate()
            why = f"no end within {limit:g} s (killed)"
        data = json.loads(out.read_text()) if out.exists() else {"outcomes": {}}
        stacks = hang_log.read_text() if hang_log.exists() else ""
    if why is not None:
        log.write(f"--- output of {node} (seed {seed}):\n{text[-6000:]}\n{stacks[:6000]}\n---\n")
        if "Timeout" in stacks or "Hang" in text or "no answer within" in text:
            why += ", a hang"
    return {k: Counter(v) for k, v in data["outcomes"].items()}, why


def report(outcomes: dict, failed: list, rounds: int, wall: float, cpu: float) -> None:
    total = Counter()
    print(f"\n{'property':<28}{'cases':>8}" + "".join(f"{o:>13}" for o in OUTCOMES))
    for name, c in sorted(outcomes.items()):
        total.update(c)
        print(f"{name:<28}{sum(c.values()):>8}" + "".join(f"{c[o]:>13}" for o in OUTCOMES))
    print(f"{'total':<28}{sum(total.values()):>8}" + "".join(f"{total[o]:>13}" for o in OUTCOMES))
    print(f"{rounds} round(s), {wall:.0f} s wall, {cpu:.0f} s CPU of the children; "
          f"failed properties: {failed or 'none'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--per-round", type=int, default=400, help="examples per property and round")
    parser.add_argument("--property-limit", type=float, default=3600.0,
                        help="wall seconds one property may take in one round before it is killed")
    parser.add_argument("--log", default=str(ROOT / "benchmarks" / "results" / "fuzz_progress.log"))
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:          # the settings come from the parent's environment
        return child(args.child[0], int(args.child[1]), args.child[2])
    os.environ["MULTIBODY_FUZZ_EXAMPLES"] = str(args.per_round)
    os.environ["HYPOTHESIS_PROFILE"] = "explore"     # new random cases every round
    outcomes, failed, rounds, t0 = {}, [], 0, time.perf_counter()
    with open(args.log, "a", buffering=1) as log:
        log.write(f"# {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC: fuzz run to {args.cases} cases, "
                  f"{args.per_round} examples per property and round\n")
        while sum(sum(c.values()) for c in outcomes.values()) < args.cases and not failed:
            rounds += 1
            for node in properties():
                start = time.perf_counter()
                got, why = run_property(node, rounds, args.property_limit, log)
                for name, c in got.items():
                    outcomes.setdefault(name, Counter()).update(c)
                if why:
                    failed.append(f"{node.split('::')[1]} (round {rounds}: {why})")
                log.write(f"round {rounds} {node.split('::')[1]}: {sum(sum(c.values()) for c in got.values())} "
                          f"cases, {time.perf_counter() - start:.0f} s, {why or 'passed'}; total "
                          f"{sum(sum(c.values()) for c in outcomes.values())} cases\n")
    cpu = os.times()
    report(outcomes, failed, rounds, time.perf_counter() - t0, cpu.children_user + cpu.children_system)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
