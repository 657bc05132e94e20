#!/usr/bin/env python3
"""Writes the seed models of the reports dlc grew from as train-dialect files.

  models/generate.py            regenerate every model next to this script
  models/generate.py --check    exit 1 if a checked-in file differs
  models/generate.py --out DIR  write them to DIR instead

Models this long are generated, not written by hand: models/dlc_builder.py
(docs/Builder.md) tracks shapes so that every op line carries its operand
types, and this file names every parameter as the reference implementation
does (torchvision, Hugging Face transformers), so that --params-in can load
their weights by name.
Batch dimensions stay dynamic (`?`); dlc-bench --batch sets them.
"""

import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dlc_builder import (KAIMING_FAN_IN, KAIMING_FAN_OUT, ONES, ZEROS, Builder, f64, normal,  # noqa: E402
                         torch_bias_init, torch_linear_init)


def conv_bn(b, x, name, bn_name, cout, k, stride=1, pad=0, dil=1, relu=True, init=KAIMING_FAN_OUT,
            momentum=0.1):
    """conv (no bias) -> batch norm -> optional relu, torchvision's names."""
    w = b.param(name + ".weight", [cout, x.shape[1], k, k], init)
    y = b.conv(x, w, stride=stride, pad=pad, dil=dil)
    g = b.param(bn_name + ".weight", [cout], ONES)
    be = b.param(bn_name + ".bias", [cout], ZEROS)
    rm = b.buffer(bn_name + ".running_mean", [cout], ZEROS)
    rv = b.buffer(bn_name + ".running_var", [cout], ONES)
    y = b.bn(y, g, be, rm, rv, momentum=momentum)
    return b.unary("relu", y) if relu else y


def resnet50_body(b, x, prefix="", dilate_layer4=False, momentum=0.1):
    """torchvision's ResNet-50 v1.5 up to layer4; returns (layer1, layer4).

    dilate_layer4 is replace_stride_with_dilation=[False, False, True]: layer4
    keeps stride 1, its first block at dilation 1 and the others at 2, as
    torchvision's _make_layer does (output stride 16).
    """
    def conv_bn_(*args, **kwargs):
        return conv_bn(b, *args, momentum=momentum, **kwargs)

    h = conv_bn_(x, prefix + "conv1", prefix + "bn1", 64, 7, stride=2, pad=3)
    h = b.pool("max_pool2d", h, 3, 2, pad=1)
    low = None
    for layer, (width, blocks, stride) in enumerate([(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)], 1):
        dilated = dilate_layer4 and layer == 4
        for i in range(blocks):
            p = "%slayer%d.%d." % (prefix, layer, i)
            s = 1 if dilated else (stride if i == 0 else 1)
            d = 2 if dilated and i > 0 else 1
            y = conv_bn_(h, p + "conv1", p + "bn1", width, 1)
            # ResNet v1.5: the stride is on the 3x3 convolution.
            y = conv_bn_(y, p + "conv2", p + "bn2", width, 3, stride=s, pad=d, dil=d)
            y = conv_bn_(y, p + "conv3", p + "bn3", width * 4, 1, relu=False)
            if i == 0:
                h = conv_bn_(h, p + "downsample.0", p + "downsample.1", width * 4, 1, stride=s, relu=False)
            h = b.unary("relu", b.binary("add", y, h))
        if layer == 1:
            low = h
    return low, h


def resnet50():
    b = Builder()
    x = b.input("x", [None, 3, 224, 224])
    labels = b.label("labels", [None])
    _, h = resnet50_body(b, x)
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


def deeplabv3p():
    b = Builder()
    size, classes = [512, 1024], 19
    x = b.input("x", [None, 3] + size)
    labels = b.label("labels", [None] + size)
    # main.py sets the backbone's batch-norm momentum to 0.01 (utils.set_bn_momentum).
    low, h = resnet50_body(b, x, "backbone.", dilate_layer4=True, momentum=0.01)
    c = "classifier."

    def head_conv_bn(x, name, cout, k, pad=0, dil=1):
        return conv_bn(b, x, name + ".0", name + ".1", cout, k, pad=pad, dil=dil, init=KAIMING_FAN_IN)

    low = head_conv_bn(low, c + "project", 48, 1)
    # ASPP: 1x1, three dilated 3x3 (rates 6, 12, 18 at output stride 16) and image pooling.
    branches = [head_conv_bn(h, c + "aspp.convs.0", 256, 1)]
    for i, rate in enumerate([6, 12, 18], 1):
        branches.append(head_conv_bn(h, c + "aspp.convs.%d" % i, 256, 3, pad=rate, dil=rate))
    pooled = conv_bn(b, b.gap(h), c + "aspp.convs.4.1", c + "aspp.convs.4.2", 256, 1, init=KAIMING_FAN_IN)
    branches.append(b.resize(pooled, h.shape[2:]))
    a = head_conv_bn(b.concat(branches), c + "aspp.project", 256, 1)
    a = b.dropout(a, 0.1, 1)
    # Decoder: the ASPP output upsampled to layer1's resolution, after the low-level features.
    d = b.concat([low, b.resize(a, low.shape[2:])])
    d = conv_bn(b, d, c + "classifier.0", c + "classifier.1", 256, 3, pad=1, init=KAIMING_FAN_IN)
    w = b.param(c + "classifier.3.weight", [classes, 256, 1, 1], KAIMING_FAN_IN)
    logits = b.conv(d, w, bias=b.param(c + "classifier.3.bias", [classes], torch_bias_init(256)))
    loss = b.cross_entropy(b.resize(logits, size), labels, ignore=255)
    return b.text([
        "DeepLabV3+: Chen et al., Encoder-Decoder with Atrous Separable Convolution",
        "for Semantic Image Segmentation (ECCV 2018), with a ResNet-50 backbone, as",
        "VainF/DeepLabV3Plus-Pytorch's deeplabv3plus_resnet50 (network/modeling.py,",
        "network/_deeplab.py, network/backbone/resnet.py: the reference implementation",
        "whose parameter names and initializers this file uses) at its main.py default",
        "output stride 16: layer4 dilated instead of strided (replace_stride_with_dilation",
        "= [False, False, True]) and ASPP rates 6, 12, 18 (12, 24, 36 at output stride 8).",
        "ASPP: a 1x1, three dilated 3x3 and an image-pooling branch of 256 channels each,",
        "projected to 256 with dropout 0.1; decoder: layer1's features reduced to 48",
        "channels, joined with the ASPP output upsampled 4x, a 3x3 and a 1x1 convolution,",
        "then bilinear upsampling (align_corners false, as the reference) to the input.",
        "ASPP and decoder use plain 3x3 convolutions, the reference's default (the",
        "paper's depthwise-separable ones are its --separable_conv option). Backbone",
        "batch-norm momentum 0.01 as main.py sets it. Cityscapes, 512x1024, 19 classes,",
        "ignore index 255; 39,761,331 parameters.",
        "Default benchmark setting of the seed reports: batch 2-4, SGD with momentum",
        "(main.py: lr 0.01, momentum 0.9, weight decay 1e-4; it gives the backbone 0.1x",
        "the learning rate, which one optimizer attribute cannot express).",
    ], 'kind = "sgd", lr = %s, momentum = %s, weight_decay = %s' % (f64(0.01), f64(0.9), f64(1e-4)), loss)


def hrnet_w18():
    b = Builder()
    size, classes = [512, 1024], 19
    x = b.input("x", [None, 3] + size)
    labels = b.label("labels", [None] + size)
    conv_init = normal(0.001)  # init_weights: every conv weight N(0, 0.001^2)

    def cbr(x, name, bn_name, cout, k, stride=1, relu=True):
        return conv_bn(b, x, name, bn_name, cout, k, stride=stride, pad=k // 2, relu=relu, init=conv_init)

    def basic(x, p, planes):
        y = cbr(x, p + "conv1", p + "bn1", planes, 3)
        y = cbr(y, p + "conv2", p + "bn2", planes, 3, relu=False)
        return b.unary("relu", b.binary("add", y, x))

    def bottleneck(x, p, planes):
        y = cbr(x, p + "conv1", p + "bn1", planes, 1)
        y = cbr(y, p + "conv2", p + "bn2", planes, 3)
        y = cbr(y, p + "conv3", p + "bn3", planes * 4, 1, relu=False)
        if x.shape[1] != planes * 4:
            x = cbr(x, p + "downsample.0", p + "downsample.1", planes * 4, 1, relu=False)
        return b.unary("relu", b.binary("add", y, x))

    h = cbr(x, "conv1", "bn1", 64, 3, stride=2)
    h = cbr(h, "conv2", "bn2", 64, 3, stride=2)
    for i in range(4):
        h = bottleneck(h, "layer1.%d." % i, 64)

    def transition(ys, t, widths):
        out = []
        for i, w in enumerate(widths):
            p = "transition%d.%d." % (t, i)
            if i < len(ys):
                out.append(ys[i] if ys[i].shape[1] == w else cbr(ys[i], p + "0", p + "1", w, 3))
            else:  # a new, lower-resolution branch from the last one
                out.append(cbr(ys[-1], p + "0.0", p + "0.1", w, 3, stride=2))
        return out

    def module(xs, p, blocks):
        xs = list(xs)
        for i, v in enumerate(xs):
            for k in range(blocks):
                v = basic(v, "%sbranches.%d.%d." % (p, i, k), v.shape[1])
            xs[i] = v
        if len(xs) == 1:
            return xs
        out = []
        for i, xi in enumerate(xs):
            y = None
            for j, xj in enumerate(xs):
                f = "%sfuse_layers.%d.%d." % (p, i, j)
                if j == i:
                    z = xj
                elif j > i:  # 1x1 conv + BN, then bilinear upsampling to branch i
                    z = cbr(xj, f + "0", f + "1", xi.shape[1], 1, relu=False)
                    z = b.resize(z, xi.shape[2:], align_corners=True)
                else:  # i - j stride-2 3x3 convs, ReLU between them
                    z = xj
                    for k in range(i - j):
                        last = k == i - j - 1
                        z = cbr(z, "%s%d.0" % (f, k), "%s%d.1" % (f, k), xi.shape[1] if last else xj.shape[1], 3,
                                stride=2, relu=not last)
                y = z if y is None else b.binary("add", y, z)
            out.append(b.unary("relu", y))
        return out

    ys = [h]
    for stage, (modules, widths) in enumerate([(1, [18, 36]), (4, [18, 36, 72]), (3, [18, 36, 72, 144])], 2):
        ys = transition(ys, stage - 1, widths)
        for m in range(modules):
            ys = module(ys, "stage%d.%d." % (stage, m), 4)
    # FCN head: every branch upsampled to the highest resolution and concatenated.
    top = ys[0].shape[2:]
    h = b.concat([ys[0]] + [b.resize(y, top, align_corners=True) for y in ys[1:]])
    c = h.shape[1]
    w = b.param("last_layer.0.weight", [c, c, 1, 1], conv_init)
    h = b.conv(h, w, bias=b.param("last_layer.0.bias", [c], torch_bias_init(c)))
    g = b.param("last_layer.1.weight", [c], ONES)
    be = b.param("last_layer.1.bias", [c], ZEROS)
    rm = b.buffer("last_layer.1.running_mean", [c], ZEROS)
    rv = b.buffer("last_layer.1.running_var", [c], ONES)
    h = b.unary("relu", b.bn(h, g, be, rm, rv))
    w = b.param("last_layer.3.weight", [classes, c, 1, 1], conv_init)
    logits = b.conv(h, w, bias=b.param("last_layer.3.bias", [classes], torch_bias_init(c)))
    # The criterion upsamples the 1/4-resolution scores to the labels.
    loss = b.cross_entropy(b.resize(logits, size, align_corners=True), labels, ignore=255)
    return b.text([
        "HRNetV2-W18 for segmentation: Wang et al., Deep High-Resolution",
        "Representation Learning for Visual Recognition (TPAMI 2020), as",
        "HRNet/HRNet-Semantic-Segmentation's lib/models/seg_hrnet.py with the W18",
        "configuration (lib/config/hrnet_config.py HRNET_18: stages of 1, 1, 4 and 3",
        "modules, 4 blocks per branch, widths 18, 36, 72, 144), the reference",
        "implementation whose parameter names and initializers this file uses.",
        "Stem of two stride-2 3x3 convs, a bottleneck stage, then parallel branches",
        "exchanging information at the end of every module. FCN head: the four",
        "branches upsampled to 1/4 resolution and concatenated (270 channels), 1x1",
        "conv + BN + ReLU, 1x1 conv to the classes; the criterion upsamples the scores",
        "to the labels. Every upsampling is bilinear with align_corners true, the",
        "repository's MODEL.ALIGN_CORNERS default; seg_hrnet's fuse layers are bilinear",
        "too (HRNet's pose and classification code upsamples them nearest), so no op",
        "deviates from the reference. Cityscapes, 512x1024, 19 classes, ignore index",
        "255; 9,641,119 parameters.",
        "Default benchmark setting of the seed reports: batch 8, SGD with momentum",
        "(the Cityscapes recipes: lr 0.01, momentum 0.9, weight decay 5e-4).",
    ], 'kind = "sgd", lr = %s, momentum = %s, weight_decay = %s' % (f64(0.01), f64(0.9), f64(5e-4)), loss)


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


MODELS = {"resnet50": resnet50, "vgg16": vgg16, "gpt2": gpt2, "bert_base": bert_base,
          "deeplabv3p": deeplabv3p, "hrnet_w18": hrnet_w18}


def main():
    check = "--check" in sys.argv[1:]
    out = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv[:-1] else HERE
    stale = []
    for name, build in MODELS.items():
        path = os.path.join(out, name + ".mlir")
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
