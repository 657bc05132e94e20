"""Prints each row of predict-seed-study.test's report and checks that its
figures hold together (see the test)."""
import json
import sys

rows = json.load(open(sys.argv[1]))["results"]
one = {r["model"]: r["step_ms"] for r in rows if r["gpus"] == 1}
for r in rows:
    eff = one[r["model"]] / r["step_ms"]
    ok = (abs(eff - r["efficiency"]) < 2e-3 and 0 < r["efficiency"] <= 1.0005
          and r["exposed_comm_ms"] <= r["comm_ms"] + 1e-3
          and r["exposed_bucket_ms"] <= r["exposed_comm_ms"] + 1e-3
          and (r["gpus"] == 1 or r["all_reduces"] > 0))
    print(f"{r['model']} {r['gpus']} GPUs: efficiency {r['efficiency']:.3f}, exposed "
          f"{r['exposed_comm_ms']:.2f} of {r['comm_ms']:.2f} ms, by bucket "
          f"{r['exposed_by_bucket']} {'ok' if ok else 'BAD'}")
print(f"{len(rows)} rows")
