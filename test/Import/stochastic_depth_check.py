"""Did dlc's step drop whole samples, as torchvision's stochastic depth does?

  stochastic_depth_check.py DIR DUMP MODE P

DIR holds Inputs/new_ops.py:StochasticHead's weights and batch (dlc-import
--params-out / --inputs-out), DUMP a dlc-bench --dump-out of one step with
the rate on. In float64, for every way of keeping some samples ("row") or
all or none ("batch"), each kept one scaled by 1/(1-P): the loss and
fc.weight's gradient. dlc's must be one of them (relative error 1e-4);
prints which samples it kept.
"""

import itertools
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F


def main():
    src, dump, mode, p = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    load = lambda d, n: torch.from_numpy(np.load(os.path.join(d, n + ".npy")))
    x, labels = load(src, "x").double(), load(src, "labels")
    loss, grad = float(np.load(os.path.join(dump, "loss.npy"))), np.load(os.path.join(dump, "fc.weight.grad.npy"))
    n = x.shape[0]
    masks = itertools.product([0, 1], repeat=n) if mode == "row" else [(0,) * n, (1,) * n]
    for keep in masks:
        w = load(src, "fc.weight").double().requires_grad_()
        m = torch.tensor(keep, dtype=torch.float64).reshape(n, 1) / (1 - p)
        t = F.cross_entropy((x @ w.T + load(src, "fc.bias").double()) * m, labels)
        t.backward()
        g = w.grad.numpy()
        if abs(loss - t.item()) <= 1e-4 * max(abs(t.item()), 1e-6) and \
                np.abs(grad - g).max() <= 1e-4 * max(np.abs(g).max(), 1e-6):
            print("kept samples %s: loss %.6g and fc.weight's gradient match" % (list(keep), loss))
            return 0
    print("NO MATCH: loss %.6g is no %s-mode stochastic depth of the batch" % (loss, mode))
    return 1


if __name__ == "__main__":
    sys.exit(main())
