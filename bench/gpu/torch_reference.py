"""ResNet-50's training step in float64, to judge dlc's float32 steps against.

  torch_reference.py init DIR [--batch N] [--seed S]
      torchvision's ResNet-50 (its own initialization, seeded) and a batch:
      writes every parameter and running statistic, x and labels as
      DIR/<name>.npy for `dlc-run PLAN --params-in DIR --inputs-in DIR`.
  torch_reference.py check DIR DUMP [DUMP ...] [--tolerance T]
      one step from DIR in float64 (on the GPU when there is one): the loss,
      every gradient and every parameter after models/resnet50.mlir's SGD
      step, against each dlc --dump-out folder, beside PyTorch's own
      float32 step: each dump passes within T, or within --factor times
      PyTorch float32's distance from float64. Then every pair of dumps.

Uses torchvision's resnet50 where it is installed (the GPU machine) and an
equivalent module written here otherwise (Debian's python3-torch has no
torchvision). dlc's models/resnet50.mlir mirrors torchvision's resnet50
parameter for parameter, names included.
"""

import argparse
import os
import re
import sys

import numpy as np
import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Bottleneck(torch.nn.Module):
    """torchvision's Bottleneck (v1.5: the stride on the 3x3), same names."""

    def __init__(self, cin, width, stride):
        super().__init__()
        nn = torch.nn
        self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, width * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(width * 4)
        self.downsample = None
        if stride != 1 or cin != width * 4:
            self.downsample = nn.Sequential(nn.Conv2d(cin, width * 4, 1, stride, bias=False),
                                            nn.BatchNorm2d(width * 4))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = F.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return F.relu(y + (self.downsample(x) if self.downsample is not None else x))


class ResNet50(torch.nn.Module):
    """torchvision.models.resnet50 for machines without torchvision (Debian's
    python3-torch): the same modules, names and initialization."""

    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        cin = 64
        for i, (width, blocks, stride) in enumerate([(64, 3, 1), (128, 4, 2), (256, 6, 2),
                                                     (512, 3, 2)]):
            layer = []
            for b in range(blocks):
                layer.append(Bottleneck(cin, width, stride if b == 0 else 1))
                cin = width * 4
            setattr(self, "layer%d" % (i + 1), nn.Sequential(*layer))
        self.fc = nn.Linear(2048, 1000)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 3, 2, 1)
        for i in range(1, 5):
            x = getattr(self, "layer%d" % i)(x)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def model():
    try:
        import torchvision
        return torchvision.models.resnet50()
    except ImportError:
        return ResNet50()


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


def reference(directory, dtype=torch.float64):
    """The step in `dtype`: loss, gradients, updated parameters, running stats."""
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda":  # float32 means float32 (PyTorch's defaults allow TF32 in cuDNN)
        torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    net = model().to(dtype).to(device)
    load = lambda n: torch.from_numpy(np.load(os.path.join(directory, n + ".npy")))
    state = {n: load(n).to(dtype) for n in net.state_dict() if not n.endswith("num_batches_tracked")}
    net.load_state_dict(state, strict=False)
    net.train()
    x = load("x").to(dtype).to(device)
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
    return device, {k: v.detach().cpu().double().numpy() for k, v in out.items()}


def error(have, want):
    return float(np.abs(have - want).max() / max(np.abs(want).max(), 1e-30))


def compare(label, have, want, tolerance):
    """have: a dump folder or a dict of arrays."""
    worst, bad, missing = [], 0, 0
    for name, ref in want.items():
        if isinstance(have, dict):
            value = have.get(name)
        else:
            path = os.path.join(have, name + ".npy")
            value = np.load(path) if os.path.exists(path) else None
        if value is None:
            missing += 1
            continue
        e = error(value.astype(np.float64), ref.astype(np.float64))
        worst.append((e, name))
        bad += not e <= tolerance
    worst.sort(reverse=True)
    print("%-44s %4d tensors, worst %.2e (%s), median %.2e, %d over %g%s" % (
        label, len(worst), worst[0][0], worst[0][1], worst[len(worst) // 2][0], bad, tolerance,
        ", %d missing" % missing if missing else ""))
    return worst[0][0], worst[len(worst) // 2][0], missing


def check(args):
    device, want = reference(args.dir)
    print("float64 reference on %s: loss %.9g" % (device, want["loss"]))
    # How far float32 itself lands from float64 here, computed by PyTorch:
    # the yardstick for dlc's float32 steps below.
    _, f32 = reference(args.dir, torch.float32)
    f32_worst, f32_median, _ = compare("PyTorch float32 (%s) vs float64" % device, f32, want,
                                       args.tolerance)
    # A dlc step passes when it is within the tolerance everywhere, or no
    # further from float64 than --factor times PyTorch's float32 step (its
    # worst tensor and its median tensor both): ResNet-50's float32 step is
    # ill-conditioned, PyTorch's included (worst 1.7e-1 at batch 2).
    ok = True
    for d in args.dumps:
        worst, median, missing = compare(os.path.basename(d.rstrip("/")) + " vs float64", d,
                                         want, args.tolerance)
        passed = not missing and (worst <= args.tolerance or
                                  (worst <= args.factor * f32_worst and
                                   median <= args.factor * f32_median))
        print("  %s: %s" % (os.path.basename(d.rstrip("/")),
                            "PASS" if passed else "FAIL (over %g x PyTorch float32's error)" % args.factor))
        ok &= passed
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
p.add_argument("--factor", type=float, default=2.0,
               help="how much further from float64 than PyTorch's float32 step a dlc step may be")
args = parser.parse_args()
init(args) if args.cmd == "init" else check(args)
