"""Checks the provenance a dlc-bench JSON report carries against the world.

    check_provenance.py REPORT.json SOURCE_DIR COMMAND_FRAGMENT

dlc_revision must be git's 12-digit HEAD of SOURCE_DIR (with "-dirty" when
tracked files differ) or "unknown" outside a checkout; date an ISO 8601 UTC
time within a day of now; host.cores this machine's CPUs; command must
contain COMMAND_FRAGMENT. Every result of a sweep is checked. Prints
"provenance ok" or what is wrong.
"""
import datetime
import json
import os
import subprocess
import sys


def git(source, *args):
    try:
        return subprocess.run(["git", "-C", source, *args], capture_output=True, text=True)
    except FileNotFoundError:
        return None


def main():
    path, source, fragment = sys.argv[1:4]
    report = json.load(open(path))
    results = report.get("results", [report])
    head = git(source, "rev-parse", "--short=12", "HEAD")
    if head is None or head.returncode != 0:
        allowed = {"unknown"}
    else:
        commit = head.stdout.strip()
        allowed = {commit, commit + "-dirty"}
    now = datetime.datetime.now(datetime.timezone.utc)
    problems = []
    for r in results:
        if r.get("dlc_revision") not in allowed:
            problems.append("dlc_revision %r, expected one of %s" % (r.get("dlc_revision"), sorted(allowed)))
        try:
            date = datetime.datetime.strptime(r["date"], "%Y-%m-%dT%H:%M:%SZ").replace(
                tzinfo=datetime.timezone.utc)
            if abs((now - date).total_seconds()) > 86400:
                problems.append("date %s is not today" % r["date"])
        except (KeyError, TypeError, ValueError) as e:
            problems.append("date: %r (%s)" % (r.get("date"), e))
        cores = (r.get("host") or {}).get("cores")
        if cores != os.cpu_count():
            problems.append("host.cores %r, this machine has %d" % (cores, os.cpu_count()))
        if fragment not in (r.get("command") or ""):
            problems.append("command %r lacks %r" % (r.get("command"), fragment))
    print("\n".join(problems) if problems else "provenance ok (%d results)" % len(results))


if __name__ == "__main__":
    main()
