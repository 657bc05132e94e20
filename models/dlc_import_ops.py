"""dlc-import's converters: one per torch.nn module, function and Tensor
method it knows, each writing the train-dialect ops of models/dlc_builder.py
that compute exactly what PyTorch computes, attributes carried over.

A converter takes the Importer, the fx node and its arguments (train values
`V` where PyTorch had tensors, the traced Python values elsewhere) and
returns a `V` (or a tuple of them). Anything it cannot express exactly it
refuses through `imp.refuse`, naming what is missing.
"""

import math
import operator

import torch
import torch.nn.functional as F

import dlc_builder as db
from dlc_import_einsum import fn_einsum


class Constant:
    """A tensor the module reads that is neither a parameter nor a buffer (a
    mask torch.fx computed while tracing): only masked_fill takes one."""

    def __init__(self, t):
        self.t = t


def _is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _tensor(imp, node, v, what="operand"):
    if not isinstance(v, db.V):
        imp.refuse(node, "%s (%r)" % (what, type(v).__name__), "expects a tensor here")
    return v


# ---------------------------------------------------------------------------
# torch.nn modules
# ---------------------------------------------------------------------------


def conv2d(imp, node, m, args, kwargs):
    x = _tensor(imp, node, args[0])
    if m.padding_mode != "zeros":
        imp.refuse(node, "conv2d padding_mode=%s" % m.padding_mode)
    pad = m.padding
    if isinstance(pad, str):
        if pad != "valid":
            imp.refuse(node, "conv2d padding=%r" % pad, "the dialect pads both sides alike")
        pad = (0, 0)
    kh, kw = m.kernel_size
    w_init, b_init = db.torch_linear_init(m.in_channels // m.groups * kh * kw)
    w = imp.tensor_arg(node, m.weight, w_init)
    b = imp.tensor_arg(node, m.bias, b_init) if m.bias is not None else None
    return imp.b.conv(x, w, stride=m.stride, pad=pad, dil=m.dilation, groups=m.groups, bias=b)


def batch_norm(imp, node, m, args, kwargs):
    x = _tensor(imp, node, args[0])
    if not m.affine or not m.track_running_stats:
        imp.refuse(node, "batch_norm(affine=%s, track_running_stats=%s)" % (m.affine, m.track_running_stats),
                   "the dialect's batch_norm has a scale, a bias and running statistics")
    if m.momentum is None:
        imp.refuse(node, "batch_norm(momentum=None)", "the cumulative running average has no dialect form")
    if len(x.shape) not in (2, 4):
        imp.refuse(node, "batch_norm of a rank-%d input" % len(x.shape), "the dialect normalizes NC or NCHW")
    g = imp.tensor_arg(node, m.weight, db.ONES)
    be = imp.tensor_arg(node, m.bias, db.ZEROS)
    rm = imp.tensor_arg(node, m.running_mean, db.ZEROS)
    rv = imp.tensor_arg(node, m.running_var, db.ONES)
    return imp.b.bn(x, g, be, rm, rv, eps=m.eps, momentum=m.momentum)


def _linear(imp, node, m, x):
    w_init, b_init = db.torch_linear_init(m.in_features)
    w = imp.tensor_arg(node, m.weight, w_init)
    b = imp.tensor_arg(node, m.bias, b_init) if m.bias is not None else None
    return imp.b.linear(x, w, b)


def linear(imp, node, m, args, kwargs):
    return _linear(imp, node, m, _tensor(imp, node, args[0]))


def _layer_norm(imp, node, m, x):
    if tuple(m.normalized_shape) != (x.shape[-1],) or not m.elementwise_affine:
        imp.refuse(node, "layer_norm(normalized_shape=%s, elementwise_affine=%s)"
                   % (tuple(m.normalized_shape), m.elementwise_affine),
                   "the dialect normalizes the last dimension with a scale and a bias")
    return imp.b.layer_norm(x, imp.tensor_arg(node, m.weight, db.ONES),
                            imp.tensor_arg(node, m.bias, db.ZEROS), m.eps)


def layer_norm(imp, node, m, args, kwargs):
    return _layer_norm(imp, node, m, _tensor(imp, node, args[0]))


def _unary(op):
    def convert(imp, node, m, args, kwargs):
        return imp.b.unary(op, _tensor(imp, node, args[0]))
    return convert


def _hardtanh(imp, node, x, lo, hi):
    """hardtanh(0, 6) is relu6, gradient included (both are PyTorch's
    hardtanh); other bounds have no dialect op."""
    if (lo, hi) != (0.0, 6.0):
        imp.refuse(node, "hardtanh(min_val=%s, max_val=%s)" % (lo, hi), "the dialect has relu6 = hardtanh(0, 6) only")
    return imp.b.unary("relu6", _tensor(imp, node, x))


def hardtanh(imp, node, m, args, kwargs):
    return _hardtanh(imp, node, args[0], m.min_val, m.max_val)


def gelu(imp, node, m, args, kwargs):
    return imp.b.gelu(_tensor(imp, node, args[0]), m.approximate)


def dropout(imp, node, m, args, kwargs):
    return imp.b.dropout(_tensor(imp, node, args[0]), m.p, imp.next_seed())


def identity(imp, node, m, args, kwargs):
    return _tensor(imp, node, args[0])


def reshape_to_trace(imp, node, x):
    """Any view: the shape the trace produced, the batch's dimension as -1."""
    x = _tensor(imp, node, x)
    shape = imp.shape(node)
    if shape.count(None) > 1:
        imp.refuse(node, "reshape to %s" % shape, "the batch would spread over two dimensions")
    if shape.count(None) == 0 and None in x.shape:
        imp.refuse(node, "reshape to %s" % shape, "the batch would become a static dimension")
    return imp.b.reshape(x, shape)


def flatten_module(imp, node, m, args, kwargs):
    return reshape_to_trace(imp, node, args[0])


def _pool_args(k, s, p):
    return k, (k if s is None or s == [] or s == () else s), p


def max_pool(imp, node, m, args, kwargs):
    if m.dilation not in (1, (1, 1)) or m.return_indices:
        imp.refuse(node, "max_pool2d(dilation=%s, return_indices=%s)" % (m.dilation, m.return_indices))
    k, s, p = _pool_args(m.kernel_size, m.stride, m.padding)
    return imp.b.pool("max_pool2d", _tensor(imp, node, args[0]), k, s, p, ceil_mode=m.ceil_mode)


def avg_pool(imp, node, m, args, kwargs):
    if m.divisor_override is not None:
        imp.refuse(node, "avg_pool2d(divisor_override=%s)" % m.divisor_override)
    k, s, p = _pool_args(m.kernel_size, m.stride, m.padding)
    return imp.b.pool("avg_pool2d", _tensor(imp, node, args[0]), k, s, p, ceil_mode=m.ceil_mode,
                      count_include_pad=m.count_include_pad)


def _adaptive_avg(imp, node, x):
    """Global pooling, or an average pool where the windows tile the input
    exactly (then adaptive pooling is that pool); nothing else."""
    x = _tensor(imp, node, x)
    (h, w), (oh, ow) = x.shape[2:], imp.shape(node)[2:]
    if (oh, ow) == (1, 1):
        return imp.b.gap(x)
    if (h, w) == (oh, ow):
        return x
    if h % oh == 0 and w % ow == 0:
        k = (h // oh, w // ow)
        return imp.b.pool("avg_pool2d", x, k, k)
    imp.refuse(node, "adaptive_avg_pool2d from %dx%d to %dx%d" % (h, w, oh, ow),
               "the dialect has global and tiled average pooling only")


def adaptive_avg_pool(imp, node, m, args, kwargs):
    return _adaptive_avg(imp, node, args[0])


def softmax_module(imp, node, m, args, kwargs):
    return fn_softmax(imp, node, [args[0], m.dim], {})


def _attention(imp, node, m, x):
    """nn.MultiheadAttention's self-attention, as F.multi_head_attention_forward."""
    if not m.batch_first or len(x.shape) != 3 or x.shape[0] is not None:
        imp.refuse(node, "multi_head_attention(batch_first=False)", "the batch must be dimension 0")
    if not m._qkv_same_embed_dim or m.bias_k is not None or m.add_zero_attn or m.in_proj_bias is None:
        imp.refuse(node, "multi_head_attention with separate q/k/v weights, bias_k or add_zero_attn")
    b, e, heads = imp.b, m.embed_dim, m.num_heads
    seq, hd = x.shape[1], e // heads
    qkv = b.linear(x, imp.tensor_arg(node, m.in_proj_weight, db.xavier_uniform()),
                   imp.tensor_arg(node, m.in_proj_bias, db.ZEROS))

    def heads_of(t):
        return b.transpose(b.reshape(t, [None, seq, heads, hd]), [0, 2, 1, 3])
    q, k, v = (heads_of(b.slice(qkv, 2, i * e, (i + 1) * e)) for i in range(3))
    p = b.softmax(b.matmul(q, k, tb=True), 1 / math.sqrt(hd))
    if m.dropout > 0.0:  # F.multi_head_attention_forward drops only then
        p = b.dropout(p, m.dropout, imp.next_seed())
    ctx = b.reshape(b.transpose(b.matmul(p, v), [0, 2, 1, 3]), [None, seq, e])
    w_init, _ = db.torch_linear_init(e)
    # MultiheadAttention._reset_parameters zeroes out_proj.bias.
    return b.linear(ctx, imp.tensor_arg(node, m.out_proj.weight, w_init),
                    imp.tensor_arg(node, m.out_proj.bias, db.ZEROS))


def _no_masks(imp, node, values, what):
    for name, v in values:
        if v is not None and v is not False:
            imp.refuse(node, "%s with %s" % (what, name), "attention masks are not imported")


def multi_head_attention(imp, node, m, args, kwargs):
    q, k, v = (list(args) + [kwargs.get(n) for n in ("query", "key", "value")])[:3]
    if not (q is k is v):
        imp.refuse(node, "multi_head_attention(query, key, value distinct)", "only self-attention is imported")
    _no_masks(imp, node, [(n, kwargs.get(n)) for n in ("key_padding_mask", "attn_mask")] +
              [("mask", a) for a in args[3:]], "multi_head_attention")
    return _attention(imp, node, m, _tensor(imp, node, q)), None


def _activation(imp, node, act):
    if act is F.relu or isinstance(act, torch.nn.ReLU):
        return lambda x: imp.b.relu(x)
    if act is F.gelu:
        return lambda x: imp.b.gelu(x)
    if isinstance(act, torch.nn.GELU):
        return lambda x: imp.b.gelu(x, act.approximate)
    imp.refuse(node, "transformer activation %r" % getattr(act, "__name__", act))


def transformer_encoder_layer(imp, node, m, args, kwargs):
    """nn.TransformerEncoderLayer.forward's slow path (training mode)."""
    _no_masks(imp, node, [(n, kwargs.get(n)) for n in ("src_mask", "src_key_padding_mask", "is_causal")] +
              [("mask", a) for a in args[1:]], "transformer_encoder_layer")
    b, x = imp.b, _tensor(imp, node, args[0])
    act = _activation(imp, node, m.activation)

    def sa(h):
        return b.dropout(_attention(imp, node, m.self_attn, h), m.dropout1.p, imp.next_seed())

    def ff(h):
        h = b.dropout(act(_linear(imp, node, m.linear1, h)), m.dropout.p, imp.next_seed())
        return b.dropout(_linear(imp, node, m.linear2, h), m.dropout2.p, imp.next_seed())

    if m.norm_first:
        x = b.binary("add", x, sa(_layer_norm(imp, node, m.norm1, x)))
        return b.binary("add", x, ff(_layer_norm(imp, node, m.norm2, x)))
    x = _layer_norm(imp, node, m.norm1, b.binary("add", x, sa(x)))
    return _layer_norm(imp, node, m.norm2, b.binary("add", x, ff(x)))


MODULES = {
    "Conv2d": conv2d, "BatchNorm2d": batch_norm, "BatchNorm1d": batch_norm,
    "Linear": linear, "NonDynamicallyQuantizableLinear": linear, "LayerNorm": layer_norm,
    "ReLU": _unary("relu"), "Sigmoid": _unary("sigmoid"), "Tanh": _unary("tanh"), "SiLU": _unary("silu"),
    "ReLU6": _unary("relu6"), "Hardtanh": hardtanh, "Hardswish": _unary("hardswish"),
    "Hardsigmoid": _unary("hardsigmoid"),
    "GELU": gelu, "Dropout": dropout, "Identity": identity, "Flatten": flatten_module,
    "MaxPool2d": max_pool, "AvgPool2d": avg_pool, "AdaptiveAvgPool2d": adaptive_avg_pool,
    "Softmax": softmax_module, "MultiheadAttention": multi_head_attention,
    "TransformerEncoderLayer": transformer_encoder_layer,
}

# ---------------------------------------------------------------------------
# functions and Tensor methods
# ---------------------------------------------------------------------------


def _arith(op):
    def convert(imp, node, args, kwargs):
        a, c = args[0], args[1]
        if kwargs.get("alpha", 1) != 1:
            imp.refuse(node, "%s(alpha=%s)" % (op, kwargs["alpha"]))
        b = imp.b
        if isinstance(a, db.V) and isinstance(c, db.V):
            return b.binary(op, a, c)
        if isinstance(a, db.V) and _is_num(c):
            return {"add": lambda: b.scale(a, 1.0, c), "sub": lambda: b.scale(a, 1.0, -c),
                    "mul": lambda: b.scale(a, c), "div": lambda: b.scale(a, 1.0 / c)}[op]()
        if _is_num(a) and isinstance(c, db.V):
            if op == "div":
                imp.refuse(node, "number / tensor", "the reciprocal has no dialect op")
            return {"add": lambda: b.scale(c, 1.0, a), "sub": lambda: b.scale(c, -1.0, a),
                    "mul": lambda: b.scale(c, a)}[op]()
        imp.refuse(node, "%s of %s and %s" % (op, type(a).__name__, type(c).__name__))
    return convert


def _fn_unary(op):
    def convert(imp, node, args, kwargs):
        return imp.b.unary(op, _tensor(imp, node, args[0]))
    return convert


def fn_gelu(imp, node, args, kwargs):
    return imp.b.gelu(_tensor(imp, node, args[0]), kwargs.get("approximate", "none"))


def fn_hardtanh(imp, node, args, kwargs):
    return _hardtanh(imp, node, args[0], _dim_arg(args, kwargs, 1, "min_val", -1.0),
                     _dim_arg(args, kwargs, 2, "max_val", 1.0))


def fn_dropout(imp, node, args, kwargs):
    p = args[1] if len(args) > 1 else kwargs.get("p", 0.5)
    training = args[2] if len(args) > 2 else kwargs.get("training", True)
    x = _tensor(imp, node, args[0])
    return imp.b.dropout(x, p, imp.next_seed()) if training else x


def fn_reshape(imp, node, args, kwargs):
    return reshape_to_trace(imp, node, args[0])


def fn_cat(imp, node, args, kwargs):
    xs = list(args[0])
    dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
    for x in xs:
        _tensor(imp, node, x)
    return imp.b.concat(xs, dim % len(xs[0].shape))


def fn_interpolate(imp, node, args, kwargs):
    x = _tensor(imp, node, args[0])
    names = ["size", "scale_factor", "mode", "align_corners", "recompute_scale_factor", "antialias"]
    opts = dict(zip(names, args[1:]))
    opts.update(kwargs)
    mode = opts.get("mode", "nearest")
    if mode != "bilinear" or opts.get("antialias"):
        imp.refuse(node, "interpolate(mode=%s%s)" % (mode, ", antialias" if opts.get("antialias") else ""),
                   "the dialect resizes bilinearly only")
    return imp.b.resize(x, imp.shape(node)[2:], bool(opts.get("align_corners")))


def fn_adaptive_avg_pool(imp, node, args, kwargs):
    return _adaptive_avg(imp, node, args[0])


def _dim_arg(args, kwargs, i, name, default=None):
    return args[i] if len(args) > i else kwargs.get(name, default)


def fn_softmax(imp, node, args, kwargs):
    x = _tensor(imp, node, args[0])
    dim = _dim_arg(args, kwargs, 1, "dim")
    if dim is None:
        imp.refuse(node, "softmax without dim")
    causal = getattr(x, "causal", False)  # masked by fn_masked_fill
    if causal and dim % len(x.shape) != len(x.shape) - 1:
        imp.refuse(node, "softmax of a causally masked tensor over dimension %d" % dim)
    return imp.b.softmax(x, 1.0, causal=causal, axis=dim % len(x.shape))


def fn_matmul(imp, node, args, kwargs):
    a, c = _tensor(imp, node, args[0]), _tensor(imp, node, args[1])
    if len(a.shape) < 2 or len(c.shape) < 2:
        imp.refuse(node, "matmul of a vector", "the dialect multiplies matrices")
    return imp.b.matmul(a, c)


def fn_transpose(imp, node, args, kwargs):
    x = _tensor(imp, node, args[0])
    d0, d1 = (d % len(x.shape) for d in args[1:3])
    perm = list(range(len(x.shape)))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return imp.b.transpose(x, perm)


def fn_permute(imp, node, args, kwargs):
    x = _tensor(imp, node, args[0])
    dims = args[1] if len(args) == 2 and isinstance(args[1], (list, tuple)) else args[1:]
    return imp.b.transpose(x, [d % len(x.shape) for d in dims])


def fn_mean(imp, node, args, kwargs):
    x = _tensor(imp, node, args[0])
    dims = _dim_arg(args, kwargs, 1, "dim", list(range(len(x.shape))))
    dims = [dims] if isinstance(dims, int) else list(dims)
    if kwargs.get("dtype") is not None:
        imp.refuse(node, "mean(dtype=...)")
    return imp.b.reduce("reduce_mean", x, dims, bool(_dim_arg(args, kwargs, 2, "keepdim", False)))


def fn_linear(imp, node, args, kwargs):
    x, w = _tensor(imp, node, args[0]), _tensor(imp, node, args[1])
    bias = _dim_arg(args, kwargs, 2, "bias")
    return imp.b.linear(x, w, bias)


def fn_chunk(imp, node, args, kwargs):
    x = _tensor(imp, node, args[0])
    n, dim = args[1], _dim_arg(args, kwargs, 2, "dim", 0) % len(x.shape)
    size = x.shape[dim]
    if size is None or size % n:
        imp.refuse(node, "chunk of %s into %d" % (x.ty, n), "only even chunks of a static dimension")
    step = size // n
    return [imp.b.slice(x, dim, i * step, (i + 1) * step) for i in range(n)]


def fn_split(imp, node, args, kwargs):
    """Tensor.split / torch.split: slices of `size` (the last one shorter)
    or of each of a list of sizes, along a static dimension."""
    x = _tensor(imp, node, args[0])
    size, dim = _dim_arg(args, kwargs, 1, "split_size_or_sections", kwargs.get("split_size")), \
        _dim_arg(args, kwargs, 2, "dim", 0) % len(x.shape)
    total = x.shape[dim]
    if total is None:
        imp.refuse(node, "split of the batch dimension", "only static dimensions")
    sizes = list(size) if isinstance(size, (list, tuple)) else \
        [min(size, total - i) for i in range(0, total, size)]
    if sum(sizes) != total:
        imp.refuse(node, "split into %s of %d" % (sizes, total), "the sizes must cover the dimension")
    out, start = [], 0
    for n in sizes:
        out.append(imp.b.slice(x, dim, start, start + n))
        start += n
    return out


def _constant(imp, n):
    """The value of an fx node that reads no input (a buffer compared with a
    number, say), computed from the module's tensors; None where it reads
    one, or is not a tensor computation."""
    if not isinstance(n, torch.fx.Node):
        return n
    if n.op == "get_attr":
        t = imp.gm
        for part in n.target.split("."):
            t = getattr(t, part)
        return t
    if n.op not in ("call_function", "call_method"):
        return None
    args = [_constant(imp, a) for a in n.args]
    if any(a is None for a in args) or any(isinstance(v, torch.fx.Node) for v in n.kwargs.values()):
        return None
    with torch.no_grad():
        if n.op == "call_method":
            return getattr(args[0], n.target)(*args[1:], **n.kwargs)
        return n.target(*args, **n.kwargs)


_SOFTMAXES = (F.softmax, torch.softmax)


def fn_masked_fill(imp, node, args, kwargs):
    """masked_fill(x, mask, -inf) right before a softmax over the last
    dimension, with a constant mask that hides each query's later keys
    (GPT-2's causal mask): the softmax's own causal mask. Other masks and
    fills are refused."""
    x = _tensor(imp, node, args[0])
    mask, fill = _constant(imp, node.args[1]), _dim_arg(args, kwargs, 2, "value")
    if not isinstance(mask, torch.Tensor):
        imp.refuse(node, "masked_fill with a mask computed from the input", "only a constant causal mask")
    t = x.shape[-1]
    causal = torch.ones(t, t, dtype=torch.bool).triu(1)
    users = list(node.users)
    to_softmax = len(users) == 1 and (
        (users[0].op == "call_function" and users[0].target in _SOFTMAXES) or
        (users[0].op == "call_method" and users[0].target == "softmax") or
        (users[0].op == "call_module" and type(imp.modules[users[0].target]).__name__ == "Softmax"))
    if not (fill == float("-inf") and len(x.shape) >= 2 and x.shape[-2] == t and to_softmax and
            mask.dim() >= 2 and mask.dtype == torch.bool and tuple(mask.shape[-2:]) == (t, t) and
            all(d == 1 for d in mask.shape[:-2]) and torch.equal(mask.reshape(t, t), causal)):
        imp.refuse(node, "masked_fill", "only -inf over each query's later keys, right before a softmax "
                   "over the keys (the softmax's causal mask)")
    out = db.V(x.name, x.shape, x.dtype)
    out.causal = True
    return out


def fn_getitem(imp, node, args, kwargs):
    x, index = args
    if isinstance(index, Constant):
        return _gather(imp, node, x, index.t)
    if not isinstance(x, db.V):
        return x[index]  # a tuple of converted values (attention, chunk)
    index = index if isinstance(index, tuple) else (index,)
    out = x
    for axis, ix in enumerate(index):
        if isinstance(ix, slice) and ix == slice(None):
            continue
        if axis == 0 or not isinstance(ix, (slice, int)) or isinstance(ix, bool):
            what = "a tensor" if isinstance(ix, db.V) else repr(ix)
            imp.refuse(node, "tensor index %s on axis %d" % (what, axis), "only static slices and integers")
        size = x.shape[axis]
        start, end, step = (ix.indices(size) if isinstance(ix, slice) else
                            (ix % size, ix % size + 1, 1))
        out = imp.b.slice(out, axis, start, end, step)
    if any(isinstance(ix, int) for ix in index):
        out = reshape_to_trace(imp, node, out)
    return out


def _gather(imp, node, table, index):
    """table[index] with a constant integer index tensor (MaxViT's relative
    position bias: a [positions, heads] parameter read by a fixed index):
    train.embedding of the flattened index, reshaped to index's shape."""
    if not isinstance(table, db.V) or len(table.shape) != 2 or None in table.shape:
        imp.refuse(node, "tensor index into %s" % getattr(table, "ty", type(table).__name__),
                   "only rows of a static 2-D tensor by a constant index")
    if index.is_floating_point() or index.dtype == torch.bool:
        imp.refuse(node, "tensor index of %s" % index.dtype, "only integer indices")
    flat = index.reshape(-1)
    if len(flat) and not (0 <= int(flat.min()) and int(flat.max()) < table.shape[0]):
        imp.refuse(node, "index %d..%d into %d rows" % (int(flat.min()), int(flat.max()), table.shape[0]))
    rows = imp.b.embedding(table, imp.b.constant_ints(flat.tolist()))
    shape = list(index.shape) + [table.shape[1]]
    return rows if len(index.shape) == 1 else imp.b.reshape(rows, shape)


def fn_expand(imp, node, args, kwargs):
    """Tensor.expand / expand_as: a broadcast to the traced shape; the batch
    (dimension 0 where it changes with the batch) is the model input's."""
    x = _tensor(imp, node, args[0])
    shape = imp.shape(node)
    if None in shape[1:]:
        imp.refuse(node, "expand to %s" % shape, "only dimension 0 may be the batch")
    if shape == list(x.shape):
        return x
    return imp.b.expand(x, imp.batch_of, shape)


def fn_layer_norm(imp, node, args, kwargs):
    """F.layer_norm over the last dimension, with a scale and a bias
    (ConvNeXt's LayerNorm2d: permute, this, permute back)."""
    x = _tensor(imp, node, args[0])
    names = ["normalized_shape", "weight", "bias", "eps"]
    o = {"weight": None, "bias": None, "eps": 1e-5}
    o.update(dict(zip(names, args[1:])))
    o.update(kwargs)
    if tuple(o["normalized_shape"]) != (x.shape[-1],) or not isinstance(o["weight"], db.V) or \
            not isinstance(o["bias"], db.V):
        imp.refuse(node, "layer_norm(normalized_shape=%s, weight=%s, bias=%s)"
                   % (tuple(o["normalized_shape"]), type(o["weight"]).__name__, type(o["bias"]).__name__),
                   "the dialect normalizes the last dimension with a scale and a bias")
    return imp.b.layer_norm(x, o["weight"], o["bias"], o["eps"])


def fn_stochastic_depth(imp, node, args, kwargs):
    """torchvision.ops.stochastic_depth: in training, each sample ("row") or
    the whole batch ("batch") is dropped with probability p and the rest
    scaled by 1/(1-p). Written as train.dropout of ones of shape [N, 1, ...]
    (or [1, ...]) multiplied into the input: the dropout's counter-based mask
    decides per sample, as it does per element."""
    names = ["input", "p", "mode", "training"]
    o = {"training": True}
    o.update(dict(zip(names, args)))
    o.update(kwargs)
    x, p, mode = _tensor(imp, node, o["input"]), o["p"], o["mode"]
    if mode not in ("row", "batch"):
        imp.refuse(node, "stochastic_depth(mode=%r)" % mode, "mode is row or batch")
    if not o["training"] or p == 0.0:
        return x
    if not 0.0 < p < 1.0:
        imp.refuse(node, "stochastic_depth(p=%s)" % p, "a rate in [0, 1): dropout's")
    b = imp.b
    ones = b.constant_fill([1] * len(x.shape), 1.0)
    if mode == "row":
        ones = b.expand(ones, x, [x.shape[0]] + [1] * (len(x.shape) - 1))
    return b.binary("mul", x, b.dropout(ones, p, imp.next_seed()))


def fn_noop_check(imp, node, args, kwargs):
    """torch._assert: a check the trace already passed; it computes nothing."""
    return None


def fn_identity(imp, node, args, kwargs):
    return _tensor(imp, node, args[0])


def fn_max_pool(imp, node, args, kwargs):
    names = ["kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices"]
    o = {"stride": None, "padding": 0, "dilation": 1, "ceil_mode": False, "return_indices": False}
    o.update(dict(zip(names, args[1:])))
    o.update(kwargs)
    if o["dilation"] not in (1, (1, 1)) or o["return_indices"]:
        imp.refuse(node, "max_pool2d(dilation=%s, return_indices=%s)" % (o["dilation"], o["return_indices"]))
    k, s, p = _pool_args(o["kernel_size"], o["stride"], o["padding"])
    return imp.b.pool("max_pool2d", _tensor(imp, node, args[0]), k, s, p, ceil_mode=o["ceil_mode"])


def fn_avg_pool(imp, node, args, kwargs):
    names = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"]
    o = {"stride": None, "padding": 0, "ceil_mode": False, "count_include_pad": True, "divisor_override": None}
    o.update(dict(zip(names, args[1:])))
    o.update(kwargs)
    if o["divisor_override"] is not None:
        imp.refuse(node, "avg_pool2d(divisor_override=%s)" % o["divisor_override"])
    k, s, p = _pool_args(o["kernel_size"], o["stride"], o["padding"])
    return imp.b.pool("avg_pool2d", _tensor(imp, node, args[0]), k, s, p, ceil_mode=o["ceil_mode"],
                      count_include_pad=o["count_include_pad"])


FUNCTIONS = {
    operator.add: _arith("add"), operator.iadd: _arith("add"), torch.add: _arith("add"),
    operator.sub: _arith("sub"), torch.sub: _arith("sub"),
    operator.mul: _arith("mul"), operator.imul: _arith("mul"), torch.mul: _arith("mul"),
    operator.truediv: _arith("div"), torch.div: _arith("div"),
    F.relu: _fn_unary("relu"), torch.relu: _fn_unary("relu"),
    torch.sigmoid: _fn_unary("sigmoid"), F.sigmoid: _fn_unary("sigmoid"),
    torch.tanh: _fn_unary("tanh"), F.tanh: _fn_unary("tanh"), F.silu: _fn_unary("silu"),
    F.relu6: _fn_unary("relu6"), F.hardtanh: fn_hardtanh, F.hardswish: _fn_unary("hardswish"),
    F.hardsigmoid: _fn_unary("hardsigmoid"),
    F.gelu: fn_gelu, F.dropout: fn_dropout,
    torch.flatten: fn_reshape, torch.reshape: fn_reshape, torch.cat: fn_cat, torch.concat: fn_cat,
    F.interpolate: fn_interpolate, F.adaptive_avg_pool2d: fn_adaptive_avg_pool,
    F.softmax: fn_softmax, torch.softmax: fn_softmax,
    torch.matmul: fn_matmul, torch.bmm: fn_matmul, operator.matmul: fn_matmul,
    torch.transpose: fn_transpose, torch.permute: fn_permute, torch.mean: fn_mean,
    F.linear: fn_linear, torch.chunk: fn_chunk, operator.getitem: fn_getitem,
    torch.split: fn_split, torch.swapaxes: fn_transpose, torch.swapdims: fn_transpose,
    torch.masked_fill: fn_masked_fill,
    torch._assert: fn_noop_check, F.max_pool2d: fn_max_pool, F.avg_pool2d: fn_avg_pool,
    F.layer_norm: fn_layer_norm, torch.einsum: fn_einsum,
}

try:
    from torchvision.ops import stochastic_depth as _stochastic_depth
    FUNCTIONS[_stochastic_depth] = fn_stochastic_depth
except ImportError:  # a module of the user's own, without torchvision
    pass

METHODS = {
    "view": fn_reshape, "reshape": fn_reshape, "flatten": fn_reshape, "unsqueeze": fn_reshape,
    "squeeze": fn_reshape, "contiguous": fn_identity, "permute": fn_permute,
    "transpose": fn_transpose, "mean": fn_mean, "softmax": fn_softmax, "chunk": fn_chunk,
    "relu": _fn_unary("relu"), "sigmoid": _fn_unary("sigmoid"), "tanh": _fn_unary("tanh"),
    "add": _arith("add"), "add_": _arith("add"), "mul": _arith("mul"), "mul_": _arith("mul"),
    "sub": _arith("sub"), "div": _arith("div"),
    "split": fn_split, "swapaxes": fn_transpose, "swapdims": fn_transpose,
    "masked_fill": fn_masked_fill, "expand": fn_expand,
}
