"""Does an imported model train as the PyTorch module it came from?

  import_step.py check MLIR DIR DUMP [--no-dropout] -- DLC_IMPORT_ARGS...
  import_step.py self MLIR DIR [--no-dropout] -- DLC_IMPORT_ARGS...
  import_step.py holdout MLIR DIR [--no-dropout] [--known-sides] -- DLC_IMPORT_ARGS...

Builds the module again from dlc-import's own arguments, loads DIR (what
dlc-import --params-out and --inputs-out wrote), runs one step in float64
and five in float32 (the model file's loss, on the output dlc-import
chose, and its optimizer), and judges dlc's --dump-out DUMP by
peers-same-model's rule (test/Bench/Inputs/peers_same.py judge): each
tensor within twice PyTorch float32's own distance from float64.
Float32's distance is sampled five times: one step with oneDNN
(PyTorch's default), one with it off (torch.backends.mkldnn.enabled =
False: other convolution kernels), one with oneDNN at another thread
count (2 where PyTorch runs 1, as on these 2-vCPU machines, so other
summation orders), one channels-last (NHWC kernels, the layout dlc's
cpu backend runs) and one channels-last at the other thread count (NHWC
at two threads, as dlc's cpu backend runs here), each as valid a float32
step as the first; the bound is twice the farthest (docs/Importer.md,
"Checking a step against PyTorch"). Where dlc is off by that rule, the
ReLU kinks float32 does not determine are taken into account
(test/Import/kinks.py, `check` below): each float32 step's side read from
its own ReLU inputs, dlc's fitted. --no-dropout sets every
dropout (and stochastic-depth) rate of the module to 0, for a file whose
rates the test zeroed.

`self` judges the one-sample rule instead of dlc: the oneDNN-off step
judged by twice the oneDNN step's distance alone. Where it misses, one
float32 sample's distance is tighter than float32 itself on that model.
`holdout` judges PyTorch's fifth sample (channels-last at the other
thread count) as `check` judges dlc's, by the other four: where it
misses, four samples understate float32's own distance on that model
(or the kink fit misses its sides). With --known-sides its kink sides
are read from its ReLU inputs instead of fitted, which measures the rule
alone.
"""

import contextlib
import copy
import io
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


def quiet(judge, *args, **kwargs):
    """peers_same.judge's exit code and what it printed, the MISMATCH lines
    counted: (rc, text, tensors off)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = judge(*args, **kwargs)
    text = out.getvalue()
    return rc, text, sum(line.startswith("MISMATCH") for line in text.splitlines())


def check(a, mlir, src, dump, module, mapping, samples, seen, no_dropout, known=None):
    """dlc's step judged by the rule, the ReLU kinks float32 does not
    determine taken into account (test/Import/kinks.py):
    - each float32 step's side of those kinks is read from its own ReLU
      inputs, and its distance is measured from the float64 step with
      exactly its decisions (a float32 step across a kink is far from the
      plain float64 step, and twice that distance would let anything
      through on the tensors before the kink);
    - where the dump holds dlc's ReLU outputs (dlc-bench --dump-relu),
      dlc's sides are read from them the same way, and dlc is judged
      against the float64 step with exactly its decisions;
    - otherwise dlc's step is judged against the plain float64 step by
      that bound; only where it misses is dlc's side fitted, and the fit
      is taken only where the float64 step with dlc's fitted decisions
      leaves fewer tensors off than the plain one: a fit can explain a
      miss away, never make a step look worse.
    known: the judged step's own kinks.Recorder, where it is a PyTorch
    step (holdout --known-sides): its sides are read, not fitted."""
    recorder = kinks.Recorder()
    reference = step(mlir, module, a, src, torch.float64, no_dropout, recorder)
    calls = kinks.undetermined(recorder, seen)
    if calls is None:
        print("%s: ReLU kinks not judged: the float32 and float64 steps made different ReLU calls"
              % a.model)
    if not calls:
        return peers_same.judge(a.model, dump, mapping, reference, samples)
    count = sum(len(idx) for _, idx in calls)
    own = [kinks.crossed(recorder, s, calls) for s in seen]
    theirs = [step(mlir, module, a, src, torch.float64, no_dropout, kinks.Recorder(flips=f))
              if f else reference for f in own]
    rc, text, off = quiet(peers_same.judge, a.model, dump, mapping, reference, samples,
                          distance_from=theirs)
    head = ("%s: %d ReLU values that float32 does not determine; the float32 steps took the other "
            "side of %s of them; %d tensors off against the plain float64 step"
            % (a.model, count, ", ".join(str(sum(len(v) for v in f.values())) for f in own), off))
    read, why = (known, "") if known is not None else kinks.read_sides(dump, recorder)
    if read is not None:
        head += "; " + why if why else ""
        # dlc's sides (or a held-out PyTorch step's) read, as the float32
        # steps' are: judged against the float64 step with exactly them.
        flips = kinks.crossed(recorder, read, calls)
        mine = step(mlir, module, a, src, torch.float64, no_dropout,
                    kinks.Recorder(flips=flips)) if flips else reference
        print(head + "; judged against the float64 step with its own sides of them, read "
              "from its ReLU %s: %d" % ("inputs" if known is not None else "outputs",
                                       sum(len(v) for v in flips.values())))
        return peers_same.judge(a.model, dump, mapping, mine, samples, distance_from=theirs)
    head += "; dlc's sides not read: " + why
    if rc == 0 or count > kinks.MAX_ELEMENTS:
        print(head + ("" if rc == 0 else "; dlc's side not fitted: more than %d values"
                      % kinks.MAX_ELEMENTS))
        print(text, end="")
        return rc
    # dlc's side, fitted on its gradients, each weighed by its bound.
    fitted = []

    def fit(params, grads):
        residual, unit = {}, {}
        for n, g in grads.items():
            path = os.path.join(dump, n + ".grad.npy")
            mine = torch.from_numpy(np.load(path)).double() if os.path.exists(path) else None
            if mine is None or mine.shape != g.shape:
                return  # the judge reports it
            bound = max(peers_same.TOLERANCE, 2 * max(
                peers_same.distance(s[1][n], t[1][n].detach().double())
                for s, t in zip(samples, theirs)))
            residual[n], unit[n] = mine - g, bound * max(g.abs().max().item(), 1e-12)
        fitted.extend(kinks.fit(live, calls, params, [residual], unit))

    live = kinks.Recorder(keep_graph=True)
    step(mlir, module, a, src, torch.float64, no_dropout, live, fit)
    # The fit's candidates (kinks.fit), each judged; the one that leaves
    # fewest tensors off is taken if it leaves fewer than the plain step.
    best, tried = None, []
    for flips in (fitted[0] if fitted else []):
        n = sum(len(v) for v in flips.values())
        if not n or any(flips.keys() == f.keys() and all(torch.equal(flips[k], f[k]) for k in f)
                        for f in tried):
            continue
        tried.append(flips)
        mine = step(mlir, module, a, src, torch.float64, no_dropout, kinks.Recorder(flips=flips))
        judged = quiet(peers_same.judge, a.model, dump, mapping, mine, samples, distance_from=theirs)
        if best is None or judged[2] < best[1][2]:
            best = (n, judged)
    if best is None:
        head += "; no fitted flip explains dlc's gradients better"
    elif best[1][2] < off:
        print(head + "; %d against the float64 step with %d of them on dlc's fitted side "
              "(taken)" % (best[1][2], best[0]))
        print(best[1][1], end="")
        return best[1][0]
    else:
        head += "; %d against the float64 step with %d of them on dlc's fitted side (not taken)" % (
            best[1][2], best[0])
    print(head)
    print(text, end="")
    return rc


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
    known = "--known-sides" in argv[fixed:argv.index("--")]
    a = dlc_import.parser().parse_args(argv[argv.index("--") + 1:] + ["-o", os.devnull])
    module, _, _ = dlc_import.build(a)
    mapping = {n: n for n, r in roles(mlir).items() if r in ("param", "buffer")}
    threads = torch.get_num_threads()
    other_threads = 2 if threads == 1 else 1
    # The float32 samples: (oneDNN on, threads, channels-last). Channels-last
    # runs PyTorch's NHWC convolutions, batch norms and pools, the layout
    # dlc's cpu backend runs; the last runs them at dlc's thread count too.
    configs = [(True, threads, False), (False, threads, False), (True, other_threads, False),
               (True, threads, True), (True, other_threads, True)]
    seen = [kinks.Recorder() for _ in configs]
    samples = []
    for (mkldnn, n, nhwc), recorder in zip(configs, seen):
        torch.backends.mkldnn.enabled = mkldnn
        torch.set_num_threads(n)
        samples.append(step(mlir, module, a, src, torch.float32, no_dropout, recorder,
                            channels_last=nhwc))
    torch.backends.mkldnn.enabled = True
    torch.set_num_threads(threads)
    base, other = samples[0], samples[1]
    held_seen = None  # holdout: the held-out step's ReLU inputs
    if mode == "holdout":
        # The last sample (channels-last at the other thread count) judged
        # as dlc's is, by the other four.
        held_seen = seen[-1]
        held = tempfile.TemporaryDirectory()
        dump_step(samples[-1], mlir, held.name)
        argv = argv[:3] + [held.name] + argv[3:]
        samples, seen = samples[:-1], seen[:-1]
        mode = "check"
    if mode == "check":
        return check(a, mlir, src, argv[3], module, mapping, samples, seen, no_dropout,
                     held_seen if known else None)
    reference = step(mlir, module, a, src, torch.float64, no_dropout)
    with tempfile.TemporaryDirectory() as out:
        dump_step(other, mlir, out)
        return peers_same.judge(a.model + " (PyTorch float32, oneDNN off)", out, mapping,
                                reference, base)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
