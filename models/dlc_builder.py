"""A Python API that writes train-dialect model files (docs/Builder.md).

A `Builder` collects the arguments of `@forward` (inputs, labels,
parameters, buffers) and its op lines, tracking every value's static shape
so that each op line carries its operand types; the dialect infers the
result types when the file is parsed. `Builder.text` returns the module.

    b = Builder()
    x = b.input("x", [None, 784])              # None: the batch, `?` in the file
    labels = b.label("labels", [None])
    h = b.relu(b.linear_layer("fc1", x, 256))
    loss = b.cross_entropy(b.linear_layer("fc2", h, 10), labels)
    print(b.text(["An MLP."], sgd(0.1, momentum=0.9), loss))

Op methods take values (`V`) and keyword attributes named as in
docs/TrainOps.md; they emit an attribute only where it differs from the
op's default, so files stay short. The `*_layer` methods also create the
parameters a torch.nn module owns, named `<prefix>.weight` etc. as in its
state_dict, with the initializer PyTorch's module uses by default
(docs/ModelConventions.md lists the initializers).

models/generate.py writes the seed models with it, and dlc-import writes
imported PyTorch modules with it.
"""

import math

# ---------------------------------------------------------------------------
# Values and literals
# ---------------------------------------------------------------------------


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
    """A float attribute as MLIR parses it: repr's shortest round trip."""
    text = repr(float(x))
    if "e" in text and "." not in text.split("e")[0]:  # MLIR wants 1.0e-08
        mantissa, exponent = text.split("e")
        text = mantissa + ".0e" + exponent
    return text + " : " + ty


def f64(x):
    return literal(x, "f64")


def f32(x):
    return literal(x, "f32")


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _array(v):
    return "array<i64: %s>" % ", ".join(str(int(d)) for d in v)


# ---------------------------------------------------------------------------
# Initializers (train.param / train.buffer attributes)
# ---------------------------------------------------------------------------

# He init for ReLU nets with fan_out, as torchvision's ResNets and VGG set it.
KAIMING_FAN_OUT = 'init = "kaiming_normal", mode = "fan_out", nonlinearity = "relu"'
# torch.nn.init.kaiming_normal_()'s defaults: fan_in, leaky_relu gain at a = 0.
KAIMING_FAN_IN = 'init = "kaiming_normal"'
ONES, ZEROS = 'init = "ones"', 'init = "zeros"'


def normal(std):
    """N(0, std^2), e.g. BERT's and GPT-2's 0.02."""
    return 'init = "normal", std = %s' % f64(std)


def uniform(low, high):
    return 'high = %s, init = "uniform", low = %s' % (f64(high), f64(low))


def xavier_uniform(gain=1.0):
    """torch.nn.init.xavier_uniform_ (nn.MultiheadAttention's in_proj_weight)."""
    return 'init = "xavier_uniform"' + ("" if gain == 1.0 else ", gain = %s" % f64(gain))


def torch_bias_init(fan_in):
    """The default bias of nn.Conv2d and nn.Linear: U(+-1/sqrt(fan_in))."""
    bound = 1 / math.sqrt(fan_in)
    return uniform(-bound, bound)


def torch_linear_init(fan_in):
    """nn.Linear's and nn.Conv2d's default (reset_parameters):
    kaiming_uniform(a=sqrt(5)) for the weight, U(+-1/sqrt(fan_in)) for the
    bias; returns (weight init, bias init)."""
    return ('init = "kaiming_uniform", a = %s' % f64(math.sqrt(5)), torch_bias_init(fan_in))


def sgd(lr, momentum=0.0, weight_decay=0.0):
    """The train.optimizer text of torch.optim.SGD(lr, momentum, weight_decay)."""
    return 'kind = "sgd", lr = %s, momentum = %s, weight_decay = %s' % (
        f64(lr), f64(momentum), f64(weight_decay))


def adamw(lr, beta1=0.9, beta2=0.999, epsilon=1e-8, weight_decay=0.01):
    """The train.optimizer text of torch.optim.AdamW (its defaults)."""
    return ('kind = "adamw", lr = %s, beta1 = %s, beta2 = %s, epsilon = %s, weight_decay = %s'
            % (f64(lr), f64(beta1), f64(beta2), f64(epsilon), f64(weight_decay)))


# ---------------------------------------------------------------------------
# The builder
# ---------------------------------------------------------------------------


class Builder:
    """Collects `@forward`'s arguments and ops; `text` writes the module."""

    def __init__(self):
        self.args, self.lines, self.count = [], [], 0

    # --- arguments -------------------------------------------------------
    def _arg(self, name, shape, dtype, attrs):
        v = V("%%a%d" % len(self.args), shape, dtype)
        self.args.append('%s: %s {train.name = "%s", %s}' % (v.name, v.ty, name, attrs))
        return v

    def input(self, name, shape, dtype="f32"):
        """A model input (train.input); shape[0] is the batch, None."""
        return self._arg(name, shape, dtype, "train.input")

    def label(self, name, shape):
        """Integer targets (train.label), i64, batch first."""
        return self._arg(name, shape, "i64", "train.label")

    def param(self, name, shape, init):
        """A trainable parameter (train.param); `init` is an initializer's
        text, e.g. KAIMING_FAN_OUT or normal(0.02)."""
        return self._arg(name, shape, "f32", "train.param = {%s}" % init)

    def buffer(self, name, shape, init):
        """Updated, untrained state (train.buffer): batch-norm statistics."""
        return self._arg(name, shape, "f32", "train.buffer = {%s}" % init)

    # --- ops ---------------------------------------------------------------
    def emit(self, text, *operands, shape, dtype="f32", results=1):
        """Appends `%N = <text> : <operand types>`; returns result 0."""
        self.count += 1
        name = "%%%d" % self.count
        lhs = name if results == 1 else "%s:%d" % (name, results)
        types = ", ".join(o.ty for o in operands)
        self.lines.append("    %s = %s : %s" % (lhs, text, types))
        return V(name if results == 1 else name + "#0", shape, dtype)

    def conv(self, x, w, stride=1, pad=0, dil=1, groups=1, bias=None):
        """train.conv2d: NCHW input, OIHW filter [C_out, C_in / groups, KH, KW],
        optional bias [C_out]; stride, pad (both sides) and dil are an int or
        an (h, w) pair, as torch.nn.functional.conv2d. nn.Conv2d's default
        init: torch_linear_init(C_in / groups * KH * KW)."""
        n, c, h, wd = x.shape
        k, _, r, s = w.shape
        (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(pad), _pair(dil)
        oh = (h + 2 * ph - dh * (r - 1) - 1) // sh + 1
        ow = (wd + 2 * pw - dw * (s - 1) - 1) // sw + 1
        attrs = []
        if (dh, dw) != (1, 1):
            attrs.append("dilation = " + _array((dh, dw)))
        if groups != 1:
            attrs.append("groups = %d : i64" % groups)
        if (ph, pw) != (0, 0):
            attrs.append("padding = " + _array((ph, pw)))
        if (sh, sw) != (1, 1):
            attrs.append("stride = " + _array((sh, sw)))
        ops = [x, w] + ([bias] if bias else [])
        text = "train.conv2d " + ", ".join(o.name for o in ops)
        if attrs:
            text += " {%s}" % ", ".join(attrs)
        return self.emit(text, *ops, shape=[n, k, oh, ow])

    def bn(self, x, g, b, rm, rv, eps=1e-5, momentum=0.1):
        """train.batch_norm in training mode over dimension 1 of an NCHW or
        NC input: scale g, bias b, running statistics rm, rv (updated as
        nn.BatchNorm2d does with `momentum`). nn.BatchNorm2d's default init:
        ONES for g and rv, ZEROS for b and rm."""
        attrs = [] if eps == 1e-5 else ["epsilon = %s" % f32(eps)]
        if momentum != 0.1:
            attrs.append("momentum = %s" % f32(momentum))
        attrs = " {%s}" % ", ".join(attrs) if attrs else ""
        return self.emit("train.batch_norm %s, %s, %s, %s, %s%s" % (x.name, g.name, b.name, rm.name, rv.name, attrs),
                         x, g, b, rm, rv, shape=x.shape, results=3)

    def unary(self, op, x, attrs=""):
        """Any one-operand op that keeps the shape: train.relu, train.sigmoid,
        train.tanh, train.silu, train.gelu, train.relu6, train.hardswish,
        train.hardsigmoid; `attrs` is its `{...}` text."""
        return self.emit("train.%s %s%s" % (op, x.name, attrs), x, shape=x.shape)

    def relu(self, x):
        """train.relu, max(x, 0) (nn.ReLU)."""
        return self.unary("relu", x)

    def gelu(self, x, approximate="none"):
        """train.gelu; approximate "none" (erf) or "tanh", as nn.GELU."""
        return self.unary("gelu", x, "" if approximate == "none" else ' {approximate = "%s"}' % approximate)

    def binary(self, op, a, b):
        """train.add / sub / mul / div with NumPy broadcasting."""
        rank = max(len(a.shape), len(b.shape))
        pa = [1] * (rank - len(a.shape)) + a.shape
        pb = [1] * (rank - len(b.shape)) + b.shape
        shape = [y if x == 1 else x for x, y in zip(pa, pb)]
        return self.emit("train.%s %s, %s" % (op, a.name, b.name), a, b, shape=shape)

    def scale(self, x, scale=1.0, bias=0.0):
        """train.scale, x * scale + bias (a tensor times or plus a number)."""
        attrs = []
        if bias != 0.0:
            attrs.append("bias = %s" % f32(bias))
        if scale != 1.0:
            attrs.append("scale = %s" % f32(scale))
        return self.unary("scale", x, " {%s}" % ", ".join(attrs) if attrs else "")

    def pool(self, op, x, k, s, pad=0, ceil_mode=False, count_include_pad=True):
        """train.max_pool2d or train.avg_pool2d of an NCHW input: kernel k,
        stride s, padding pad (ints or (h, w) pairs); ceil_mode rounds the
        output size up and count_include_pad (avg only) divides by the full
        window, as nn.MaxPool2d / nn.AvgPool2d."""
        n, c, h, w = x.shape
        k, s, pad = _pair(k), _pair(s), _pair(pad)
        out = []
        for d, kk, ss, pp in zip((h, w), k, s, pad):
            span = d + 2 * pp - kk
            o = (-(-span // ss) if ceil_mode else span // ss) + 1
            if ceil_mode and (o - 1) * ss >= d + pp:  # the last window starts in the padding
                o -= 1
            out.append(o)
        attrs = "ceil_mode = true, " if ceil_mode else ""
        if not count_include_pad:
            attrs += "count_include_pad = false, "
        attrs += "kernel_size = %s, " % _array(k)
        if pad != (0, 0):
            attrs += "padding = %s, " % _array(pad)
        attrs += "stride = %s" % _array(s)
        return self.emit("train.%s %s {%s}" % (op, x.name, attrs), x, shape=[n, c] + out)

    def gap(self, x):
        """train.global_avg_pool, NCHW to N x C x 1 x 1
        (nn.AdaptiveAvgPool2d(1))."""
        return self.emit("train.global_avg_pool %s" % x.name, x, shape=x.shape[:2] + [1, 1])

    def reduce(self, op, x, axes, keep_dims=False):
        """train.reduce_mean / reduce_sum / reduce_max over `axes`."""
        rank = len(x.shape)
        axes = sorted(a % rank for a in axes)
        shape = [1 if i in axes else d for i, d in enumerate(x.shape) if keep_dims or i not in axes]
        attrs = "axes = %s" % _array(axes) + (", keep_dims = true" if keep_dims else "")
        return self.emit("train.%s %s {%s}" % (op, x.name, attrs), x, shape=shape)

    def reshape(self, x, shape):
        """train.reshape; the dimension that holds the batch (None) is -1."""
        spec = [-1 if d is None else d for d in shape]
        return self.emit("train.reshape %s {shape = array<i64: %s>}" % (x.name, ", ".join(map(str, spec))),
                         x, shape=shape)

    def transpose(self, x, perm):
        """train.transpose: result dimension i is input dimension perm[i]."""
        return self.emit("train.transpose %s {permutation = array<i64: %s>}" % (x.name, ", ".join(map(str, perm))),
                         x, shape=[x.shape[p] for p in perm])

    def linear(self, x, w, b=None):
        """train.linear, x W^T + b over the last dimension; w is [out, in].
        nn.Linear's default init: torch_linear_init(in)."""
        ops = [x, w] + ([b] if b else [])
        return self.emit("train.linear " + ", ".join(o.name for o in ops), *ops,
                         shape=x.shape[:-1] + [w.shape[0]])

    def matmul(self, a, b, ta=False, tb=False):
        """train.matmul, batched; ta / tb transpose a's / b's last two
        dimensions."""
        flags = (["transpose_lhs = true"] if ta else []) + (["transpose_rhs = true"] if tb else [])
        attrs = " {%s}" % ", ".join(flags) if flags else ""
        m = a.shape[-1] if ta else a.shape[-2]
        n = b.shape[-2] if tb else b.shape[-1]
        return self.emit("train.matmul %s, %s%s" % (a.name, b.name, attrs), a, b,
                         shape=a.shape[:-2] + [m, n])

    def softmax(self, x, scale, causal=False, mask=None, axis=-1):
        """train.softmax(scale * x + mask) along `axis`; `causal` masks the
        keys after each query (GPT-2); `mask` is an additive tensor."""
        attrs = []
        if axis != -1 and axis != len(x.shape) - 1:
            attrs.append("axis = %d : i64" % axis)
        if causal:
            attrs.append("causal = true")
        attrs.append("scale = %s" % f32(scale))
        if mask:
            return self.emit("train.softmax %s mask %s {%s}" % (x.name, mask.name, ", ".join(attrs)),
                             x, mask, shape=x.shape)
        return self.emit("train.softmax %s {%s}" % (x.name, ", ".join(attrs)), x, shape=x.shape)

    def layer_norm(self, x, g, b, eps):
        """train.layer_norm over the last dimension, scale g and bias b of
        shape [D]. nn.LayerNorm's default init: ONES for g, ZEROS for b."""
        return self.emit("train.layer_norm %s, %s, %s {epsilon = %s}" % (x.name, g.name, b.name, f32(eps)),
                         x, g, b, shape=x.shape)

    def embedding(self, table, ids):
        """train.embedding: rows of table [rows, D] gathered by i64 ids.
        nn.Embedding's default init: normal(1.0)."""
        return self.emit("train.embedding %s, %s" % (table.name, ids.name), table, ids,
                         shape=ids.shape + [table.shape[1]])

    def dropout(self, x, rate, seed):
        """train.dropout with probability `rate` (nn.Dropout's p); each op of
        a model needs its own `seed`."""
        return self.unary("dropout", x, " {rate = %s, seed = %d : i64}" % (f32(rate), seed))

    def slice(self, x, axis, start, end, step=1):
        """train.slice, x[..., start:end:step, ...] along `axis`."""
        shape = list(x.shape)
        shape[axis] = (end - start + step - 1) // step
        extra = "" if step == 1 else ", step = %d : i64" % step
        return self.emit("train.slice %s {axis = %d : i64, end = %d : i64, start = %d : i64%s}"
                         % (x.name, axis, end, start, extra), x, shape=shape)

    def resize(self, x, size, align_corners=False):
        """train.resize_bilinear of an NCHW input to size [H, W], as
        F.interpolate(mode="bilinear", align_corners=...)."""
        attrs = "align_corners = true, " if align_corners else ""
        attrs += "size = array<i64: %d, %d>" % tuple(size)
        return self.emit("train.resize_bilinear %s {%s}" % (x.name, attrs), x, shape=x.shape[:2] + list(size))

    def concat(self, xs, axis=1):
        """train.concat along `axis` (torch.cat)."""
        shape = list(xs[0].shape)
        shape[axis] = sum(v.shape[axis] for v in xs)
        return self.emit("train.concat %s {axis = %d : i64}" % (", ".join(v.name for v in xs), axis),
                         *xs, shape=shape)

    def constant_range(self, n):
        """train.constant [0, 1, ..., n-1] as i64 (positions)."""
        return self.constant_ints(range(n))

    def constant_ints(self, values):
        """train.constant, a 1-D i64 tensor of `values` (gather indices)."""
        values = list(values)
        self.count += 1
        name = "%%%d" % self.count
        self.lines.append("    %s = train.constant dense<[%s]> : tensor<%dxi64>"
                          % (name, ", ".join(str(int(v)) for v in values), len(values)))
        return V(name, [len(values)], "i64")

    def constant_fill(self, shape, value):
        """train.constant, a static f32 tensor of `shape` holding `value`."""
        self.count += 1
        name = "%%%d" % self.count
        ty = "tensor<%sxf32>" % "x".join(map(str, shape))
        self.lines.append("    %s = train.constant dense<%s> : %s" % (name, f32(value).split(" :")[0], ty))
        return V(name, list(shape))

    def expand(self, x, batch_of, shape):
        """train.expand: x broadcast to `shape`, whose dimension 0 may be the
        batch (None), the size of batch_of's dimension 0."""
        spec = [-1 if d is None else d for d in shape]
        return self.emit("train.expand %s, %s {shape = array<i64: %s>}" % (x.name, batch_of.name, ", ".join(map(str, spec))),
                         x, batch_of, shape=list(shape))

    def cross_entropy(self, logits, labels, class_axis=1, ignore=None):
        """train.softmax_cross_entropy, the mean over counted labels, as
        F.cross_entropy: classes on `class_axis`; labels equal to `ignore`
        (ignore_index) are not counted."""
        attrs = []
        if class_axis != 1:
            attrs.append("class_axis = %d : i64" % class_axis)
        if ignore is not None:
            attrs.append("ignore_index = %d : i64" % ignore)
        text = "train.softmax_cross_entropy %s, %s" % (logits.name, labels.name)
        if attrs:
            text += " {%s}" % ", ".join(attrs)
        return self.emit(text, logits, labels, shape=[])

    # --- layers: an nn.Module's parameters and its op -----------------------
    def conv2d_layer(self, prefix, x, out_channels, kernel, stride=1, pad=0, dil=1, groups=1, bias=True,
                     init=None):
        """nn.Conv2d(C_in, out_channels, kernel, ...): `<prefix>.weight` (and
        `.bias`) with nn.Conv2d's default init unless `init` is given."""
        kh, kw = _pair(kernel)
        fan_in = x.shape[1] // groups * kh * kw
        w_init, b_init = torch_linear_init(fan_in)
        w = self.param(prefix + ".weight", [out_channels, x.shape[1] // groups, kh, kw], init or w_init)
        b = self.param(prefix + ".bias", [out_channels], b_init) if bias else None
        return self.conv(x, w, stride=stride, pad=pad, dil=dil, groups=groups, bias=b)

    def batch_norm_layer(self, prefix, x, eps=1e-5, momentum=0.1):
        """nn.BatchNorm2d / BatchNorm1d: weight, bias, running_mean and
        running_var under `prefix`, with their default inits; returns the
        normalized value (the running statistics' updates are results 1, 2)."""
        c = [x.shape[1]]
        g = self.param(prefix + ".weight", c, ONES)
        be = self.param(prefix + ".bias", c, ZEROS)
        rm = self.buffer(prefix + ".running_mean", c, ZEROS)
        rv = self.buffer(prefix + ".running_var", c, ONES)
        return self.bn(x, g, be, rm, rv, eps=eps, momentum=momentum)

    def linear_layer(self, prefix, x, out_features, bias=True, init=None):
        """nn.Linear(in, out_features) with its default init unless `init`."""
        w_init, b_init = torch_linear_init(x.shape[-1])
        w = self.param(prefix + ".weight", [out_features, x.shape[-1]], init or w_init)
        b = self.param(prefix + ".bias", [out_features], b_init) if bias else None
        return self.linear(x, w, b)

    def layer_norm_layer(self, prefix, x, eps=1e-5):
        """nn.LayerNorm(D) over the last dimension, weight ONES, bias ZEROS."""
        d = [x.shape[-1]]
        return self.layer_norm(x, self.param(prefix + ".weight", d, ONES),
                               self.param(prefix + ".bias", d, ZEROS), eps)

    # --- the module ----------------------------------------------------------
    def text(self, header, optimizer, loss, generator="models/generate.py"):
        """The module: `header` lines as the provenance comment, then
        @forward with `optimizer` (sgd(...) or adamw(...)) returning `loss`."""
        out = ["// " + line if line else "//" for line in header]
        out.append("// Generated by %s; do not edit by hand." % generator)
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
