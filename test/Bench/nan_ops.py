"""Checks that NaN propagates through dlc's max-like ops as in PyTorch.

  nan_ops.py WORKDIR

relu and max_pool2d each run as a one-op model (op_grads.py's harness:
loss = sum(op(...) * r)) on data holding one NaN; dlc's loss and gradients
must match PyTorch's, NaN for NaN (relu(nan) is nan, a max over a NaN is
nan, and relu's gradient passes through a NaN input). reduce_max has no
gradient rule, so NanPropagationTest checks its kernel.
"""

import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from op_grads import DLC_BENCH, Case, model_text, randn, ty  # noqa: E402


def cases():
    x = randn(3, 5)
    x[1, 2] = np.nan
    relu = Case("relu_nan", {"x": x}, ["%%y = train.relu %%x : %s" % ty((3, 5))],
                lambda p, d: F.relu(p["x"]), (3, 5))
    x = randn(1, 2, 4, 4)
    x[0, 1, 2, 3] = np.nan
    pool = Case("max_pool2d_nan", {"x": x},
                ["%%y = train.max_pool2d %%x {kernel_size = array<i64: 2, 2>, "
                 "stride = array<i64: 2, 2>} : %s" % ty((1, 2, 4, 4))],
                lambda p, d: F.max_pool2d(p["x"], 2, 2), (1, 2, 2, 2))
    return [relu, pool]


def run(workdir, case):
    src = os.path.join(workdir, case.name)
    os.makedirs(src, exist_ok=True)
    for n, v in list(case.params.items()) + [(n, v) for n, (v, _) in case.data.items()]:
        np.save(os.path.join(src, n + ".npy"), v)
    r = randn(*case.out_shape)
    np.save(os.path.join(src, "r.npy"), r)
    model = os.path.join(workdir, case.name + ".mlir")
    with open(model, "w") as f:
        f.write(model_text(case))
    out = os.path.join(workdir, case.name + ".out")
    proc = subprocess.run([DLC_BENCH, model, "--warmup", "0", "--steps", "1", "--repeats", "1",
                           "--params-in", src, "--inputs-in", src, "--dump-out", out,
                           "--allow-nonfinite", "-o", os.devnull],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return ["dlc-bench failed: " + proc.stderr.strip()]
    loss = float(np.load(os.path.join(out, "loss.npy")))
    tp = {n: torch.tensor(v, requires_grad=True) for n, v in case.params.items()}
    td = {n: torch.tensor(v) for n, (v, _) in case.data.items()}
    tloss = (case.torch_fn(tp, td) * torch.tensor(r)).sum()
    tloss.backward()
    problems = []
    if not np.allclose(loss, tloss.item(), rtol=1e-4, equal_nan=True):
        problems.append("loss %g vs torch %g" % (loss, tloss.item()))
    for n in case.params:
        g = np.load(os.path.join(out, n + ".grad.npy"))
        if not np.allclose(g, tp[n].grad.numpy(), rtol=1e-4, atol=1e-6, equal_nan=True):
            problems.append("grad %s: %s vs torch %s" % (n, g.tolist(), tp[n].grad.tolist()))
    print("%-16s loss %g, torch %g: %s" % (case.name, loss, tloss.item(),
                                           "ok" if not problems else "MISMATCH"))
    return problems


def main():
    workdir = sys.argv[1]
    os.makedirs(workdir, exist_ok=True)
    failed = 0
    for case in cases():
        problems = run(workdir, case)
        for p in problems:
            print("  " + p)
        failed += bool(problems)
    print("%d ops checked, %d failed" % (len(cases()), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
