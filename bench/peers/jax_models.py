"""dlc's models in JAX (jax.numpy and jax.lax only), op for op as
models/*.mlir states them, with the same initializers; NCHW as the model
files (XLA assigns its own layouts).

A model is a function model(ctx, *inputs) -> loss. The same function is
traced twice: once abstractly under jax.eval_shape with a Ctx in "spec" mode,
which records each parameter's and buffer's name, shape and initializer; and
in the training step with a Ctx in "apply" mode, which reads them from the
dicts and collects the new batch-norm running statistics. ctx.cdt is the
compute dtype: float32, or bfloat16 under AMP, where convolutions, matmuls
and element-wise ops run in bfloat16 while parameters (master weights),
normalizations, softmax and the loss stay float32.
"""

import math

import jax
import jax.numpy as jnp
from jax import lax

F32 = jnp.float32


class Ctx:
    def __init__(self, mode, params=None, buffers=None, rng=None, cdt=F32):
        self.mode, self.params, self.buffers, self.rng, self.cdt = mode, params, buffers, rng, cdt
        self.specs = {}        # name -> (kind, shape, init), spec mode
        self.new_buffers = {}  # name -> value, apply mode

    def _declare(self, kind, name, shape, init):
        if self.mode == "spec":
            if name in self.specs:
                raise ValueError("two parameters named %s" % name)
            self.specs[name] = (kind, tuple(shape), init)
            return jnp.zeros(shape, F32)
        return (self.params if kind == "param" else self.buffers)[name]

    def param(self, name, shape, init):
        return self._declare("param", name, shape, init)

    def buffer(self, name, shape, init):
        return self._declare("buffer", name, shape, init)

    def set_buffer(self, name, value):
        self.new_buffers[name] = value

    def dropout(self, x, rate):
        if self.rng is None:  # spec mode
            return x
        self.rng, key = jax.random.split(self.rng)
        keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
        return jnp.where(keep, x / jnp.asarray(1.0 - rate, x.dtype), jnp.zeros((), x.dtype))


def initial_value(init, shape, key):
    kind = init[0]
    if kind == "zeros":
        return jnp.zeros(shape, F32)
    if kind == "ones":
        return jnp.ones(shape, F32)
    if kind == "normal":
        return init[1] * jax.random.normal(key, shape, F32)
    if kind == "kaiming_fan_out":  # kaiming_normal, fan_out, relu: std sqrt(2 / fan_out)
        fan_out = shape[0] * math.prod(shape[2:])
        return math.sqrt(2.0 / fan_out) * jax.random.normal(key, shape, F32)
    if kind == "uniform":  # U(-bound, bound); nn.Linear's default weight and bias
        return jax.random.uniform(key, shape, F32, -init[1], init[1])
    raise ValueError("unknown initializer %r" % (init,))


def linear_default(fan_in):
    """nn.Linear's default: kaiming_uniform(a = sqrt 5) is U(+-1/sqrt(fan_in)),
    and so is its bias."""
    return ("uniform", 1 / math.sqrt(fan_in)), ("uniform", 1 / math.sqrt(fan_in))


# --- layers ------------------------------------------------------------------

def conv(ctx, x, name, cout, k, stride=1, pad=0, bias=False):
    w = ctx.param(name + ".weight", (cout, x.shape[1], k, k), ("kaiming_fan_out",))
    y = lax.conv_general_dilated(x.astype(ctx.cdt), w.astype(ctx.cdt), (stride, stride),
                                 [(pad, pad), (pad, pad)],
                                 dimension_numbers=("NCHW", "OIHW", "NCHW"))
    if bias:
        y = y + ctx.param(name + ".bias", (cout,), ("zeros",)).astype(ctx.cdt)[None, :, None, None]
    return y


def batch_norm(ctx, x, name, eps=1e-5, momentum=0.1):
    """Training mode: batch statistics; running statistics updated with the
    unbiased variance, as PyTorch and dlc."""
    c = x.shape[1]
    g = ctx.param(name + ".weight", (c,), ("ones",))
    b = ctx.param(name + ".bias", (c,), ("zeros",))
    rm = ctx.buffer(name + ".running_mean", (c,), ("zeros",))
    rv = ctx.buffer(name + ".running_var", (c,), ("ones",))
    xf = x.astype(F32)
    mean = xf.mean(axis=(0, 2, 3))
    var = jnp.square(xf - mean[None, :, None, None]).mean(axis=(0, 2, 3))
    n = x.size // c
    ctx.set_buffer(name + ".running_mean", (1 - momentum) * rm + momentum * lax.stop_gradient(mean))
    ctx.set_buffer(name + ".running_var",
                   (1 - momentum) * rv + momentum * lax.stop_gradient(var) * n / max(n - 1, 1))
    scale = (g * lax.rsqrt(var + eps))[None, :, None, None]
    y = (xf - mean[None, :, None, None]) * scale + b[None, :, None, None]
    return y.astype(x.dtype)


def conv_bn(ctx, x, name, cout, k, stride=1, pad=0, relu=True):
    y = batch_norm(ctx, conv(ctx, x, name + ".conv", cout, k, stride, pad), name + ".bn")
    return jax.nn.relu(y) if relu else y


def max_pool(x, k, s, pad=0):
    # A Python scalar init lets JAX see the max monoid, whose window reducer
    # it can differentiate (an array init is opaque to it under jit in JAX
    # 0.10).
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, k, k), (1, 1, s, s),
                             [(0, 0), (0, 0), (pad, pad), (pad, pad)])


def avg_pool(x, k, s):
    total = lax.reduce_window(x, 0.0, lax.add, (1, 1, k, k), (1, 1, s, s),
                              [(0, 0)] * 4)
    return total / jnp.asarray(k * k, x.dtype)


def linear(ctx, x, name, fin, fout, winit, binit=("zeros",), bias=True):
    w = ctx.param(name + ".weight", (fout, fin), winit)
    y = jnp.matmul(x.astype(ctx.cdt), w.astype(ctx.cdt).T)
    if bias:
        y = y + ctx.param(name + ".bias", (fout,), binit).astype(ctx.cdt)
    return y


def layer_norm(ctx, x, name, eps):
    d = x.shape[-1]
    g = ctx.param(name + ".weight", (d,), ("ones",))
    b = ctx.param(name + ".bias", (d,), ("zeros",))
    xf = x.astype(F32)
    mean = xf.mean(axis=-1, keepdims=True)
    var = jnp.square(xf - mean).mean(axis=-1, keepdims=True)
    return (xf - mean) * lax.rsqrt(var + eps) * g + b


def cross_entropy(logits, labels, ignore=None):
    """Mean over the labels (class axis last), skipping `ignore`."""
    logp = jax.nn.log_softmax(logits.astype(F32), axis=-1)
    labels = labels.astype(jnp.int32)
    if ignore is None:
        return -jnp.take_along_axis(logp, labels[..., None], axis=-1).mean()
    valid = labels != ignore
    picked = jnp.take_along_axis(logp, jnp.where(valid, labels, 0)[..., None], axis=-1)[..., 0]
    return -(picked * valid).sum() / jnp.maximum(valid.sum(), 1)


def attention(ctx, q, k, v, scale, causal=False, mask=None):
    s = jnp.einsum("bhqd,bhkd->bhqk", q, k).astype(F32) * scale
    if mask is not None:
        s = s + mask.astype(F32)
    if causal:
        n = s.shape[-1]
        s = jnp.where(jnp.tril(jnp.ones((n, n), bool)), s, -jnp.inf)
    p = ctx.dropout(jax.nn.softmax(s, axis=-1), 0.1).astype(v.dtype)
    return jnp.einsum("bhqk,bhkd->bhqd", p, v)


def block(ctx, h, p, heads, eps, pre_norm, fused_qkv, gelu_tanh, proj_std, causal, mask=None):
    """transformer_block of models/generate.py: BERT's (post-norm, separate
    q, k, v, exact GELU) or GPT's (pre-norm, one qkv projection, tanh GELU)."""
    n, s, d = h.shape
    hd = d // heads

    def split(t):
        return t.reshape(n, s, heads, hd).transpose(0, 2, 1, 3)

    a = layer_norm(ctx, h, p + "ln1", eps) if pre_norm else h
    if fused_qkv:
        q, k, v = jnp.split(linear(ctx, a, p + "qkv", d, 3 * d, ("normal", 0.02)), 3, axis=-1)
    else:
        q, k, v = (linear(ctx, a, p + r, d, d, ("normal", 0.02)) for r in ("q", "k", "v"))
    c = attention(ctx, split(q), split(k), split(v), 1 / math.sqrt(hd), causal, mask)
    c = c.transpose(0, 2, 1, 3).reshape(n, s, d)
    h = h + ctx.dropout(linear(ctx, c, p + "proj", d, d, ("normal", proj_std)), 0.1)
    if not pre_norm:
        h = layer_norm(ctx, h, p + "ln1", eps)
    m = layer_norm(ctx, h, p + "ln2", eps) if pre_norm else h
    m = jax.nn.gelu(linear(ctx, m, p + "fc", d, 4 * d, ("normal", 0.02)), approximate=gelu_tanh)
    h = h + ctx.dropout(linear(ctx, m, p + "fc_proj", 4 * d, d, ("normal", proj_std)), 0.1)
    if not pre_norm:
        h = layer_norm(ctx, h, p + "ln2", eps)
    return h


# --- models ------------------------------------------------------------------

def mlp(ctx, x, labels):
    w1, b1 = linear_default(784)
    w2, b2 = linear_default(256)
    h = jax.nn.relu(linear(ctx, x, "fc1", 784, 256, w1, b1))
    return cross_entropy(linear(ctx, h, "fc2", 256, 10, w2, b2), labels)


def small_convnet(ctx, x, labels):
    s = conv_bn(ctx, x, "stem", 16, 3, pad=1)
    r = conv_bn(ctx, s, "c1", 16, 3, pad=1)
    r = jax.nn.relu(conv_bn(ctx, r, "c2", 16, 3, pad=1, relu=False) + s)
    d = conv_bn(ctx, max_pool(r, 2, 2), "c3", 32, 3, stride=2, pad=1)
    f = avg_pool(d, 2, 2).mean(axis=(2, 3))
    w, b = linear_default(32)
    return cross_entropy(linear(ctx, f, "fc", 32, 10, w, b), labels)


def tiny_transformer(ctx, tokens, labels):
    wte = ctx.param("wte", (64, 32), ("normal", 0.02))
    wpe = ctx.param("wpe", (16, 32), ("normal", 0.01))
    h = jnp.take(wte, tokens, axis=0) + wpe[None]
    h = block(ctx, ctx.dropout(h, 0.1), "block.", 2, 1e-5, True, False, True, 0.02, True)
    logits = linear(ctx, layer_norm(ctx, h, "ln_f", 1e-5), "lm_head", 32, 64, ("normal", 0.02),
                    bias=False)
    return cross_entropy(logits, labels)


def resnet50(ctx, x, labels):
    h = max_pool(conv_bn(ctx, x, "stem", 64, 7, stride=2, pad=3), 3, 2, pad=1)
    cin = 64
    for layer, (width, blocks, stride) in enumerate([(64, 3, 1), (128, 4, 2), (256, 6, 2),
                                                     (512, 3, 2)], 1):
        for i in range(blocks):
            p = "layer%d.%d." % (layer, i)
            s = stride if i == 0 else 1
            y = conv_bn(ctx, h, p + "1", width, 1)
            y = conv_bn(ctx, y, p + "2", width, 3, stride=s, pad=1)  # v1.5
            y = conv_bn(ctx, y, p + "3", width * 4, 1, relu=False)
            if i == 0:
                h = conv_bn(ctx, h, p + "downsample", width * 4, 1, stride=s, relu=False)
            h = jax.nn.relu(y + h)
            cin = width * 4
    assert cin == 2048
    w, b = linear_default(2048)
    return cross_entropy(linear(ctx, h.mean(axis=(2, 3)), "fc", 2048, 1000, w, b), labels)


def vgg16(ctx, x, labels):
    h = x
    for i, v in enumerate([64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M",
                           512, 512, 512, "M"]):
        h = max_pool(h, 2, 2) if v == "M" else jax.nn.relu(
            conv(ctx, h, "features.%d" % i, v, 3, pad=1, bias=True))
    h = h.reshape(h.shape[0], -1)  # the adaptive 7x7 pool is the identity at 224
    for i, (fin, fout) in enumerate([(25088, 4096), (4096, 4096), (4096, 1000)]):
        h = linear(ctx, h, "classifier.%d" % i, fin, fout, ("normal", 0.01))
        if i < 2:
            h = ctx.dropout(jax.nn.relu(h), 0.5)
    return cross_entropy(h, labels)


def bert_base(ctx, input_ids, token_type_ids, attention_mask, mlm_labels, nsp_labels):
    d, vocab, seq = 768, 30522, 128
    word = ctx.param("word", (vocab, d), ("normal", 0.02))
    pos = ctx.param("position", (512, d), ("normal", 0.02))
    typ = ctx.param("token_type", (2, d), ("normal", 0.02))
    h = jnp.take(word, input_ids, axis=0) + pos[None, :seq] + jnp.take(typ, token_type_ids, axis=0)
    h = ctx.dropout(layer_norm(ctx, h, "ln", 1e-12), 0.1)
    for i in range(12):
        h = block(ctx, h, "layer%d." % i, 12, 1e-12, False, False, False, 0.02, False,
                  attention_mask)
    pooled = jnp.tanh(linear(ctx, h[:, 0], "pooler", d, d, ("normal", 0.02)))
    nsp = linear(ctx, pooled, "nsp", d, 2, ("normal", 0.02))
    t = jax.nn.gelu(linear(ctx, h, "transform", d, d, ("normal", 0.02)), approximate=False)
    t = layer_norm(ctx, t, "transform_ln", 1e-12)
    bias = ctx.param("decoder_bias", (vocab,), ("zeros",))
    logits = jnp.matmul(t.astype(ctx.cdt), word.astype(ctx.cdt).T) + bias.astype(ctx.cdt)
    return cross_entropy(logits, mlm_labels, ignore=-100) + cross_entropy(nsp, nsp_labels)


def gpt2(ctx, input_ids, labels):
    d, vocab, seq, layers = 768, 50257, 1024, 12
    wte = ctx.param("wte", (vocab, d), ("normal", 0.02))
    wpe = ctx.param("wpe", (seq, d), ("normal", 0.01))
    h = ctx.dropout(jnp.take(wte, input_ids, axis=0) + wpe[None], 0.1)
    for i in range(layers):
        h = block(ctx, h, "h%d." % i, 12, 1e-5, True, True, True, 0.02 / math.sqrt(2 * layers),
                  True)
    h = layer_norm(ctx, h, "ln_f", 1e-5)
    logits = jnp.matmul(h.astype(ctx.cdt), wte.astype(ctx.cdt).T)  # tied
    return cross_entropy(logits, labels)


MODELS = {"mlp": mlp, "small_convnet": small_convnet, "tiny_transformer": tiny_transformer,
          "resnet50": resnet50, "vgg16": vgg16, "bert_base": bert_base, "gpt2": gpt2}


def specs_of(name, abstract_inputs):
    """name -> (kind, shape, init) of every parameter and buffer."""
    ctx = Ctx("spec")
    jax.eval_shape(lambda *xs: MODELS[name](ctx, *xs), *abstract_inputs)
    return ctx.specs


def init(specs, key):
    params, buffers = {}, {}
    for i, (name, (kind, shape, how)) in enumerate(specs.items()):
        value = initial_value(how, shape, jax.random.fold_in(key, i))
        (params if kind == "param" else buffers)[name] = value
    return params, buffers


def loss_fn(name, cdt, params, buffers, inputs, rng):
    ctx = Ctx("apply", params, buffers, rng, cdt)
    loss = MODELS[name](ctx, *inputs)
    new = dict(buffers)
    new.update(ctx.new_buffers)
    return loss, new
