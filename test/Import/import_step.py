"""Does an imported model train as the PyTorch module it came from?

  import_step.py check MLIR DIR DUMP [--no-dropout] -- DLC_IMPORT_ARGS...
  import_step.py self MLIR DIR [--no-dropout] -- DLC_IMPORT_ARGS...
  import_step.py holdout MLIR DIR [--no-dropout] -- DLC_IMPORT_ARGS...

Builds the module again from dlc-import's own arguments, loads DIR (what
dlc-import --params-out and --inputs-out wrote), runs one step in float64
and four in float32 (the model file's loss, on the output dlc-import
chose, and its optimizer), and judges dlc's --dump-out DUMP by
peers-same-model's rule (test/Bench/Inputs/peers_same.py judge): each
tensor within twice PyTorch float32's own distance from float64.
Float32's distance is sampled four times: one step with oneDNN
(PyTorch's default), one with it off (torch.backends.mkldnn.enabled =
False: other convolution kernels), one with oneDNN at another thread
count (2 where PyTorch runs 1, as on these 2-vCPU machines, so other
summation orders) and one channels-last (NHWC kernels, the layout dlc's
cpu backend runs), each as valid a float32 step as the first; the bound
is twice the farthest (docs/Importer.md, "The rule"). Where dlc is off by
that rule, the ReLU kinks float32 does not determine are fitted and dlc
is judged against the float64 step with its own kink decisions
(test/Import/kinks.py). --no-dropout sets every
dropout (and stochastic-depth) rate of the module to 0, for a file whose
rates the test zeroed.

`self` judges the one-sample rule instead of dlc: the oneDNN-off step
judged by twice the oneDNN step's distance alone. Where it misses, one
float32 sample's distance is tighter than float32 itself on that model.
`holdout` judges PyTorch's channels-last step as `check` judges dlc's, by
the other three samples: where it misses, three samples understate
float32's own distance on that model.
"""

import contextlib
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
for d in ("models", "bench/peers", "test/Bench/Inputs", "test/Import"):
    sys.path.insert(0, os.path.join(ROOT, d))
import common  # noqa: E402
import dlc_import  # noqa: E402
import kinks  # noqa: E402
import peers_same  # noqa: E402
import torch_peer  # noqa: E402


def roles(mlir):
    """train.name -> role (input, label, param, buffer), in file order."""
    with open(mlir) as f:
        text = f.read()
    return dict(re.findall(r'train\.name = "([^"]+)", train\.(input|label|param|buffer)', text))


def step(mlir, module, a, src, dtype, no_dropout, recorder=None, after_backward=None,
         channels_last=False):
    """One PyTorch step: (loss, gradients, state after, lr, parameters).
    With a kinks.Recorder, the module's ReLUs run through it; after_backward
    (params, grads) runs between the backward pass and the update, while
    the graph is alive."""
    named = roles(mlir)
    m = copy.deepcopy(module).to(dtype).train()
    if channels_last:
        m = m.to(memory_format=torch.channels_last)
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
    if channels_last:
        inputs = [t.contiguous(memory_format=torch.channels_last) if t.dim() == 4 else t
                  for t in inputs]
    labels = load("labels")
    params = {n: p for n, p in m.named_parameters() if named.get(n) == "param"}
    spec = common.optimizer_of(os.path.basename(mlir)[:-len(".mlir")], os.path.dirname(mlir))
    opt = torch_peer.make_optimizer(torch, m, spec)
    with kinks.recording(m, recorder) if recorder else contextlib.nullcontext():
        logits = dlc_import.select_output(m(*inputs))
    loss = F.cross_entropy(logits, labels, ignore_index=-100 if a.ignore_index is None else a.ignore_index)
    loss.backward(retain_graph=after_backward is not None)
    grads = {n: p.grad.clone() for n, p in params.items()}
    if after_backward:
        after_backward(params, grads)
    opt.step()
    return loss, grads, m.state_dict(), opt.param_groups[0]["lr"], params


def kink_decisions(model, dump, recorder, seen, params, grads, bases):
    """The side of the ReLU kinks float32 does not determine that dlc's step
    and each float32 step in `bases` took (test/Import/kinks.py): [dlc's
    flips, then each base's], each {call: flat indices} for the float64 step
    to flip; [] where there are no such kinks or they cannot be judged. The
    float32 steps are fitted whatever dlc's step is: a float32 step on the
    other side of a kink is far from the plain float64 step, and twice that
    distance would let anything through on the tensors before the kink."""
    residual, unit, off = {}, {}, 0
    for n, g in grads.items():
        path = os.path.join(dump, n + ".grad.npy")
        if not os.path.exists(path):
            return []  # the judge reports it
        mine = torch.from_numpy(np.load(path)).double()
        if mine.shape != g.shape:
            return []
        scale = max(g.abs().max().item(), 1e-12)
        dist = [peers_same.distance(b[1][n], g) for b in bases]
        off += int(peers_same.distance(mine, g) > max(peers_same.TOLERANCE, 2 * max(dist)))
        # The fit weighs each gradient by its bound; the nearest sample's,
        # the one least likely to have crossed a kink itself.
        residual[n], unit[n] = mine - g, max(peers_same.TOLERANCE, 2 * min(dist)) * scale
    calls = kinks.undetermined(recorder, seen)
    if calls is None:
        print("%s: ReLU kinks not judged: the float32 and float64 steps made different ReLU calls"
              % model)
        return []
    count = sum(len(idx) for _, idx in calls)
    if not count:
        return []
    if count > kinks.MAX_ELEMENTS:
        print("%s: ReLU kinks not judged: %d ReLU values that float32 does not determine, more "
              "than %d" % (model, count, kinks.MAX_ELEMENTS))
        return []
    others = [{n: b[1][n].double() - g for n, g in grads.items()} for b in bases]
    decisions = kinks.fit(recorder, calls, params, [residual] + others, unit)
    flipped = [sum(len(v) for v in f.values()) for f in decisions]
    print("%s: %d gradients off by the plain rule; %d ReLU values that float32 does not "
          "determine; judged against the float64 step with %d of them on dlc's side of the kink "
          "(the float32 steps' own: %s)" % (model, off, count, flipped[0],
                                           ", ".join(map(str, flipped[1:]))))
    return decisions


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
    fixed = {"check": 4, "self": 3, "holdout": 3}.get(mode)
    if fixed is None or len(argv) < fixed + 1 or "--" not in argv:
        sys.exit(__doc__)
    mlir, src = argv[1:3]
    no_dropout = "--no-dropout" in argv[fixed:argv.index("--")]
    a = dlc_import.parser().parse_args(argv[argv.index("--") + 1:] + ["-o", os.devnull])
    module, _, _ = dlc_import.build(a)
    mapping = {n: n for n, r in roles(mlir).items() if r in ("param", "buffer")}
    seen = [kinks.Recorder() for _ in range(4)]
    base = step(mlir, module, a, src, torch.float32, no_dropout, seen[0])
    torch.backends.mkldnn.enabled = False
    other = step(mlir, module, a, src, torch.float32, no_dropout, seen[1])
    torch.backends.mkldnn.enabled = True
    threads = torch.get_num_threads()
    torch.set_num_threads(2 if threads == 1 else 1)
    third = step(mlir, module, a, src, torch.float32, no_dropout, seen[2])
    torch.set_num_threads(threads)
    # Channels-last: PyTorch's NHWC convolutions, batch norms and pools, the
    # layout dlc's cpu backend runs.
    nhwc = step(mlir, module, a, src, torch.float32, no_dropout, seen[3], channels_last=True)
    samples = [base, other, third, nhwc]
    if mode == "holdout":
        # The channels-last step judged as dlc's is, by the other three.
        held = tempfile.TemporaryDirectory()
        dump_step(nhwc, mlir, held.name)
        argv = argv[:3] + [held.name] + argv[3:]
        samples, seen = samples[:3], seen[:3]
        mode = "check"
    if mode == "check":
        decisions = []
        recorder = kinks.Recorder(keep_graph=True)
        reference = step(mlir, module, a, src, torch.float64, no_dropout, recorder,
                         lambda params, grads: decisions.extend(
                             kink_decisions(a.model, argv[3], recorder, seen, params, grads,
                                            samples)))
        if not decisions:
            return peers_same.judge(a.model, argv[3], mapping, reference, samples)
        # The float64 step with dlc's kink decisions, and with each float32 step's.
        mine, *theirs = [step(mlir, module, a, src, torch.float64, no_dropout,
                              kinks.Recorder(flips=f)) if f else reference for f in decisions]
        return peers_same.judge(a.model, argv[3], mapping, mine, samples,
                                distance_from=theirs)
    reference = step(mlir, module, a, src, torch.float64, no_dropout)
    with tempfile.TemporaryDirectory() as out:
        dump_step(other, mlir, out)
        return peers_same.judge(a.model + " (PyTorch float32, oneDNN off)", out, mapping,
                                reference, base)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
