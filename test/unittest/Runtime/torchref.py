"""Writes PyTorch reference arrays for the runtime's C++ tests.

A reference script builds random inputs with a fixed seed, runs the op and
its gradients in PyTorch (Debian's python3-torch, CPU, float64), and calls
write() with every input and result. TorchReference.cpp reads the file.

Format: for each array, a text line "name ndim d0 d1 ...\n" followed by
prod(shape) little-endian float64 values; the file ends with "end\n".
"""

import struct
import sys


def write(path, arrays):
    with open(path, "wb") as f:
        for name, value in arrays.items():
            t = value.detach().to("cpu").double().contiguous()
            shape = list(t.shape)
            f.write((" ".join([name, str(len(shape))] + [str(d) for d in shape]) + "\n").encode())
            flat = t.reshape(-1).tolist()
            f.write(struct.pack("<%dd" % len(flat), *flat))
        f.write(b"end\n")


def main(ops):
    """Entry point of a reference script: argv = OP OUTPUT [key=value ...]."""
    if len(sys.argv) < 3 or sys.argv[1] not in ops:
        sys.exit("usage: %s {%s} OUTPUT [key=value ...]" % (sys.argv[0], ",".join(sorted(ops))))
    params = {}
    for arg in sys.argv[3:]:
        key, _, value = arg.partition("=")
        params[key] = value
    write(sys.argv[2], ops[sys.argv[1]](params))
