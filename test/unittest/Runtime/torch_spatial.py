"""PyTorch references for the CPU spatial kernels (SpatialTest.cpp).

Usage: torch_spatial.py OP OUTPUT [key=value ...]. Each op builds seeded
random float64 inputs, runs the op forward and, with a random upstream
gradient dy, torch.autograd.grad for every differentiable input, and writes
all of them to OUTPUT.

Format: for each array a text line "name ndim d0 d1 ...\\n" followed by
prod(shape) little-endian float64 values; the file ends with "end\\n".
"""

import struct
import sys

import torch
import torch.nn.functional as F


def write(path, arrays):
    with open(path, "wb") as f:
        for name, value in arrays.items():
            t = value.detach().double().contiguous()
            shape = list(t.shape)
            f.write((" ".join([name, str(len(shape))] + [str(d) for d in shape]) + "\n").encode())
            flat = t.reshape(-1).tolist()
            f.write(struct.pack("<%dd" % len(flat), *flat))
        f.write(b"end\n")


def ints(p, *keys):
    return [int(p[k]) for k in keys]


def rand(*shape):
    return torch.randn(*shape, dtype=torch.float64, requires_grad=True)


def with_grads(inputs, y, extra=None):
    """The inputs, y, a random dy and d(sum(y * dy))/d(input) for each."""
    dy = torch.randn_like(y)
    grads = torch.autograd.grad(y, list(inputs.values()), dy)
    out = dict(inputs)
    out.update({"y": y, "dy": dy})
    out.update({"d" + name: g for name, g in zip(inputs, grads)})
    out.update(extra or {})
    return out


def conv2d(p):
    n, c, h, w, k, kh, kw = ints(p, "n", "c", "h", "w", "k", "kh", "kw")
    sh, sw, ph, pw, dh, dw, groups, bias = ints(p, "sh", "sw", "ph", "pw", "dh", "dw", "groups", "bias")
    inputs = {"x": rand(n, c, h, w), "w": rand(k, c // groups, kh, kw)}
    if bias:
        inputs["b"] = rand(k)
    y = F.conv2d(inputs["x"], inputs["w"], inputs.get("b"), (sh, sw), (ph, pw), (dh, dw), groups)
    return with_grads(inputs, y)


def batch_norm(p):
    n, c, h, w = ints(p, "n", "c", "h", "w")
    eps, momentum = float(p["eps"]), float(p["momentum"])
    shape = (n, c, h, w) if h > 0 else (n, c)
    x = rand(*shape)
    with torch.no_grad():
        x.mul_(2.0).add_(3.0)  # a mean far from zero exercises the two-pass variance
    inputs = {"x": x, "scale": rand(c), "bias": rand(c)}
    rm0, rv0 = torch.randn(c, dtype=torch.float64), torch.rand(c, dtype=torch.float64) + 0.5
    rm, rv = rm0.clone(), rv0.clone()
    y = F.batch_norm(x, rm, rv, inputs["scale"], inputs["bias"], True, momentum, eps)
    dims = [0] + list(range(2, x.dim()))
    mean = x.detach().mean(dims)
    invstd = 1.0 / torch.sqrt(x.detach().var(dims, unbiased=False) + eps)
    extra = {"running_mean0": rm0, "running_var0": rv0, "running_mean": rm,
             "running_var": rv, "saved_mean": mean, "saved_invstd": invstd}
    return with_grads(inputs, y, extra)


def pool_input(p):
    n, c, h, w = ints(p, "n", "c", "h", "w")
    x = rand(n, c, h, w)
    if int(p.get("ties", 0)):
        with torch.no_grad():  # few distinct values: windows with tied maxima
            x.copy_(torch.randint(0, 3, x.shape).double())
    return x


def pool_args(p):
    kh, kw, sh, sw, ph, pw, ceil = ints(p, "kh", "kw", "sh", "sw", "ph", "pw", "ceil")
    return (kh, kw), (sh, sw), (ph, pw), bool(ceil)


def max_pool2d(p):
    x = pool_input(p)
    kernel, stride, pad, ceil = pool_args(p)
    return with_grads({"x": x}, F.max_pool2d(x, kernel, stride, pad, ceil_mode=ceil))


def avg_pool2d(p):
    x = pool_input(p)
    kernel, stride, pad, ceil = pool_args(p)
    y = F.avg_pool2d(x, kernel, stride, pad, ceil_mode=ceil,
                     count_include_pad=bool(int(p["include_pad"])))
    return with_grads({"x": x}, y)


def global_avg_pool(p):
    x = pool_input(p)
    return with_grads({"x": x}, x.mean((2, 3), keepdim=True))


def resize_bilinear(p):
    n, c, ih, iw, oh, ow, align = ints(p, "n", "c", "ih", "iw", "oh", "ow", "align")
    x = rand(n, c, ih, iw)
    y = F.interpolate(x, size=(oh, ow), mode="bilinear", align_corners=bool(align))
    return with_grads({"x": x}, y)


OPS = {"conv2d": conv2d, "batch_norm": batch_norm, "max_pool2d": max_pool2d,
       "avg_pool2d": avg_pool2d, "global_avg_pool": global_avg_pool,
       "resize_bilinear": resize_bilinear}

if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in OPS:
        sys.exit("usage: %s {%s} OUTPUT [key=value ...]" % (sys.argv[0], ",".join(sorted(OPS))))
    params = dict(arg.partition("=")[::2] for arg in sys.argv[3:])
    torch.manual_seed(int(params.get("seed", 0)))
    write(sys.argv[2], OPS[sys.argv[1]](params))
