"""`python -m mutation [GROUP ...]`: run the groups named (all by default) and rewrite REPORT.md.

Run through `nox -s mutants -- GROUP ...`, which installs the pinned mutmut and the test
dependencies (and not mcpbind itself: the tests must import the mutated copy).
"""

from __future__ import annotations

import argparse
import os

from mutation.groups import BY_NAME, GROUPS
from mutation.report import write_report
from mutation.run import collect_group, retest_survivors, run_group


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="nox -s mutants --", description=__doc__)
    parser.add_argument("groups", nargs="*", metavar="GROUP", help=f"of {', '.join(BY_NAME)}; all by default")
    parser.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 2, help="mutants tested at once (default: the CPUs)"
    )
    parser.add_argument(
        "--nice", type=int, default=10, help="added to the niceness of the run (default 10: a shared machine)"
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="reuse the group's stage in .mutation/ and mutmut's verdicts there (resume a run "
        "that was stopped) instead of starting afresh",
    )
    parser.add_argument(
        "--survivors",
        action="store_true",
        help="re-test only the mutants the group's last whole run left undetected (after tests were "
        "added), each in a fresh process; the modules must be unchanged since that run",
    )
    parser.add_argument(
        "--collect",
        action="store_true",
        help="only write the groups' results from their stage in .mutation/ (a run finished by hand "
        "with mutmut there), then the report; --wall and --note say how it was run",
    )
    parser.add_argument("--wall", type=int, default=0, help="with --collect: the run's wall time in seconds")
    parser.add_argument("--note", default="", help="with --collect: how the run was made, for the report")
    parser.add_argument(
        "--report-only", action="store_true", help="only rewrite REPORT.md from mutation/results/"
    )
    args = parser.parse_args(argv)
    unknown = [name for name in args.groups if name not in BY_NAME]
    if unknown:
        parser.error(f"unknown groups {unknown}; choose from {list(BY_NAME)}")
    if args.collect:
        for name in args.groups:
            path = collect_group(BY_NAME[name], jobs=args.jobs, wall=args.wall, note=args.note)
            print(f"mutants: wrote {path}")
    elif not args.report_only:
        if args.nice:
            os.nice(args.nice)
        for group in [BY_NAME[name] for name in args.groups] or list(GROUPS):
            if args.survivors:
                print(f"mutants: wrote {retest_survivors(group, jobs=args.jobs)}")
            else:
                print(f"mutants: wrote {run_group(group, jobs=args.jobs, keep=args.keep)}")
    print(f"mutants: wrote {write_report()}")


if __name__ == "__main__":
    main()
