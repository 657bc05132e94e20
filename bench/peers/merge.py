#!/usr/bin/env python3
"""Merges dlc-bench/1 reports (dlc's, the peers', single results or sweeps)
into one sweep file, {"schema": "dlc-bench/1", "results": [...]}, so that
one file holds a whole session for `dlc-bench compare` and the HTML report.

  python3 bench/peers/merge.py -o all.json dlc.json torch-*.json jax-*.json

A --compile-only report has no timing and is refused, as is a file that is
not a dlc-bench/1 report; the error names the file.
"""

import argparse
import json
import sys

SCHEMA = "dlc-bench/1"


def results_of(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit("merge.py: error: cannot read %s as JSON: %s" % (path, e))
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise SystemExit("merge.py: error: %s is not a %s report" % (path, SCHEMA))
    results = doc["results"] if isinstance(doc.get("results"), list) else [doc]
    for r in results:
        if r.get("compile_only") or not isinstance(r.get("samples_per_sec"), dict):
            raise SystemExit("merge.py: error: %s has a result without samples_per_sec "
                             "(a --compile-only report?)" % path)
    return results


def main(argv=None):
    p = argparse.ArgumentParser(prog="merge.py", description=__doc__.split("\n\n")[0])
    p.add_argument("-o", "--output", required=True)
    p.add_argument("reports", nargs="+")
    args = p.parse_args(argv)
    merged = []
    for path in args.reports:
        merged.extend(results_of(path))
    with open(args.output, "w") as f:
        json.dump({"schema": SCHEMA, "results": merged}, f, indent=2)
        f.write("\n")
    print("merge.py: %d results from %d reports -> %s"
          % (len(merged), len(args.reports), args.output), file=sys.stderr)


if __name__ == "__main__":
    main()
