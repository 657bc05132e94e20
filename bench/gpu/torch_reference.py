"""ResNet-50's training step in float64, to judge dlc's float32 steps against.

  torch_reference.py init DIR [--batch N] [--seed S]
      torchvision's ResNet-50 (its own initialization, seeded) and a batch:
      writes every parameter and running statistic, x and labels as
      DIR/<name>.npy for `dlc-run PLAN --params-in DIR --inputs-in DIR`.
  torch_reference.py check DIR DUMP [DUMP ...] [--tolerance T]
      one step from DIR in float64 (on the GPU when there is one): the loss,
      every gradient and every parameter after models/resnet50.mlir's SGD
      step, against each dlc --dump-out folder. Then every pair of dumps
      against each other: two float32 steps can disagree more with each
      other than either does with float64 only if one of them is wrong.

Needs torchvision (the GPU machine's Python has it; Debian's python3-torch
does not ship it). dlc's models/resnet50.mlir mirrors torchvision's
resnet50 parameter for parameter, names included.
"""

import argparse
import os
import re
import sys

import numpy as np
import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def model():
    import torchvision
    return torchvision.models.resnet50()


def init(args):
    torch.manual_seed(args.seed)
    net = model()
    os.makedirs(args.dir, exist_ok=True)
    for name, value in net.state_dict().items():
        if name.endswith("num_batches_tracked"):
            continue
        np.save(os.path.join(args.dir, name + ".npy"), value.numpy().astype(np.float32))
    g = torch.Generator().manual_seed(args.seed + 1)
    np.save(os.path.join(args.dir, "x.npy"),
            torch.randn(args.batch, 3, 224, 224, generator=g).numpy().astype(np.float32))
    np.save(os.path.join(args.dir, "labels.npy"),
            torch.randint(0, 1000, (args.batch,), generator=g).numpy().astype(np.int64))
    print("wrote %s: resnet50 (torchvision init, seed %d), batch %d" % (args.dir, args.seed, args.batch))


def sgd_of_the_model():
    text = open(os.path.join(ROOT, "models", "resnet50.mlir")).read()
    m = re.search(r'train\.optimizer = \{kind = "sgd", lr = ([0-9.e-]+) : f64, '
                  r'momentum = ([0-9.e-]+) : f64, weight_decay = ([0-9.e-]+) : f64\}', text)
    if not m:
        sys.exit("error: models/resnet50.mlir: no SGD optimizer attribute found")
    return tuple(float(v) for v in m.groups())


def reference(directory):
    """The float64 step: loss, gradients, updated parameters, running stats."""
    device = "cuda" if torch.cuda.is_available() else "cpu"
    net = model().double().to(device)
    load = lambda n: torch.from_numpy(np.load(os.path.join(directory, n + ".npy")))
    state = {n: load(n).double() for n in net.state_dict() if not n.endswith("num_batches_tracked")}
    net.load_state_dict(state, strict=False)
    net.train()
    x = load("x").double().to(device)
    labels = load("labels").to(device)
    loss = F.cross_entropy(net(x), labels)
    loss.backward()
    lr, momentum, weight_decay = sgd_of_the_model()
    out = {"loss": loss.detach().reshape(())}
    with torch.no_grad():
        for n, p in net.named_parameters():
            out[n + ".grad"] = p.grad.clone()
            # torch.optim.SGD's first step: the momentum buffer is the
            # decayed gradient itself.
            out[n] = p - lr * (p.grad + weight_decay * p)
        for n, b in net.named_buffers():
            if not n.endswith("num_batches_tracked"):
                out[n] = b.clone()
    return device, {k: v.cpu().numpy() for k, v in out.items()}


def error(have, want):
    return float(np.abs(have - want).max() / max(np.abs(want).max(), 1e-30))


def compare(label, have_dir, want, tolerance, quiet=False):
    worst, bad, missing = [], 0, 0
    for name, ref in want.items():
        path = os.path.join(have_dir, name + ".npy")
        if not os.path.exists(path):
            missing += 1
            continue
        e = error(np.load(path).astype(np.float64), ref.astype(np.float64))
        worst.append((e, name))
        bad += not e <= tolerance
    worst.sort(reverse=True)
    print("%-44s %4d tensors, worst %.2e (%s), median %.2e, %d over %g%s" % (
        label, len(worst), worst[0][0], worst[0][1], worst[len(worst) // 2][0], bad, tolerance,
        ", %d missing" % missing if missing else ""))
    return bad == 0 and missing == 0


def check(args):
    device, want = reference(args.dir)
    print("float64 reference on %s: loss %.9g" % (device, want["loss"]))
    ok = True
    for d in args.dumps:
        ok &= compare(os.path.basename(d.rstrip("/")) + " vs float64", d, want, args.tolerance)
    for i, a in enumerate(args.dumps):
        for b in args.dumps[i + 1:]:
            other = {n: np.load(os.path.join(b, n + ".npy")) for n in want
                     if os.path.exists(os.path.join(b, n + ".npy"))}
            compare("%s vs %s" % (os.path.basename(a.rstrip("/")), os.path.basename(b.rstrip("/"))),
                    a, other, args.tolerance)
    sys.exit(0 if ok else 1)


parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
sub = parser.add_subparsers(dest="cmd", required=True)
p = sub.add_parser("init")
p.add_argument("dir")
p.add_argument("--batch", type=int, default=2)
p.add_argument("--seed", type=int, default=0)
p = sub.add_parser("check")
p.add_argument("dir")
p.add_argument("dumps", nargs="+")
p.add_argument("--tolerance", type=float, default=1e-3)
args = parser.parse_args()
init(args) if args.cmd == "init" else check(args)
