#!/usr/bin/env python3
"""Checks that every gradient of a --dump-out directory holds values of a
smaller float type: what the optimizer read after gradients travelled in it
(--grad-compression), widened back to float32.

    grads_in_dtype.py DUMP f16|bf16

Prints how many gradients and elements were checked, and MISMATCH lines.
"""
import os
import sys

import numpy as np


def representable(values, dtype):
    if dtype == "f16":
        return values.astype(np.float16).astype(np.float32) == values
    if dtype == "bf16":
        # bfloat16 is the top half of a float32: the low 16 bits are zero.
        return (values.view(np.uint32) & 0xFFFF) == 0
    sys.exit("grads_in_dtype.py: unknown type %s (f16 or bf16)" % dtype)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    dump, dtype = sys.argv[1], sys.argv[2]
    names = sorted(f for f in os.listdir(dump) if f.endswith(".grad.npy"))
    elements, failures = 0, []
    for name in names:
        values = np.load(os.path.join(dump, name)).astype(np.float32)
        ok = representable(values, dtype)
        elements += values.size
        if not ok.all():
            failures.append("%s: %d of %d values are not %s" % (name, (~ok).sum(), values.size, dtype))
    print("%d gradients, %d values checked against %s" % (len(names), elements, dtype))
    for f in failures:
        print("MISMATCH " + f)
    return 1 if failures or not names else 0


if __name__ == "__main__":
    sys.exit(main())
