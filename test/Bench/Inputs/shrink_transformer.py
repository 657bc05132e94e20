"""Writes a small variant of a seed transformer (bert_base, gpt2): the same
ops and attention pattern (masked or causal, with dropout), with a shorter
sequence, narrower layers and a smaller vocabulary, so that a step runs in
seconds on the reference backend.

  shrink_transformer.py MODEL.mlir OUT.mlir
"""
import re
import sys

src, out = sys.argv[1], sys.argv[2]
text = open(src).read()
# Sequence, vocabulary, hidden, MLP and head widths of the two models.
# 12 heads of 8 (hidden 96), as the originals' 12 of 64 (hidden 768).
sizes = {"1024": "32", "128": "16", "50257": "257", "30522": "522", "512": "64",
         "3072": "384", "2304": "288", "1536": "192", "768": "96", "64": "8"}


def arange(m):
    n = int(m.group(2))
    n = int(sizes.get(str(n), n))
    return "dense<[%s]> : tensor<%dx%s>" % (", ".join(map(str, range(n))), n, m.group(3))


text = re.sub(r"dense<\[(0(?:, \d+)*)\]> : tensor<(\d+)x(i64|i32)>", arange, text)
number = re.compile(r"(?<![A-Za-wyz_.\d%#])(" + "|".join(sizes) + r")(?![\d.])")
text = number.sub(lambda m: sizes[m.group(1)], text)
open(out, "w").write(text)
