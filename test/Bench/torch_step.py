"""One training step of dlc's small models in PyTorch, to check dlc against.

  torch_step.py init MODEL DIR      writes parameters, state, inputs and
                                    labels as DIR/<name>.npy (PyTorch's
                                    random init, seeded)
  torch_step.py check MODEL DIR OUT [TOL]
                                    runs one step from DIR in PyTorch and
                                    compares loss, every gradient, every
                                    updated parameter and running statistic
                                    with dlc's dump in OUT (within TOL
                                    relative to each tensor's largest
                                    value, default 1e-4)
  torch_step.py check-steps MODEL DIR OUT STEPS [TOL]
                                    the same after STEPS steps on the same
                                    batch (dlc run with --steps STEPS): the
                                    optimizer's state carried between steps
                                    (momentum, Adam's moments and bias
                                    corrections) and the running statistics
                                    show; the last step's loss and gradients
  torch_step.py check-bf16 MODEL DIR OUT TOL
                                    the same step under PyTorch's CPU
                                    autocast to bfloat16, against dlc's
                                    --precision amp-bf16 dump, within TOL
                                    relative

The models mirror models/*.mlir op for op, written with torch.nn.functional
so that the parameter names are the models' train.name. Dropout is absent:
the test runs dlc on a copy of the model with every dropout rate 0.
"""

import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float32)

# Relative error allowed per tensor: max |dlc - torch| / max |torch|, in
# float32 (the bound for a whole step).
TOLERANCE = 1e-4

# Parameters whose gradient is mathematically zero: a key bias adds the same
# q.b_k to every score of a query, which softmax ignores. Both frameworks
# compute rounding noise there (~1e-9), and AdamW scales noise to full-size
# steps, so these are checked against absolute bounds instead: the gradient
# is noise-sized, and the update moves the parameter at most 2 lr (Adam
# steps are bounded by lr).
ZERO_GRADIENT = {"tiny_transformer": {"attn.k.bias"}}
NOISE_BOUND = 1e-6


def bn(x, p, name):
    return F.batch_norm(x, p[name + "_rm"], p[name + "_rv"], p[name + "_g"],
                        p[name + "_b"], training=True, momentum=0.1, eps=1e-5)


def mlp(p, x, y):
    h = F.relu(F.linear(x, p["w1"], p["b1"]))
    return F.cross_entropy(F.linear(h, p["w2"], p["b2"]), y)


def small_convnet(p, x, y):
    s = F.relu(bn(F.conv2d(x, p["stem_w"], padding=1), p, "stem"))
    r = F.relu(bn(F.conv2d(s, p["c1_w"], padding=1), p, "c1"))
    r = bn(F.conv2d(r, p["c2_w"], padding=1), p, "c2")
    r = F.relu(r + s)
    d = F.max_pool2d(r, 2, 2)
    d = F.relu(bn(F.conv2d(d, p["c3_w"], padding=1, stride=2), p, "c3"))
    d = F.avg_pool2d(d, 2, 2)
    f = F.adaptive_avg_pool2d(d, 1).reshape(-1, 32)
    return F.cross_entropy(F.linear(f, p["fc_w"], p["fc_b"]), y)


def tiny_transformer(p, tokens, y):
    n = tokens.shape[0]
    h = F.embedding(tokens, p["wte"]) + F.embedding(torch.arange(16), p["wpe"])
    a = F.layer_norm(h, (32,), p["ln1.weight"], p["ln1.bias"])

    def heads(t):
        return t.reshape(n, 16, 2, 16).permute(0, 2, 1, 3)
    q = heads(F.linear(a, p["attn.q.weight"], p["attn.q.bias"]))
    k = heads(F.linear(a, p["attn.k.weight"], p["attn.k.bias"]))
    v = heads(F.linear(a, p["attn.v.weight"], p["attn.v.bias"]))
    scores = (q @ k.transpose(-1, -2)) * 0.25
    causal = torch.triu(torch.ones(16, 16, dtype=torch.bool), diagonal=1)
    attn = torch.softmax(scores.masked_fill(causal, float("-inf")), dim=-1)
    ctx = (attn @ v).permute(0, 2, 1, 3).reshape(n, 16, 32)
    h = h + F.linear(ctx, p["attn.proj.weight"], p["attn.proj.bias"])
    m = F.layer_norm(h, (32,), p["ln2.weight"], p["ln2.bias"])
    m = F.gelu(F.linear(m, p["mlp.fc.weight"], p["mlp.fc.bias"]), approximate="tanh")
    h = h + F.linear(m, p["mlp.proj.weight"], p["mlp.proj.bias"])
    h = F.layer_norm(h, (32,), p["ln_f.weight"], p["ln_f.bias"])
    logits = F.linear(h, p["lm_head.weight"])
    return F.cross_entropy(logits.reshape(-1, 64), y.reshape(-1))


def tiny_segnet(p, x, y):
    low = F.relu(bn(F.conv2d(x, p["c1_w"], padding=1, stride=2), p, "bn1"))
    e = F.relu(bn(F.conv2d(low, p["c2_w"], padding=1, stride=2), p, "bn2"))
    dw = F.conv2d(e, p["dw_w"], padding=1, groups=32)
    gate = torch.sigmoid(F.conv2d(F.adaptive_avg_pool2d(dw, 1), p["se_w"], p["se_b"]))
    feat = dw * gate
    a1 = F.conv2d(feat, p["aspp1_w"])
    a2 = F.conv2d(feat, p["aspp2_w"], dilation=2, padding=2)
    ip = F.relu(F.conv2d(F.adaptive_avg_pool2d(feat, 1), p["pool_w"]))
    ip = F.interpolate(ip, size=(8, 16), mode="bilinear", align_corners=False)
    aspp = F.relu(bn(F.conv2d(torch.cat([a1, a2, ip], 1), p["proj_w"]), p, "bn3"))
    up = F.interpolate(aspp, size=(16, 32), mode="bilinear", align_corners=True)
    dec = torch.cat([up, F.conv2d(low, p["low_w"])], 1)
    logits = F.conv2d(dec, p["cls_w"], p["cls_b"], padding=1)
    logits = F.interpolate(logits, size=(32, 64), mode="bilinear", align_corners=False)
    return F.cross_entropy(logits, y, ignore_index=255)


def sgd(lr, momentum, weight_decay):
    return lambda params: torch.optim.SGD(params, lr=lr, momentum=momentum,
                                          weight_decay=weight_decay)


def adamw(lr, weight_decay):
    return lambda params: torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.999),
                                            eps=1e-8, weight_decay=weight_decay)


# name -> (forward, parameter shapes, state shapes, inputs, optimizer)
def conv_bn(prefix, c):
    return {prefix + "_g": (c,), prefix + "_b": (c,)}, {prefix + "_rm": (c,), prefix + "_rv": (c,)}


def merge(*dicts):
    out = {}
    for d in dicts:
        out.update(d)
    return out


def models():
    s_bn = [conv_bn(p, c) for p, c in [("stem", 16), ("c1", 16), ("c2", 16), ("c3", 32)]]
    g_bn = [conv_bn(p, c) for p, c in [("bn1", 16), ("bn2", 32), ("bn3", 16)]]
    t_params = {"wte": (64, 32), "wpe": (16, 32), "lm_head.weight": (64, 32)}
    for ln in ["ln1", "ln2", "ln_f"]:
        t_params.update({ln + ".weight": (32,), ln + ".bias": (32,)})
    for lin in ["q", "k", "v", "proj"]:
        t_params.update({"attn.%s.weight" % lin: (32, 32), "attn.%s.bias" % lin: (32,)})
    t_params.update({"mlp.fc.weight": (128, 32), "mlp.fc.bias": (128,),
                     "mlp.proj.weight": (32, 128), "mlp.proj.bias": (32,)})
    return {
        "mlp": (mlp, {"w1": (256, 784), "b1": (256,), "w2": (10, 256), "b2": (10,)}, {},
                {"x": ("normal", (4, 784)), "labels": ("classes", (4,), 10)}, sgd(0.1, 0.9, 0.0)),
        "small_convnet": (small_convnet,
                          merge({"stem_w": (16, 3, 3, 3), "c1_w": (16, 16, 3, 3), "c2_w": (16, 16, 3, 3),
                                 "c3_w": (32, 16, 3, 3), "fc_w": (10, 32), "fc_b": (10,)},
                                *[a for a, _ in s_bn]),
                          merge(*[b for _, b in s_bn]),
                          {"x": ("normal", (4, 3, 32, 32)), "labels": ("classes", (4,), 10)},
                          sgd(0.1, 0.9, 1e-4)),
        "tiny_transformer": (tiny_transformer, t_params, {},
                             {"tokens": ("classes", (4, 16), 64), "labels": ("classes", (4, 16), 64)},
                             adamw(1e-3, 0.01)),
        "tiny_segnet": (tiny_segnet,
                        merge({"c1_w": (16, 3, 3, 3), "c2_w": (32, 16, 3, 3), "dw_w": (32, 1, 3, 3),
                               "aspp1_w": (16, 32, 1, 1), "aspp2_w": (16, 32, 3, 3),
                               "pool_w": (16, 32, 1, 1), "se_w": (32, 32, 1, 1), "se_b": (32,),
                               "proj_w": (16, 48, 1, 1), "low_w": (8, 16, 1, 1),
                               "cls_w": (5, 24, 3, 3), "cls_b": (5,)},
                              *[a for a, _ in g_bn]),
                        merge(*[b for _, b in g_bn]),
                        {"x": ("normal", (2, 3, 32, 64)), "labels": ("segment", (2, 32, 64), 5)},
                        sgd(0.01, 0.9, 1e-4)),
    }


def init(name, out):
    _, params, state, inputs, _ = models()[name]
    g = torch.Generator().manual_seed(1234)
    os.makedirs(out, exist_ok=True)
    for pname, shape in params.items():
        # Nonzero scales and biases: zeros or ones would hide a transposed
        # or swapped gradient.
        value = torch.randn(shape, generator=g) * (0.5 if len(shape) == 1 else 0.2)
        np.save(os.path.join(out, pname + ".npy"), value.numpy())
    for sname, shape in state.items():
        value = torch.rand(shape, generator=g) + (0.5 if sname.endswith("_rv") else 0.0)
        np.save(os.path.join(out, sname + ".npy"), value.numpy())
    for iname, spec in inputs.items():
        if spec[0] == "normal":
            value = torch.randn(spec[1], generator=g).numpy()
        else:
            value = torch.randint(0, spec[2], spec[1], generator=g)
            if spec[0] == "segment":  # some pixels ignored
                value[torch.rand(spec[1], generator=g) < 0.1] = 255
            value = value.numpy().astype(np.int64)
        np.save(os.path.join(out, iname + ".npy"), value)


def split(name, src, ranks):
    """SRC/rank<r>/: rank r's slice of every input along the batch, for a
    data-parallel run whose dump `check` then compares with the whole batch."""
    inputs = models()[name][3]
    for iname in inputs:
        value = np.load(os.path.join(src, iname + ".npy"))
        if value.shape[0] % ranks:
            sys.exit("%s: batch %d does not split over %d ranks" % (iname, value.shape[0], ranks))
        for r, part in enumerate(np.split(value, ranks)):
            os.makedirs(os.path.join(src, "rank%d" % r), exist_ok=True)
            np.save(os.path.join(src, "rank%d" % r, iname + ".npy"), part)


def check(name, src, dump, tolerance=TOLERANCE, autocast=None, steps=1):
    forward, params, state, inputs, make_opt = models()[name]
    load = lambda n: torch.from_numpy(np.load(os.path.join(src, n + ".npy")))
    p = {n: load(n).requires_grad_(True) for n in params}
    p.update({n: load(n) for n in state})
    args = [load(n) for n in inputs]
    opt = make_opt([p[n] for n in params])
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        if autocast is None:
            loss = forward(p, *args)
        else:
            # torch.autocast keeps float32 master weights and casts where an
            # op of its lower-precision list reads them, as dlc's amp-bf16 does.
            with torch.autocast("cpu", dtype=autocast):
                loss = forward(p, *args)
            loss = loss.float()
        loss.backward()
        grads = {n: p[n].grad.clone() for n in params}
        opt.step()
    worst = 0.0
    failures = []

    def compare(label, ours_file, theirs):
        nonlocal worst
        ours = torch.from_numpy(np.load(os.path.join(dump, ours_file)))
        theirs = theirs.detach()
        if ours.shape != theirs.shape:
            failures.append("%s: shape %s vs torch %s" % (label, tuple(ours.shape), tuple(theirs.shape)))
            return
        scale = max(theirs.abs().max().item(), 1e-12)
        err = (ours.double() - theirs.double()).abs().max().item() / scale
        worst = max(worst, err)
        if not err <= tolerance:
            failures.append("%s: relative error %.3g" % (label, err))

    def bounded(label, ours_file, theirs, bound):
        ours = torch.from_numpy(np.load(os.path.join(dump, ours_file))).double()
        err = (ours - theirs.detach().double()).abs().max().item()
        if not err <= bound:
            failures.append("%s: absolute difference %.3g > %.3g" % (label, err, bound))

    compare("loss", "loss.npy", loss)
    zero = ZERO_GRADIENT.get(name, set())
    lr = opt.param_groups[0]["lr"]
    for n in params:
        if n in zero:
            bounded("grad " + n, n + ".grad.npy", torch.zeros_like(grads[n]), NOISE_BOUND)
            bounded("updated " + n, n + ".npy", p[n], 2 * lr)
            continue
        compare("grad " + n, n + ".grad.npy", grads[n])
        compare("updated " + n, n + ".npy", p[n])
    for n in state:
        compare("running " + n, n + ".npy", p[n])
    print("%s: %d tensors compared%s, worst relative error %.3g (tolerance %g)"
          % (name, 1 + 2 * len(params) + len(state),
             " after %d steps" % steps if steps > 1 else "", worst, tolerance))
    for f in failures:
        print("MISMATCH " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "init":
        init(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 5 and sys.argv[1] == "split":
        split(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif len(sys.argv) >= 5 and sys.argv[1] == "check":
        tolerance = float(sys.argv[5]) if len(sys.argv) >= 6 else TOLERANCE
        sys.exit(check(sys.argv[2], sys.argv[3], sys.argv[4], tolerance))
    elif len(sys.argv) >= 6 and sys.argv[1] == "check-steps":
        tolerance = float(sys.argv[6]) if len(sys.argv) >= 7 else TOLERANCE
        sys.exit(check(sys.argv[2], sys.argv[3], sys.argv[4], tolerance, steps=int(sys.argv[5])))
    elif len(sys.argv) >= 6 and sys.argv[1] == "check-bf16":
        sys.exit(check(sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]),
                       autocast=torch.bfloat16))
    else:
        sys.exit(__doc__)
