#!/usr/bin/env python3
"""Writes the seed models of the reports dlc grew from as train-dialect files.

  models/generate.py            regenerate every model next to this script
  models/generate.py --check    exit 1 if a checked-in file differs

Models this long are generated, not written by hand: a small builder tracks
shapes so that every op line carries its operand types, and names every
parameter as the reference implementation does (torchvision, Hugging Face
transformers), so that --params-in can load their weights by name.
Batch dimensions stay dynamic (`?`); dlc-bench --batch sets them.
"""

import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def fmt_shape(shape):
    return "x".join("?" if d is None else str(d) for d in shape)


class V:
    """An SSA value with its static shape (None for the batch)."""

    def __init__(self, name, shape, dtype="f32"):
        self.name, self.shape, self.dtype = name, list(shape), dtype

    @property
    def ty(self):
        dims = fmt_shape(self.shape)
        return "tensor<%s%s>" % (dims + "x" if dims else "", self.dtype)


def literal(x, ty):
    text = repr(float(x))
    if "e" in text and "." not in text.split("e")[0]:  # MLIR wants 1.0e-08
        mantissa, exponent = text.split("e")
        text = mantissa + ".0e" + exponent
    return text + " : " + ty


def f64(x):
    return literal(x, "f64")


def f32(x):
    return literal(x, "f32")


class Builder:
    def __init__(self):
        self.args, self.lines, self.count = [], [], 0

    # --- arguments -------------------------------------------------------
    def _arg(self, name, shape, dtype, attrs):
        v = V("%%a%d" % len(self.args), shape, dtype)
        self.args.append('%s: %s {train.name = "%s", %s}' % (v.name, v.ty, name, attrs))
        return v

    def input(self, name, shape, dtype="f32"):
        return self._arg(name, shape, dtype, "train.input")

    def label(self, name, shape):
        return self._arg(name, shape, "i64", "train.label")

    def param(self, name, shape, init):
        return self._arg(name, shape, "f32", "train.param = {%s}" % init)

    def buffer(self, name, shape, init):
        return self._arg(name, shape, "f32", "train.buffer = {%s}" % init)

    # --- ops ---------------------------------------------------------------
    def emit(self, text, *operands, shape, dtype="f32", results=1):
        self.count += 1
        name = "%%%d" % self.count
        lhs = name if results == 1 else "%s:%d" % (name, results)
        types = ", ".join(o.ty for o in operands)
        self.lines.append("    %s = %s : %s" % (lhs, text, types))
        return V(name if results == 1 else name + "#0", shape, dtype)

    def conv(self, x, w, stride=1, pad=0, dil=1, groups=1, bias=None):
        n, c, h, wd = x.shape
        k, _, r, s = w.shape
        oh = (h + 2 * pad - dil * (r - 1) - 1) // stride + 1
        ow = (wd + 2 * pad - dil * (s - 1) - 1) // stride + 1
        attrs = []
        if dil != 1:
            attrs.append("dilation = array<i64: %d, %d>" % (dil, dil))
        if groups != 1:
            attrs.append("groups = %d : i64" % groups)
        if pad:
            attrs.append("padding = array<i64: %d, %d>" % (pad, pad))
        if stride != 1:
            attrs.append("stride = array<i64: %d, %d>" % (stride, stride))
        ops = [x, w] + ([bias] if bias else [])
        text = "train.conv2d " + ", ".join(o.name for o in ops)
        if attrs:
            text += " {%s}" % ", ".join(attrs)
        return self.emit(text, *ops, shape=[n, k, oh, ow])

    def bn(self, x, g, b, rm, rv, eps=1e-5):
        attrs = "" if eps == 1e-5 else " {epsilon = %s}" % f32(eps)
        return self.emit("train.batch_norm %s, %s, %s, %s, %s%s" % (x.name, g.name, b.name, rm.name, rv.name, attrs),
                         x, g, b, rm, rv, shape=x.shape, results=3)

    def unary(self, op, x, attrs=""):
        return self.emit("train.%s %s%s" % (op, x.name, attrs), x, shape=x.shape)

    def binary(self, op, a, b):
        rank = max(len(a.shape), len(b.shape))
        pa = [1] * (rank - len(a.shape)) + a.shape
        pb = [1] * (rank - len(b.shape)) + b.shape
        shape = [y if x == 1 else x for x, y in zip(pa, pb)]
        return self.emit("train.%s %s, %s" % (op, a.name, b.name), a, b, shape=shape)

    def pool(self, op, x, k, s, pad=0):
        n, c, h, w = x.shape
        out = [(d + 2 * pad - k) // s + 1 for d in (h, w)]
        attrs = "kernel_size = array<i64: %d, %d>, " % (k, k)
        if pad:
            attrs += "padding = array<i64: %d, %d>, " % (pad, pad)
        attrs += "stride = array<i64: %d, %d>" % (s, s)
        return self.emit("train.%s %s {%s}" % (op, x.name, attrs), x, shape=[n, c] + out)

    def gap(self, x):
        return self.emit("train.global_avg_pool %s" % x.name, x, shape=x.shape[:2] + [1, 1])

    def reshape(self, x, shape):
        spec = [-1 if d is None else d for d in shape]
        return self.emit("train.reshape %s {shape = array<i64: %s>}" % (x.name, ", ".join(map(str, spec))),
                         x, shape=shape)

    def transpose(self, x, perm):
        return self.emit("train.transpose %s {permutation = array<i64: %s>}" % (x.name, ", ".join(map(str, perm))),
                         x, shape=[x.shape[p] for p in perm])

    def linear(self, x, w, b=None):
        ops = [x, w] + ([b] if b else [])
        return self.emit("train.linear " + ", ".join(o.name for o in ops), *ops,
                         shape=x.shape[:-1] + [w.shape[0]])

    def matmul(self, a, b, tb=False):
        attrs = " {transpose_rhs = true}" if tb else ""
        n = b.shape[-2] if tb else b.shape[-1]
        return self.emit("train.matmul %s, %s%s" % (a.name, b.name, attrs), a, b, shape=a.shape[:-1] + [n])

    def softmax(self, x, scale, causal=False, mask=None):
        attrs = []
        if causal:
            attrs.append("causal = true")
        attrs.append("scale = %s" % f32(scale))
        if mask:
            return self.emit("train.softmax %s mask %s {%s}" % (x.name, mask.name, ", ".join(attrs)),
                             x, mask, shape=x.shape)
        return self.emit("train.softmax %s {%s}" % (x.name, ", ".join(attrs)), x, shape=x.shape)

    def layer_norm(self, x, g, b, eps):
        return self.emit("train.layer_norm %s, %s, %s {epsilon = %s}" % (x.name, g.name, b.name, f32(eps)),
                         x, g, b, shape=x.shape)

    def embedding(self, table, ids):
        return self.emit("train.embedding %s, %s" % (table.name, ids.name), table, ids,
                         shape=ids.shape + [table.shape[1]])

    def dropout(self, x, rate, seed):
        return self.unary("dropout", x, " {rate = %s, seed = %d : i64}" % (f32(rate), seed))

    def slice(self, x, axis, start, end):
        shape = list(x.shape)
        shape[axis] = end - start
        return self.emit("train.slice %s {axis = %d : i64, end = %d : i64, start = %d : i64}"
                         % (x.name, axis, end, start), x, shape=shape)

    def constant_range(self, n):
        self.count += 1
        name = "%%%d" % self.count
        values = ", ".join(str(i) for i in range(n))
        self.lines.append("    %s = train.constant dense<[%s]> : tensor<%dxi64>" % (name, values, n))
        return V(name, [n], "i64")

    def cross_entropy(self, logits, labels, class_axis=1, ignore=None):
        attrs = []
        if class_axis != 1:
            attrs.append("class_axis = %d : i64" % class_axis)
        if ignore is not None:
            attrs.append("ignore_index = %d : i64" % ignore)
        text = "train.softmax_cross_entropy %s, %s" % (logits.name, labels.name)
        if attrs:
            text += " {%s}" % ", ".join(attrs)
        return self.emit(text, logits, labels, shape=[])

    def text(self, header, optimizer, loss):
        out = ["// " + line if line else "//" for line in header]
        out.append("// Generated by models/generate.py; do not edit by hand.")
        out.append("module {")
        out.append("  func.func @forward(")
        out.append(",\n".join("      " + a for a in self.args) + ")")
        out.append("      -> tensor<f32>")
        out.append("      attributes {train.optimizer = {%s}} {" % optimizer)
        out.extend(self.lines)
        out.append("    return %s : tensor<f32>" % loss.name)
        out.append("  }")
        out.append("}")
        return "\n".join(out) + "\n"


# PyTorch's defaults and the reference implementations' initializers.
KAIMING_FAN_OUT = 'init = "kaiming_normal", mode = "fan_out", nonlinearity = "relu"'
ONES, ZEROS = 'init = "ones"', 'init = "zeros"'


def torch_linear_init(fan_in):
    """nn.Linear's default: kaiming_uniform(a=sqrt(5)), bias U(+-1/sqrt(fan_in))."""
    bound = 1 / math.sqrt(fan_in)
    return ('init = "kaiming_uniform", a = %s' % f64(math.sqrt(5)),
            'high = %s, init = "uniform", low = %s' % (f64(bound), f64(-bound)))


def normal(std):
    return 'init = "normal", std = %s' % f64(std)


def resnet50():
    b = Builder()
    x = b.input("x", [None, 3, 224, 224])
    labels = b.label("labels", [None])

    def conv_bn(x, name, bn_name, cout, k, stride=1, pad=0, relu=True):
        w = b.param(name + ".weight", [cout, x.shape[1], k, k], KAIMING_FAN_OUT)
        y = b.conv(x, w, stride=stride, pad=pad)
        g = b.param(bn_name + ".weight", [cout], ONES)
        be = b.param(bn_name + ".bias", [cout], ZEROS)
        rm = b.buffer(bn_name + ".running_mean", [cout], ZEROS)
        rv = b.buffer(bn_name + ".running_var", [cout], ONES)
        y = b.bn(y, g, be, rm, rv)
        return b.unary("relu", y) if relu else y

    h = conv_bn(x, "conv1", "bn1", 64, 7, stride=2, pad=3)
    h = b.pool("max_pool2d", h, 3, 2, pad=1)
    for layer, (width, blocks, stride) in enumerate([(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)], 1):
        for i in range(blocks):
            p = "layer%d.%d." % (layer, i)
            s = stride if i == 0 else 1
            y = conv_bn(h, p + "conv1", p + "bn1", width, 1)
            # ResNet v1.5: the stride is on the 3x3 convolution.
            y = conv_bn(y, p + "conv2", p + "bn2", width, 3, stride=s, pad=1)
            y = conv_bn(y, p + "conv3", p + "bn3", width * 4, 1, relu=False)
            if i == 0:
                h = conv_bn(h, p + "downsample.0", p + "downsample.1", width * 4, 1, stride=s, relu=False)
            h = b.unary("relu", b.binary("add", y, h))
    h = b.reshape(b.gap(h), [None, 2048])
    wi, bi = torch_linear_init(2048)
    logits = b.linear(h, b.param("fc.weight", [1000, 2048], wi), b.param("fc.bias", [1000], bi))
    loss = b.cross_entropy(logits, labels)
    return b.text([
        "ResNet-50 v1.5: He et al., Deep Residual Learning for Image Recognition",
        "(CVPR 2016), with the stride on the 3x3 convolution of each downsampling",
        "bottleneck as in torchvision.models.resnet50 (the reference implementation",
        "whose parameter names and initializers this file uses). ImageNet, 224x224,",
        "1000 classes; 25,557,032 parameters.",
        "Default benchmark setting of the seed reports: batch 256, SGD with momentum.",
    ], 'kind = "sgd", lr = %s, momentum = %s, weight_decay = %s' % (f64(0.1), f64(0.9), f64(1e-4)), loss)


def vgg16():
    b = Builder()
    x = b.input("x", [None, 3, 224, 224])
    labels = b.label("labels", [None])
    h, index = x, 0
    for v in [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]:
        if v == "M":
            h = b.pool("max_pool2d", h, 2, 2)
            index += 1
            continue
        w = b.param("features.%d.weight" % index, [v, h.shape[1], 3, 3], KAIMING_FAN_OUT)
        bias = b.param("features.%d.bias" % index, [v], ZEROS)
        h = b.unary("relu", b.conv(h, w, pad=1, bias=bias))
        index += 2
    # The adaptive 7x7 average pool is the identity at 224x224.
    h = b.reshape(h, [None, 512 * 7 * 7])
    for i, (fin, fout) in enumerate([(25088, 4096), (4096, 4096), (4096, 1000)]):
        w = b.param("classifier.%d.weight" % (3 * i), [fout, fin], normal(0.01))
        bias = b.param("classifier.%d.bias" % (3 * i), [fout], ZEROS)
        h = b.linear(h, w, bias)
        if i < 2:
            h = b.dropout(b.unary("relu", h), 0.5, i + 1)
    loss = b.cross_entropy(h, labels)
    return b.text([
        "VGG16: Simonyan and Zisserman, Very Deep Convolutional Networks for",
        "Large-Scale Image Recognition (ICLR 2015), configuration D, without batch",
        "norm, as torchvision.models.vgg16 (names and initializers), with its two",
        "dropouts. ImageNet, 224x224, 1000 classes; 138,357,544 parameters.",
        "Default benchmark setting of the seed reports: batch 32/64/128, SGD.",
    ], 'kind = "sgd", lr = %s, momentum = %s, weight_decay = %s' % (f64(0.01), f64(0.9), f64(5e-4)), loss)


def transformer_block(b, h, prefix, heads, seq, causal, mask, eps, seeds, gelu_tanh, pre_norm,
                      names, proj_std):
    """One transformer layer. `names` maps roles to parameter names."""
    d = h.shape[-1]
    hd = d // heads

    def ln(x, role):
        return b.layer_norm(x, b.param(names[role] + ".weight", [d], ONES),
                            b.param(names[role] + ".bias", [d], ZEROS), eps)

    def lin(x, role, fin, fout, std=0.02):
        return b.linear(x, b.param(names[role] + ".weight", [fout, fin], normal(std)),
                        b.param(names[role] + ".bias", [fout], ZEROS))

    def split_heads(t):
        return b.transpose(b.reshape(t, [None, seq, heads, hd]), [0, 2, 1, 3])

    a = ln(h, "ln1") if pre_norm else h
    if "qkv" in names:  # GPT-2: one projection, sliced into q, k, v
        qkv = lin(a, "qkv", d, 3 * d)
        q, k, v = (b.slice(qkv, 2, i * d, (i + 1) * d) for i in range(3))
    else:
        q, k, v = (lin(a, r, d, d) for r in ("q", "k", "v"))
    q, k, v = split_heads(q), split_heads(k), split_heads(v)
    scores = b.matmul(q, k, tb=True)
    p = b.dropout(b.softmax(scores, 1 / math.sqrt(hd), causal=causal, mask=mask), 0.1, seeds[0])
    ctx = b.reshape(b.transpose(b.matmul(p, v), [0, 2, 1, 3]), [None, seq, d])
    out = b.dropout(lin(ctx, "proj", d, d, proj_std), 0.1, seeds[1])
    h = b.binary("add", h, out)
    if not pre_norm:
        h = ln(h, "ln1")
    m = ln(h, "ln2") if pre_norm else h
    m = lin(m, "fc", d, 4 * d)
    m = b.unary("gelu", m, ' {approximate = "tanh"}' if gelu_tanh else "")
    m = b.dropout(lin(m, "fc_proj", 4 * d, d, proj_std), 0.1, seeds[2])
    h = b.binary("add", h, m)
    if not pre_norm:
        h = ln(h, "ln2")
    return h


def gpt2():
    b = Builder()
    seq, d, layers, vocab = 1024, 768, 12, 50257
    tokens = b.input("input_ids", [None, seq], "i64")
    labels = b.label("labels", [None, seq])
    wte = b.param("transformer.wte.weight", [vocab, d], normal(0.02))
    wpe = b.param("transformer.wpe.weight", [seq, d], normal(0.01))
    h = b.binary("add", b.embedding(wte, tokens), b.embedding(wpe, b.constant_range(seq)))
    h = b.dropout(h, 0.1, 1)
    for i in range(layers):
        p = "transformer.h.%d." % i
        names = {"ln1": p + "ln_1", "ln2": p + "ln_2", "qkv": p + "attn.c_attn",
                 "proj": p + "attn.c_proj", "fc": p + "mlp.c_fc", "fc_proj": p + "mlp.c_proj"}
        # GPT-2 scales the residual projections' init by 1/sqrt(2 n_layer).
        h = transformer_block(b, h, p, 12, seq, True, None, 1e-5, (3 * i + 2, 3 * i + 3, 3 * i + 4),
                              True, True, names, 0.02 / math.sqrt(2 * layers))
    h = b.layer_norm(h, b.param("transformer.ln_f.weight", [d], ONES),
                     b.param("transformer.ln_f.bias", [d], ZEROS), 1e-5)
    logits = b.linear(h, wte)  # tied with the input embedding
    loss = b.cross_entropy(logits, labels, class_axis=2)
    return b.text([
        "GPT-2 small: Radford et al., Language Models are Unsupervised Multitask",
        "Learners (2019), as Hugging Face transformers' GPT2LMHeadModel (names; its",
        "Conv1D weights are stored [in, out], dlc's linear weights [out, in]).",
        "12 layers, hidden 768, 12 heads, context 1024, vocabulary 50257, the",
        "output projection tied to the token embedding; 124,439,808 parameters.",
        "labels are the next tokens (the data pipeline shifts them).",
        "Default benchmark setting: AdamW.",
    ], 'kind = "adamw", lr = %s, beta1 = %s, beta2 = %s, epsilon = %s, weight_decay = %s'
       % (f64(6e-4), f64(0.9), f64(0.95), f64(1e-8), f64(0.1)), loss)


def bert_base():
    b = Builder()
    seq, d, layers, vocab = 128, 768, 12, 30522
    ids = b.input("input_ids", [None, seq], "i64")
    types = b.input("token_type_ids", [None, seq], "i64")
    mask = b.input("attention_mask", [None, 1, 1, seq])
    mlm_labels = b.label("masked_lm_labels", [None, seq])
    nsp_labels = b.label("next_sentence_label", [None])
    e = "bert.embeddings."
    word = b.param(e + "word_embeddings.weight", [vocab, d], normal(0.02))
    pos = b.param(e + "position_embeddings.weight", [512, d], normal(0.02))
    typ = b.param(e + "token_type_embeddings.weight", [2, d], normal(0.02))
    positions = b.slice(b.embedding(pos, b.constant_range(seq)), 0, 0, seq)
    h = b.binary("add", b.binary("add", b.embedding(word, ids), positions), b.embedding(typ, types))
    h = b.layer_norm(h, b.param(e + "LayerNorm.weight", [d], ONES), b.param(e + "LayerNorm.bias", [d], ZEROS), 1e-12)
    h = b.dropout(h, 0.1, 1)
    for i in range(layers):
        p = "bert.encoder.layer.%d." % i
        names = {"q": p + "attention.self.query", "k": p + "attention.self.key", "v": p + "attention.self.value",
                 "proj": p + "attention.output.dense", "ln1": p + "attention.output.LayerNorm",
                 "fc": p + "intermediate.dense", "fc_proj": p + "output.dense", "ln2": p + "output.LayerNorm"}
        h = transformer_block(b, h, p, 12, seq, False, mask, 1e-12, (3 * i + 2, 3 * i + 3, 3 * i + 4),
                              False, False, names, 0.02)
    # Next-sentence head on the [CLS] token through the pooler.
    cls = b.reshape(b.slice(h, 1, 0, 1), [None, d])
    pooled = b.unary("tanh", b.linear(cls, b.param("bert.pooler.dense.weight", [d, d], normal(0.02)),
                                      b.param("bert.pooler.dense.bias", [d], ZEROS)))
    nsp = b.linear(pooled, b.param("cls.seq_relationship.weight", [2, d], normal(0.02)),
                   b.param("cls.seq_relationship.bias", [2], ZEROS))
    # Masked-LM head: transform, then the decoder tied to the word embeddings.
    t = b.linear(h, b.param("cls.predictions.transform.dense.weight", [d, d], normal(0.02)),
                 b.param("cls.predictions.transform.dense.bias", [d], ZEROS))
    t = b.unary("gelu", t)
    t = b.layer_norm(t, b.param("cls.predictions.transform.LayerNorm.weight", [d], ONES),
                     b.param("cls.predictions.transform.LayerNorm.bias", [d], ZEROS), 1e-12)
    logits = b.linear(t, word, b.param("cls.predictions.bias", [vocab], ZEROS))
    mlm = b.cross_entropy(logits, mlm_labels, class_axis=2, ignore=-100)
    loss = b.binary("add", mlm, b.cross_entropy(nsp, nsp_labels))
    return b.text([
        "BERT-base: Devlin et al., BERT: Pre-training of Deep Bidirectional",
        "Transformers for Language Understanding (NAACL 2019), with the masked-LM",
        "and next-sentence heads, as Hugging Face transformers' BertForPreTraining",
        "(names and initializers; the decoder is tied to the word embeddings).",
        "12 layers, hidden 768, 12 heads, vocabulary 30522, sequence 128;",
        "110,106,428 parameters. attention_mask is additive (0 or -10000).",
        "Default benchmark setting: AdamW.",
    ], 'kind = "adamw", lr = %s, beta1 = %s, beta2 = %s, epsilon = %s, weight_decay = %s'
       % (f64(1e-4), f64(0.9), f64(0.999), f64(1e-6), f64(0.01)), loss)


MODELS = {"resnet50": resnet50, "vgg16": vgg16, "gpt2": gpt2, "bert_base": bert_base}


def main():
    check = "--check" in sys.argv[1:]
    stale = []
    for name, build in MODELS.items():
        path = os.path.join(HERE, name + ".mlir")
        text = build()
        if check:
            with open(path) as f:
                if f.read() != text:
                    stale.append(path)
        else:
            with open(path, "w") as f:
                f.write(text)
    for path in stale:
        print("stale: %s (run models/generate.py)" % path)
    sys.exit(1 if stale else 0)


if __name__ == "__main__":
    main()
