"""Checks every differentiable op's gradient in dlc, twice: against PyTorch
and against central finite differences of dlc's own loss.

  op_grads.py WORKDIR [CASE ...]

For each case it writes a one-op model, loss = sum(op(params, data) * r)
with r a random weighting, runs one step of it with dlc-bench (learning
rate 0, so nothing moves) from parameters and data it chose, and compares
dlc's loss and parameter gradients with PyTorch's (relative error per
tensor, max |dlc - torch| / max |torch| <= 1e-4). Then it nudges a few
elements of each parameter by +-eps and checks dlc's gradient against
(loss(+eps) - loss(-eps)) / 2 eps. dlc computes in float32, so the finite
differences are float32 ones: eps is 1e-2 and they must agree within 2% of
the gradient's scale (a wrong rule is off by far more).
"""

import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

DLC_BENCH = os.environ.get("DLC_BENCH", "dlc-bench")
TOLERANCE = 1e-4
FD_EPS = 1e-2
FD_TOLERANCE = 2e-2
FD_POINTS = 3

rng = np.random.default_rng(7)


def randn(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def ty(shape, dtype="f32"):
    return "tensor<%s%s>" % ("".join("%dx" % d for d in shape), dtype)


class Case:
    """One op under test: MLIR body text and the same computation in torch."""

    def __init__(self, name, params, body, torch_fn, out_shape, data=None):
        self.name = name
        self.params = params      # name -> float32 array (differentiated)
        self.data = data or {}    # name -> (array, role) with role input/label
        self.body = body          # MLIR lines computing %y
        self.torch_fn = torch_fn  # (params, data) -> y
        self.out_shape = out_shape


def model_text(case):
    args = []
    for n, v in case.params.items():
        args.append('%%%s: %s {train.name = "%s", train.param = {init = "zeros"}}'
                    % (n, ty(v.shape), n))
    for n, (v, role) in case.data.items():
        dtype = "i64" if v.dtype == np.int64 else "f32"
        args.append('%%%s: %s {train.name = "%s", train.%s}' % (n, ty(v.shape, dtype), n, role))
    out = case.out_shape
    args.append('%%r: %s {train.name = "r", train.input}' % ty(out))
    axes = ", ".join(str(i) for i in range(len(out)))
    return "\n".join([
        "func.func @forward(%s) -> tensor<f32>" % ", ".join(args),
        '    attributes {train.optimizer = {kind = "sgd", lr = 0.0 : f64}} {',
        *["  " + line for line in case.body],
        "  %%m = train.mul %%y, %%r : %s, %s" % (ty(out), ty(out)),
        "  %%l = train.reduce_sum %%m {axes = array<i64: %s>} : %s" % (axes, ty(out)),
        "  return %l : tensor<f32>",
        "}", ""])


def run_dlc(workdir, case, params, r):
    src = os.path.join(workdir, case.name)
    os.makedirs(src, exist_ok=True)
    for n, v in params.items():
        np.save(os.path.join(src, n + ".npy"), v)
    for n, (v, _) in case.data.items():
        np.save(os.path.join(src, n + ".npy"), v)
    np.save(os.path.join(src, "r.npy"), r)
    model = os.path.join(workdir, case.name + ".mlir")
    with open(model, "w") as f:
        f.write(model_text(case))
    out = os.path.join(workdir, case.name + ".out")
    proc = subprocess.run([DLC_BENCH, model, "--warmup", "0", "--steps", "1", "--repeats", "1",
                           "--params-in", src, "--inputs-in", src, "--dump-out", out,
                           "-o", os.devnull], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError("dlc-bench failed on %s:\n%s" % (case.name, proc.stderr))
    load = lambda n: np.load(os.path.join(out, n + ".npy"))
    return float(load("loss")), {n: load(n + ".grad") for n in params}


def check(workdir, case):
    r = randn(*case.out_shape)
    loss, grads = run_dlc(workdir, case, case.params, r)
    tp = {n: torch.tensor(v, dtype=torch.float64, requires_grad=True) for n, v in case.params.items()}
    td = {n: torch.tensor(v) if v.dtype == np.int64 else torch.tensor(v, dtype=torch.float64)
          for n, (v, _) in case.data.items()}
    y = case.torch_fn(tp, td)
    tloss = (y * torch.tensor(r, dtype=torch.float64)).sum()
    tloss.backward()
    problems = []
    worst = abs(loss - tloss.item()) / max(abs(tloss.item()), 1e-6)
    if worst > TOLERANCE:
        problems.append("loss %g vs torch %g" % (loss, tloss.item()))
    fd_worst = 0.0
    for n, g in grads.items():
        tg = tp[n].grad.numpy()
        scale = max(np.abs(tg).max(), 1e-6)
        err = np.abs(g - tg).max() / scale
        worst = max(worst, err)
        if err > TOLERANCE:
            problems.append("grad %s: relative error %.3g vs torch" % (n, err))
        # Central finite differences of dlc's own loss at a few elements.
        flat = case.params[n].reshape(-1)
        for i in rng.choice(flat.size, size=min(FD_POINTS, flat.size), replace=False):
            losses = []
            for sign in (1, -1):
                moved = dict(case.params)
                p = flat.copy()
                p[i] += sign * FD_EPS
                moved[n] = p.reshape(case.params[n].shape)
                losses.append(run_dlc(workdir, case, moved, r)[0])
            fd = (losses[0] - losses[1]) / (2 * FD_EPS)
            err = abs(fd - g.reshape(-1)[i]) / max(np.abs(g).max(), 1e-3)
            fd_worst = max(fd_worst, err)
            if err > FD_TOLERANCE:
                problems.append("grad %s[%d]: dlc %g, finite difference %g" % (n, i, g.reshape(-1)[i], fd))
    print("%-34s torch %.2g  finite-difference %.2g  %s"
          % (case.name, worst, fd_worst, "ok" if not problems else "MISMATCH " + "; ".join(problems)))
    return not problems


def cases():
    out = []

    def conv(name, n, c, h, w, k, kh, kw, stride=(1, 1), pad=(0, 0), dil=(1, 1), groups=1, bias=False):
        oh = (h + 2 * pad[0] - dil[0] * (kh - 1) - 1) // stride[0] + 1
        ow = (w + 2 * pad[1] - dil[1] * (kw - 1) - 1) // stride[1] + 1
        params = {"x": randn(n, c, h, w), "w": randn(k, c // groups, kh, kw, scale=0.3)}
        if bias:
            params["b"] = randn(k)
        attrs = "{dilation = array<i64: %d, %d>, groups = %d : i64, padding = array<i64: %d, %d>, stride = array<i64: %d, %d>}" % (
            dil + (groups,) + pad + stride)
        operands = "%x, %w" + (", %b" if bias else "")
        types = ty((n, c, h, w)) + ", " + ty((k, c // groups, kh, kw)) + (", " + ty((k,)) if bias else "")
        out.append(Case(name, params, ["%%y = train.conv2d %s %s : %s" % (operands, attrs, types)],
                        lambda p, d: F.conv2d(p["x"], p["w"], p.get("b"), stride, pad, dil, groups),
                        (n, k, oh, ow)))

    conv("conv2d", 2, 3, 7, 6, 4, 3, 3, pad=(1, 1), bias=True)
    conv("conv2d_strided", 2, 3, 9, 8, 4, 3, 2, stride=(2, 3), pad=(1, 0))
    conv("conv2d_dilated", 1, 2, 9, 9, 3, 3, 3, pad=(2, 2), dil=(2, 2))
    conv("conv2d_grouped", 2, 4, 6, 6, 6, 3, 3, pad=(1, 1), groups=2)
    conv("conv2d_depthwise", 2, 3, 5, 7, 3, 3, 3, stride=(2, 2), pad=(1, 1), groups=3)

    x = randn(3, 4, 5, 5)
    out.append(Case("batch_norm",
                    {"x": x, "g": randn(4), "b": randn(4)},
                    ["%%rm = train.constant dense<0.0> : %s" % ty((4,)),
                     "%%rv = train.constant dense<1.0> : %s" % ty((4,)),
                     "%%y, %%nm, %%nv = train.batch_norm %%x, %%g, %%b, %%rm, %%rv : %s, %s, %s, %s, %s"
                     % (ty((3, 4, 5, 5)), ty((4,)), ty((4,)), ty((4,)), ty((4,)))],
                    lambda p, d: F.batch_norm(p["x"], None, None, p["g"], p["b"], training=True),
                    (3, 4, 5, 5)))

    def pool(name, op, shape, k, s, pad, out_hw, torch_fn, extra=""):
        attrs = "{kernel_size = array<i64: %d, %d>, padding = array<i64: %d, %d>, stride = array<i64: %d, %d>%s}" % (
            k + pad + s + (extra,))
        out.append(Case(name, {"x": randn(*shape)},
                        ["%%y = train.%s %%x %s : %s" % (op, attrs, ty(shape))],
                        lambda p, d: torch_fn(p["x"]), shape[:2] + out_hw))

    pool("max_pool2d", "max_pool2d", (2, 3, 7, 7), (3, 3), (2, 2), (1, 1), (4, 4),
         lambda x: F.max_pool2d(x, 3, 2, 1))
    pool("max_pool2d_ceil", "max_pool2d", (1, 2, 7, 6), (2, 2), (2, 2), (0, 0), (4, 3),
         lambda x: F.max_pool2d(x, 2, 2, 0, ceil_mode=True), ", ceil_mode = true")
    pool("avg_pool2d", "avg_pool2d", (2, 3, 6, 6), (3, 3), (2, 2), (1, 1), (3, 3),
         lambda x: F.avg_pool2d(x, 3, 2, 1))
    pool("avg_pool2d_exclude_pad", "avg_pool2d", (2, 3, 6, 5), (3, 3), (2, 2), (1, 1), (3, 3),
         lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), ", count_include_pad = false")
    out.append(Case("global_avg_pool", {"x": randn(2, 3, 4, 5)},
                    ["%%y = train.global_avg_pool %%x : %s" % ty((2, 3, 4, 5))],
                    lambda p, d: F.adaptive_avg_pool2d(p["x"], 1), (2, 3, 1, 1)))
    for align in (False, True):
        for (h, w, oh, ow) in ((4, 5, 9, 7), (8, 6, 3, 4)):
            out.append(Case("resize_%dx%d_to_%dx%d%s" % (h, w, oh, ow, "_aligned" if align else ""),
                            {"x": randn(2, 2, h, w)},
                            ["%%y = train.resize_bilinear %%x {align_corners = %s, size = array<i64: %d, %d>} : %s"
                             % ("true" if align else "false", oh, ow, ty((2, 2, h, w)))],
                            lambda p, d, oh=oh, ow=ow, align=align: F.interpolate(
                                p["x"], size=(oh, ow), mode="bilinear", align_corners=align),
                            (2, 2, oh, ow)))

    def matmul(name, a, b, ta, tb, out_shape):
        attrs = "{transpose_lhs = %s, transpose_rhs = %s}" % (str(ta).lower(), str(tb).lower())
        out.append(Case(name, {"a": randn(*a), "b": randn(*b)},
                        ["%%y = train.matmul %%a, %%b %s : %s, %s" % (attrs, ty(a), ty(b))],
                        lambda p, d: torch.matmul(p["a"].transpose(-1, -2) if ta else p["a"],
                                                  p["b"].transpose(-1, -2) if tb else p["b"]),
                        out_shape))

    matmul("matmul", (3, 4), (4, 5), False, False, (3, 5))
    matmul("matmul_transposed", (2, 4, 3), (2, 5, 4), True, True, (2, 3, 5))
    matmul("matmul_broadcast_batch", (2, 3, 3, 4), (4, 2), False, False, (2, 3, 3, 2))
    matmul("matmul_transpose_rhs", (2, 3, 4), (1, 5, 4), False, True, (2, 3, 5))
    out.append(Case("linear", {"x": randn(2, 3, 4), "w": randn(5, 4), "b": randn(5)},
                    ["%%y = train.linear %%x, %%w, %%b : %s, %s, %s" % (ty((2, 3, 4)), ty((5, 4)), ty((5,)))],
                    lambda p, d: F.linear(p["x"], p["w"], p["b"]), (2, 3, 5)))

    s = (2, 2, 4, 4)
    out.append(Case("softmax_scaled", {"x": randn(*s)},
                    ["%%y = train.softmax %%x {scale = 0.5 : f32} : %s" % ty(s)],
                    lambda p, d: torch.softmax(0.5 * p["x"], -1), s))
    out.append(Case("softmax_axis1", {"x": randn(2, 5, 3)},
                    ["%%y = train.softmax %%x {axis = 1 : i64} : %s" % ty((2, 5, 3))],
                    lambda p, d: torch.softmax(p["x"], 1), (2, 5, 3)))
    mask = np.where(rng.random((2, 1, 1, 4)) < 0.3, -1e4, 0.0).astype(np.float32)
    out.append(Case("softmax_masked", {"x": randn(*s)},
                    ["%%y = train.softmax %%x mask %%mask : %s, %s" % (ty(s), ty((2, 1, 1, 4)))],
                    lambda p, d: torch.softmax(p["x"] + d["mask"], -1), s,
                    data={"mask": (mask, "input")}))
    out.append(Case("softmax_causal", {"x": randn(*s)},
                    ["%%y = train.softmax %%x {causal = true, scale = 0.25 : f32} : %s" % ty(s)],
                    lambda p, d: torch.softmax((0.25 * p["x"]).masked_fill(
                        torch.triu(torch.ones(4, 4, dtype=torch.bool), 1), float("-inf")), -1), s))
    out.append(Case("layer_norm", {"x": randn(2, 3, 6), "g": randn(6), "b": randn(6)},
                    ["%%y = train.layer_norm %%x, %%g, %%b : %s, %s, %s" % (ty((2, 3, 6)), ty((6,)), ty((6,)))],
                    lambda p, d: F.layer_norm(p["x"], (6,), p["g"], p["b"]), (2, 3, 6)))
    ids = rng.integers(0, 7, size=(2, 5)).astype(np.int64)
    ids[0, :2] = 3  # repeated rows accumulate
    out.append(Case("embedding", {"t": randn(7, 4)},
                    ["%%y = train.embedding %%t, %%ids : %s, %s" % (ty((7, 4)), ty((2, 5), "i64"))],
                    lambda p, d: F.embedding(d["ids"], p["t"]), (2, 5, 4), data={"ids": (ids, "input")}))

    def xent(name, shape, labels, attrs, torch_fn):
        out.append(Case(name, {"x": randn(*shape)},
                        ["%%l0 = train.softmax_cross_entropy %%x, %%labels %s : %s, %s"
                         % (attrs, ty(shape), ty(labels.shape, "i64")),
                         "%y = train.reshape %l0 {shape = array<i64: 1>} : tensor<f32>"],
                        lambda p, d: torch_fn(p["x"], d["labels"]).reshape(1), (1,),
                        data={"labels": (labels, "label")}))

    xent("cross_entropy", (4, 6), rng.integers(0, 6, size=4).astype(np.int64), "",
         lambda x, l: F.cross_entropy(x, l))
    pix = rng.integers(0, 3, size=(2, 4, 5)).astype(np.int64)
    pix[0, 0, :3] = 255
    xent("cross_entropy_pixels_ignored", (2, 3, 4, 5), pix, "{ignore_index = 255 : i64}",
         lambda x, l: F.cross_entropy(x, l, ignore_index=255))
    xent("cross_entropy_tokens", (2, 3, 7), rng.integers(0, 7, size=(2, 3)).astype(np.int64),
         "{class_axis = 2 : i64}", lambda x, l: F.cross_entropy(x.reshape(-1, 7), l.reshape(-1)))

    e = (3, 5)
    for op, fn in [("relu", F.relu), ("tanh", torch.tanh), ("sigmoid", torch.sigmoid),
                   ("gelu", F.gelu), ("silu", F.silu)]:
        out.append(Case(op, {"x": randn(*e)}, ["%%y = train.%s %%x : %s" % (op, ty(e))],
                        lambda p, d, fn=fn: fn(p["x"]), e))
    out.append(Case("gelu_tanh", {"x": randn(*e)},
                    ['%%y = train.gelu %%x {approximate = "tanh"} : %s' % ty(e)],
                    lambda p, d: F.gelu(p["x"], approximate="tanh"), e))
    out.append(Case("scale", {"x": randn(*e)},
                    ["%%y = train.scale %%x {bias = 1.0 : f32, scale = -3.0 : f32} : %s" % ty(e)],
                    lambda p, d: p["x"] * -3.0 + 1.0, e))
    for op, fn in [("add", torch.add), ("sub", torch.sub), ("mul", torch.mul), ("div", torch.div)]:
        rhs = randn(4, 1) + (np.float32(3.0) if op == "div" else 0)
        out.append(Case(op + "_broadcast", {"a": randn(2, 4, 3), "b": rhs},
                        ["%%y = train.%s %%a, %%b : %s, %s" % (op, ty((2, 4, 3)), ty((4, 1)))],
                        lambda p, d, fn=fn: fn(p["a"], p["b"]), (2, 4, 3)))
    out.append(Case("reshape_transpose", {"x": randn(2, 6)},
                    ["%%t = train.reshape %%x {shape = array<i64: 2, 3, 2>} : %s" % ty((2, 6)),
                     "%%y = train.transpose %%t {permutation = array<i64: 2, 0, 1>} : %s" % ty((2, 3, 2))],
                    lambda p, d: p["x"].reshape(2, 3, 2).permute(2, 0, 1), (2, 2, 3)))
    # train.expand (Tensor.expand over the batch): its batch is b's, its
    # gradient the sum over what it spread.
    out.append(Case("expand", {"t": randn(1, 1, 4)},
                    ["%%y = train.expand %%t, %%b {shape = array<i64: -1, 3, 4>} : %s, %s"
                     % (ty((1, 1, 4)), ty((2, 5)))],
                    lambda p, d: p["t"].expand(2, 3, 4), (2, 3, 4), data={"b": (randn(2, 5), "input")}))
    out.append(Case("concat_slice", {"a": randn(2, 3), "b": randn(2, 4)},
                    ["%%c = train.concat %%a, %%b {axis = 1 : i64} : %s, %s" % (ty((2, 3)), ty((2, 4))),
                     "%%y = train.slice %%c {axis = 1 : i64, end = 7 : i64, start = 1 : i64, step = 2 : i64} : %s" % ty((2, 7))],
                    lambda p, d: torch.cat([p["a"], p["b"]], 1)[:, 1:7:2], (2, 3)))
    out.append(Case("reduce_sum_mean", {"x": randn(2, 3, 4)},
                    ["%%s = train.reduce_sum %%x {axes = array<i64: 1>, keep_dims = true} : %s" % ty((2, 3, 4)),
                     "%%y = train.reduce_mean %%s {axes = array<i64: -1>} : %s" % ty((2, 1, 4))],
                    lambda p, d: p["x"].sum(1, keepdim=True).mean(-1), (2, 1)))
    # The piecewise activations on every piece, at least 0.1 from each kink
    # (0 and 6, -3 and 3) so that the finite differences see one piece.
    spread = np.linspace(-7.9, 7.7, 15).astype(np.float32).reshape(e)
    for op, fn in [("relu6", F.relu6), ("hardswish", F.hardswish), ("hardsigmoid", F.hardsigmoid)]:
        out.append(Case(op, {"x": spread.copy()}, ["%%y = train.%s %%x : %s" % (op, ty(e))],
                        lambda p, d, fn=fn: fn(p["x"]), e))
    return out


def main():
    workdir = sys.argv[1]
    wanted = set(sys.argv[2:])
    os.makedirs(workdir, exist_ok=True)
    all_cases = [c for c in cases() if not wanted or c.name in wanted]
    failed = [c.name for c in all_cases if not check(workdir, c)]
    print("%d ops checked, %d failed" % (len(all_cases), len(failed)))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
