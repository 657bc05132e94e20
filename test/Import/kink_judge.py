"""Does import_step.py's kink fit (test/Import/kinks.py) judge what it should?

  kink_judge.py MLIR DIR WORK -- DLC_IMPORT_ARGS...

DIR holds dlc-import's parameters and inputs for Inputs/kink_net.py. The
input's first channel gets one value at the float64 mean of the others, so
the batch norm's output there is zero up to float32 rounding. Three dumps,
written by PyTorch in float64 as dlc-bench --dump-out writes them, are then
judged by `import_step.py check`:
  plain   the float64 step itself: passes, nothing to fit;
  flipped the float64 step with that one value's gradient on the other side
          of the kink: off by the plain rule (its batch-norm gradients move
          by the value's whole contribution), and passes by the fit, which
          must find exactly that one flip;
  wrong   flipped, plus a conv-weight gradient 1% off: no flip explains it,
          so it must still miss.
Then the same gradients with the ReLU's outputs in the dump, as dlc-bench
--dump-relu writes them, so the sides are read, not fitted:
  read          flipped, its output on the other side at that value: passes;
  read-unmoved  flipped, its output on float64's side: the gradients moved
                where the outputs say nothing did, so it misses;
  read-wrong    wrong, its output on the other side: misses.
Prints one line per dump with what the judge said.
"""

import contextlib
import io
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import import_step  # noqa: E402
import kinks  # noqa: E402


def place_kink(src, name):
    """Channel 0's last value (the last sample's) := the float64 mean of the
    channel's other values."""
    path = os.path.join(src, name + ".npy")
    x = np.load(path)
    channel = x[:, 0].reshape(-1).astype(np.float64)
    flat = x[:, 0].reshape(-1)
    flat[-1] = np.float32(channel[:-1].mean())
    x[:, 0] = flat.reshape(x[:, 0].shape)
    np.save(path, x)


def judge(argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = import_step.main(argv)
    return rc, out.getvalue()


def main(argv):
    mlir, src, work = argv[:3]
    args = argv[argv.index("--") + 1:]
    a = import_step.dlc_import.parser().parse_args(args + ["-o", os.devnull])
    module, _, _ = import_step.dlc_import.build(a)
    inputs = [n for n, r in import_step.roles(mlir).items() if r == "input"]
    # The kink value sits in the batch's last sample: flat index in NCHW.
    x = np.load(os.path.join(src, inputs[0] + ".npy"))
    n, c, h, w = x.shape
    place_kink(src, inputs[0])
    j = (n - 1) * c * h * w + (h * w - 1)
    dumps = {}
    recorder = kinks.Recorder()
    for label, flips in (("plain", {}), ("flipped", {0: torch.tensor([j])})):
        step = import_step.step(mlir, module, a, src, torch.float64, True,
                                recorder if not flips else kinks.Recorder(flips=flips))
        dumps[label] = os.path.join(work, label)
        os.makedirs(dumps[label], exist_ok=True)
        import_step.dump_step(step, mlir, dumps[label])
    dumps["wrong"] = os.path.join(work, "wrong")
    os.makedirs(dumps["wrong"], exist_ok=True)
    for f in os.listdir(dumps["flipped"]):
        t = np.load(os.path.join(dumps["flipped"], f))
        if f == "conv.weight.grad.npy":
            t.flat[0] += 0.01 * np.abs(t).max()
        np.save(os.path.join(dumps["wrong"], f), t)
    # The ReLU's output, float64's side everywhere, and with value j on the
    # other side.
    y = torch.relu(recorder.inputs[0]).numpy().copy()
    unmoved = y.copy()
    y.flat[j] = 0.0 if y.flat[j] > 0 else 1e-12
    for label, base, relu in (("read", "flipped", y), ("read-unmoved", "flipped", unmoved),
                              ("read-wrong", "wrong", y)):
        dumps[label] = os.path.join(work, label)
        os.makedirs(os.path.join(dumps[label], "relu"), exist_ok=True)
        for f in os.listdir(dumps[base]):
            if f.endswith(".npy"):
                np.save(os.path.join(dumps[label], f), np.load(os.path.join(dumps[base], f)))
        np.save(os.path.join(dumps[label], "relu", "0.npy"), relu.astype(np.float32))
    for label in ("plain", "flipped", "wrong", "read", "read-unmoved", "read-wrong"):
        rc, text = judge(["check", mlir, src, dumps[label], "--no-dropout", "--"] + args)
        lines = [ln for ln in text.splitlines() if ln]
        print("%s: exit %d" % (label, rc))
        for ln in lines:
            print("  " + ln)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
