"""Does an imported model train as the PyTorch module it came from?

  import_step.py check MLIR DIR DUMP [--no-dropout] -- DLC_IMPORT_ARGS...
  import_step.py self MLIR DIR [--no-dropout] -- DLC_IMPORT_ARGS...

Builds the module again from dlc-import's own arguments, loads DIR (what
dlc-import --params-out and --inputs-out wrote), runs one step in float64
and two in float32 (the model file's loss, on the output dlc-import chose,
and its optimizer), and judges dlc's --dump-out DUMP by peers-same-model's
rule (test/Bench/Inputs/peers_same.py judge): each tensor within twice
PyTorch float32's own distance from float64. Float32's distance is
sampled twice: one step with oneDNN (PyTorch's default) and one with it
off (torch.backends.mkldnn.enabled = False: other convolution kernels,
as valid a float32 step as the first); the bound is twice the farther of
the two (docs/Importer.md, "The rule"). --no-dropout sets every
dropout (and stochastic-depth) rate of the module to 0, for a file whose
rates the test zeroed.

`self` judges the one-sample rule instead of dlc: the oneDNN-off step
judged by twice the oneDNN step's distance alone. Where it misses, one
float32 sample's distance is tighter than float32 itself on that model.
"""

import copy
import os
import re
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
for d in ("models", "bench/peers", "test/Bench/Inputs"):
    sys.path.insert(0, os.path.join(ROOT, d))
import common  # noqa: E402
import dlc_import  # noqa: E402
import peers_same  # noqa: E402
import torch_peer  # noqa: E402


def roles(mlir):
    """train.name -> role (input, label, param, buffer), in file order."""
    with open(mlir) as f:
        text = f.read()
    return dict(re.findall(r'train\.name = "([^"]+)", train\.(input|label|param|buffer)', text))


def step(mlir, module, a, src, dtype, no_dropout):
    named = roles(mlir)
    m = copy.deepcopy(module).to(dtype).train()
    if no_dropout:
        for sub in m.modules():
            # torchvision's StochasticDepth is a dropout dlc-import writes as one.
            if isinstance(sub, torch.nn.Dropout) or type(sub).__name__ == "StochasticDepth":
                sub.p = 0.0
            if isinstance(sub, torch.nn.MultiheadAttention):
                sub.dropout = 0.0
    state = m.state_dict()
    with torch.no_grad():
        for name, role in named.items():
            if role in ("param", "buffer"):
                state[name].copy_(torch.from_numpy(np.load(os.path.join(src, name + ".npy"))))
    load = lambda n: torch.from_numpy(np.load(os.path.join(src, n + ".npy")))  # noqa: E731
    inputs = [load(n) for n, r in named.items() if r == "input"]
    inputs = [t.to(dtype) if t.is_floating_point() else t for t in inputs]
    labels = load("labels")
    params = {n: p for n, p in m.named_parameters() if named.get(n) == "param"}
    spec = common.optimizer_of(os.path.basename(mlir)[:-len(".mlir")], os.path.dirname(mlir))
    opt = torch_peer.make_optimizer(torch, m, spec)
    logits = dlc_import.select_output(m(*inputs))
    loss = F.cross_entropy(logits, labels, ignore_index=-100 if a.ignore_index is None else a.ignore_index)
    loss.backward()
    grads = {n: p.grad.clone() for n, p in params.items()}
    opt.step()
    return loss, grads, m.state_dict(), opt.param_groups[0]["lr"], params


def dump_step(result, mlir, out):
    """A PyTorch step written as dlc-bench --dump-out writes one."""
    loss, grads, state = result[:3]
    np.save(os.path.join(out, "loss.npy"), loss.detach().numpy())
    for name, role in roles(mlir).items():
        if role == "param":
            np.save(os.path.join(out, name + ".grad.npy"), grads[name].numpy())
        if role in ("param", "buffer"):
            np.save(os.path.join(out, name + ".npy"), state[name].numpy())


def main(argv):
    mode = argv[0] if argv else ""
    fixed = {"check": 4, "self": 3}.get(mode)
    if fixed is None or len(argv) < fixed + 1 or "--" not in argv:
        sys.exit(__doc__)
    mlir, src = argv[1:3]
    no_dropout = "--no-dropout" in argv[fixed:argv.index("--")]
    a = dlc_import.parser().parse_args(argv[argv.index("--") + 1:] + ["-o", os.devnull])
    module, _, _ = dlc_import.build(a)
    base = step(mlir, module, a, src, torch.float32, no_dropout)
    reference = step(mlir, module, a, src, torch.float64, no_dropout)
    mapping = {n: n for n, r in roles(mlir).items() if r in ("param", "buffer")}
    torch.backends.mkldnn.enabled = False
    other = step(mlir, module, a, src, torch.float32, no_dropout)
    torch.backends.mkldnn.enabled = True
    if mode == "check":
        return peers_same.judge(a.model, argv[3], mapping, reference, [base, other])
    with tempfile.TemporaryDirectory() as out:
        dump_step(other, mlir, out)
        return peers_same.judge(a.model + " (PyTorch float32, oneDNN off)", out, mapping,
                                reference, base)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
