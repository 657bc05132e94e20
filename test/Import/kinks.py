"""ReLU kinks: the part of a float32 step that float32 does not determine.

A value before a ReLU that float64 puts closer to zero than float32's own
error on that tensor lands on either side of the kink in a valid float32
step. On the other side, the gradient of everything before it changes by
that element's whole contribution, far past twice float32's distance
(docs/Importer.md, "ReLU kinks"). Allowing every such element's
contribution as slack would let real errors through (on resnet50 at
2x3x64x64 the sum of them is 0.65 of a gradient's largest value), so the
judge instead finds the kink decisions dlc made, and compares dlc with the
float64 step that makes the same ones:

- every ReLU of the module (nn.ReLU and F.relu) is recorded in call order,
  in the float64 step and in the float32 steps;
- an element is *undetermined* when its float64 value is within twice the
  farthest float32 step's largest error on that ReLU's input (the same
  samples and the same factor as the judge's bound);
- a float32 step's side of each undetermined element is read from its own
  ReLU input (`crossed`): exact, nothing fitted;
- dlc's side is read the same way from its ReLU outputs where its dump
  holds them (`dlc-bench --dump-relu`, `read_sides`: y > 0 exactly where
  x > 0). A dump without them is fitted instead: flipping
  undetermined element j changes the gradients by s_j g_j d x_j / d theta
  (g_j = dL/dy_j at the ReLU's output, s_j = -1 where the float64 value
  passes and +1 where it is cut), to first order (the forward value moves
  by less than float32's error), and the flips that explain dlc's
  gradients best are chosen greedily on a count sketch of every gradient
  measured in units of its bound (each flip taken only while it brings the
  sketch closer);
- the float64 step is run again with exactly those elements' gradients
  passed or cut the other way (forward values unchanged), once per float32
  step that crossed a kink and once for dlc's fit; each float32 step's
  distance is measured from its own, and dlc's fitted side is taken only
  where it leaves fewer tensors off than the plain float64 step
  (import_step.py check). A wrong gradient is no combination of single
  activations' contributions, so it still misses.
"""

import contextlib
import os

import numpy as np
import torch
import torch.nn.functional as F

# Above this many undetermined elements the per-element gradients cost more
# than the check is worth; the judge then says so and fits nothing for dlc
# (the float32 steps' sides are still read, at no such cost).
MAX_ELEMENTS = 512
SKETCH = 1 << 18


class Recorder:
    """Every ReLU call of one step, in call order. keep_graph: keep each
    input in the autograd graph and the gradient at each output (the float64
    step); otherwise a float64 copy of the input (the float32 steps).
    flips: call index -> flat indices whose gradient goes the other way."""

    def __init__(self, keep_graph=False, flips=None):
        self.keep_graph = keep_graph
        self.flips = flips or {}
        self.inputs, self.outputs = [], []
        self.calls = 0

    def relu(self, x):
        k, self.calls = self.calls, self.calls + 1
        y = torch.relu(x)
        if k in self.flips:
            idx = self.flips[k]
            passes = x.detach().flatten()[idx] > 0
            sign = torch.zeros(x.numel(), dtype=x.dtype)
            sign[idx] = torch.where(passes, -1.0, 1.0).to(x.dtype)
            # Adds exactly 0 to the value and +-dL/dy to the gradient at idx.
            y = y + sign.view_as(x) * (x - x.detach())
        if self.keep_graph:
            self.inputs.append(x)
            self.outputs.append(y)
            if y.requires_grad:
                y.retain_grad()
        else:
            self.inputs.append(x.detach().double().clone())
        return y


class _ReLU(torch.nn.Module):
    def __init__(self, recorder):
        super().__init__()
        self.recorder = recorder

    def forward(self, x):
        return self.recorder.relu(x)


@contextlib.contextmanager
def recording(module, recorder):
    """Routes the module's ReLUs through recorder while the block runs."""
    swapped = [(parent, name, child) for parent in module.modules()
               for name, child in parent.named_children() if type(child) is torch.nn.ReLU]
    for parent, name, _ in swapped:
        setattr(parent, name, _ReLU(recorder))
    functional = F.relu
    F.relu = lambda x, inplace=False: recorder.relu(x)
    try:
        yield
    finally:
        F.relu = functional
        for parent, name, child in swapped:
            setattr(parent, name, child)


def undetermined(reference, samples):
    """[(call, flat indices)]: the float64 ReLU inputs within twice the
    farther float32 sample's largest error on that input; None where the
    steps did not make the same ReLU calls."""
    if any(len(s.inputs) != len(reference.inputs) for s in samples):
        return None
    calls = []
    for k, x in enumerate(reference.inputs):
        x64 = x.detach()
        if any(s.inputs[k].shape != x64.shape for s in samples):
            return None
        err = max((s.inputs[k] - x64).abs().max().item() for s in samples)
        near = (x64.abs() <= 2 * err).flatten().nonzero().flatten()
        if len(near):
            calls.append((k, near))
    return calls


def crossed(reference, sample, calls):
    """The undetermined values a float32 step put on the other side of the
    kink from float64, read from its own ReLU inputs (x > 0 is the side:
    PyTorch's ReLU passes the gradient only there), as {call: flat indices}
    for the float64 step to flip. No fit: a float32 step's decisions are
    known exactly. A value float32 moved across zero lies within that
    step's error of zero, so `calls` holds every one of them."""
    flips = {}
    for k, idx in calls:
        x64 = reference.inputs[k].detach().flatten()[idx]
        mine = sample.inputs[k].flatten()[idx]
        other = idx[(x64 > 0) != (mine > 0)]
        if len(other):
            flips[k] = other
    return flips


def read_sides(dump, reference):
    """dlc's ReLU outputs (dlc-bench --dump-relu: DUMP/relu/<k>.npy, the
    k-th ReLU kernel of its plan) as a Recorder whose inputs carry dlc's
    side of every value, for `crossed`: a ReLU's output is positive exactly
    where its input is. dlc's outputs are matched to PyTorch's calls in
    order, each to the next call whose float64 output it is within
    float32's error of (1% of its largest value), read in whichever layout
    matches, NCHW or dlc's channels-last. A call dlc's step does not make
    (a branch the loss does not read, such as Inception's auxiliary head in
    training, which dlc-import leaves out) keeps float64's side.
    Returns (Recorder, note), or (None, why) where they cannot be matched:
    no --dump-relu, a ReLU left out of the dump, or an output that is no
    call's."""
    folder = os.path.join(dump, "relu")
    if not os.path.isdir(folder):
        return None, "no ReLU outputs in the dump (dlc-bench --dump-relu)"
    have = sorted(int(f[:-len(".npy")]) for f in os.listdir(folder) if f.endswith(".npy"))
    if have != list(range(len(have))):
        return None, "dlc's dump lacks ReLU output %d (inside a fused group)" % next(
            k for k in range(len(have) + 1) if k not in have)
    sides, mine, skipped = Recorder(), 0, 0
    y = None
    for x64 in reference.inputs:
        y64 = torch.relu(x64.detach())
        if mine < len(have) and y is None:
            y = torch.from_numpy(np.load(os.path.join(folder, "%d.npy" % mine))).double()
        layouts = [] if y is None else [y] if y.shape == y64.shape else []
        if y is not None and y.dim() == 4 and y.permute(0, 3, 1, 2).shape == y64.shape:
            layouts.append(y.permute(0, 3, 1, 2))
        off = [(t - y64).abs().max().item() for t in layouts]
        if off and min(off) <= 1e-2 * max(y64.abs().max().item(), 1e-30):
            sides.inputs.append(layouts[off.index(min(off))].contiguous())
            mine, y = mine + 1, None
        else:
            sides.inputs.append(x64.detach().clone())
            skipped += 1
    if mine < len(have):
        return None, "dlc's ReLU output %d matches none of PyTorch's ReLU calls left" % mine
    return sides, ("" if not skipped else "%d of PyTorch's %d ReLU calls are not in dlc's step"
                   % (skipped, len(reference.inputs)))


def fit(reference, calls, params, residuals, unit):
    """For each of `residuals` (a list of name -> a step's gradient minus
    the float64 one), two candidate sets of flips that explain it, each
    {call: flat indices}, chosen greedily in units of each gradient's bound
    (unit: name -> the absolute bound of that gradient):
    - on a count sketch (2^18 buckets) of every gradient;
    - with each flip's dot with the residual taken exactly, over every
      element, and only the flips' dots with one another from the sketch.
      In the sketch, float32 noise of the millions of other elements that
      share a bucket with a flip's support adds to that flip's dot; on
      regnet_x_400mf's held-out channels-last step the sketch's fit left
      208 tensors off, the exact dots' 126 (its true sides: 38).
    The caller judges both and keeps the better (import_step.py check).
    reference: the float64 step's Recorder, its graph alive."""
    gen = torch.Generator().manual_seed(0)
    names = list(params)
    hashes = {n: torch.randint(0, SKETCH, (params[n].numel(),), generator=gen) for n in names}
    signs = {n: (torch.randint(0, 2, (params[n].numel(),), generator=gen) * 2 - 1).double() / unit[n]
             for n in names}

    def sketch(parts):
        out = torch.zeros(SKETCH, dtype=torch.float64)
        for n, v in parts.items():
            out.index_add_(0, hashes[n], signs[n] * v.detach().double().flatten())
        return out

    targets = [{n: r[n].detach().double().flatten() / unit[n] ** 2 for n in names} for r in residuals]
    effects, where, exact, norms = [], [], [[] for _ in residuals], []
    for k, idx in calls:
        x, y = reference.inputs[k], reference.outputs[k]
        if y.grad is None:
            continue
        flat, g = x.flatten(), y.grad.flatten()
        for j in idx.tolist():
            if g[j].item() == 0.0:
                continue
            step = (-1.0 if flat[j].item() > 0 else 1.0) * g[j].item()
            parts = torch.autograd.grad(flat[j], [params[n] for n in names],
                                        retain_graph=True, allow_unused=True)
            parts = {n: d.detach().double().flatten() for n, d in zip(names, parts) if d is not None}
            for i, t in enumerate(targets):
                exact[i].append(step * sum(torch.dot(t[n], d).item() for n, d in parts.items()))
            norms.append(step * step * sum((d * d).sum().item() / unit[n] ** 2 for n, d in parts.items()))
            effects.append(step * sketch(parts))
            where.append((k, j))
    if not effects:
        return [[{}, {}] for _ in residuals]
    e = torch.stack(effects)
    gram = e @ e.T
    mixed = gram.clone()
    mixed.diagonal().copy_(torch.tensor(norms, dtype=torch.float64))
    return [[greedy(e @ sketch(r), gram, where), greedy(torch.tensor(d, dtype=torch.float64), mixed, where)]
            for r, d in zip(residuals, exact)]


def greedy(dots, gram, where):
    """Flips taken (or given back) one at a time while each brings the
    residual closer: dots[i] = <residual, effect i>, gram[i][j] = <effect i,
    effect j>, in units of each gradient's bound."""
    n = len(dots)
    chosen = torch.zeros(n, dtype=torch.bool)
    t = dots.clone()  # <residual - the chosen effects, effect i>
    for _ in range(2 * n):
        v = torch.where(chosen, -1.0, 1.0).double()
        gain = 2 * v * t - gram.diagonal()
        best = int(torch.argmax(gain))
        if not gain[best].item() > 0.0:
            break
        t -= v[best] * gram[best]
        chosen[best] = not chosen[best]
    flips = {}
    for i in torch.nonzero(chosen).flatten().tolist():
        k, j = where[i]
        flips.setdefault(k, []).append(j)
    return {k: torch.tensor(v, dtype=torch.long) for k, v in flips.items()}
