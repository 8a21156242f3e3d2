"""The long fuzz run of issue 17: the properties of tests/test_fuzz_cli.py and tests/test_fuzz_api.py
with hypothesis's random search, in rounds, until at least --cases cases ran (default 10,000).

Prints, per property, the cases and their outcomes (ok, user error = exit 2 / MultibodyError, run
failure = exit 1) and the properties that failed (a traceback, an uncaught exception, an "internal
error", a message not naming its culprit, a hang over 60 s, a changed earlier result); exit code 1
if any failed. Usage::

    PYTHONPATH=src python3 benchmarks/fuzz.py [--cases 10000] [--per-round 400]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = [str(ROOT / "tests" / "test_fuzz_cli.py"), str(ROOT / "tests" / "test_fuzz_api.py")]


class Failures:
    """pytest plugin: the ids of failed tests."""

    def __init__(self):
        self.failed = []

    def pytest_runtest_logreport(self, report):
        if report.failed:
            self.failed.append(report.nodeid)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--per-round", type=int, default=400, help="examples per property and round")
    args = parser.parse_args()
    os.environ["MULTIBODY_FUZZ_EXAMPLES"] = str(args.per_round)
    os.environ["HYPOTHESIS_PROFILE"] = "explore"     # new random cases every round
    sys.path.insert(0, str(ROOT / "tests"))
    import pytest

    import fuzzing

    failures, rounds, t0 = Failures(), 0, time.perf_counter()
    while sum(sum(c.values()) for c in fuzzing.OUTCOMES.values()) < args.cases:
        rounds += 1
        pytest.main(["-q", "-p", "no:cacheprovider", "--hypothesis-seed", str(rounds), *FILES], plugins=[failures])
        if failures.failed:
            break
    wall = time.perf_counter() - t0
    total = Counter()
    print(f"\n{'property':<28}{'cases':>8}{'ok':>8}{'user error':>12}{'run failure':>13}{'clean error':>13}")
    for name, c in sorted(fuzzing.OUTCOMES.items()):
        total.update(c)
        print(f"{name:<28}{sum(c.values()):>8}{c['ok']:>8}{c['user error']:>12}{c['run failure']:>13}"
              f"{c['clean error']:>13}")
    print(f"{'total':<28}{sum(total.values()):>8}{total['ok']:>8}{total['user error']:>12}"
          f"{total['run failure']:>13}{total['clean error']:>13}")
    print(f"{rounds} round(s), {wall:.0f} s; failed properties: {failures.failed or 'none'}")
    return 1 if failures.failed else 0


if __name__ == "__main__":
    sys.exit(main())
