#!/usr/bin/python3
"""dlc-import: a PyTorch nn.Module to a train-dialect model file (docs/Importer.md).

  dlc-import MODEL --input-shape 2x3x32x32 [--args JSON] [--loss class|pixel]
             [--ignore-index N] [--optimizer sgd|adamw] [--lr ...] ...
             -o model.mlir [--params-out DIR] [--inputs-out DIR]

MODEL is a torchvision model name (`resnet18`, `fcn_resnet50`; built with
weights=None) or `module:Class` / `path/to/file.py:Class`; --args gives the
constructor's keyword arguments as JSON. torch.fx traces the module, with
every torch.nn module as a leaf that this file converts as a whole, and runs
the trace at the example batch and the batch plus one to learn every shape
and which dimensions carry the batch. Every node becomes train-dialect ops
through models/dlc_builder.py; an op the dialect lacks is refused with its
name, the module path and the source line, never skipped or approximated.
Parameters and buffers keep their state_dict names, so --params-out writes
the module's current weights in the layout dlc-bench --params-in reads.
"""

import argparse
import dis
import inspect
import json
import os
import operator
import re
import shlex
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import dlc_builder as db  # noqa: E402


class Refusal(Exception):
    """The module cannot be imported: one line, printed as an error."""


def _torch():
    try:
        import torch
        import torch.fx  # noqa: F401
    except ImportError as e:
        raise Refusal("PyTorch is not importable by %s: %s" % (sys.executable, e))
    return torch


def load_module(spec, kwargs):
    """An nn.Module from a torchvision name or `module:Class`."""
    torch = _torch()
    if ":" in spec:
        where, cls = spec.rsplit(":", 1)
        if where.endswith(".py"):
            import importlib.util
            s = importlib.util.spec_from_file_location(os.path.basename(where)[:-3], where)
            if s is None or not os.path.exists(where):
                raise Refusal("%s: no such file" % where)
            mod = importlib.util.module_from_spec(s)
            s.loader.exec_module(mod)
        else:
            import importlib
            mod = importlib.import_module(where)
        if not hasattr(mod, cls):
            raise Refusal("%s has no %s" % (where, cls))
        m = getattr(mod, cls)(**kwargs)
    else:
        try:
            import torchvision
        except ImportError as e:
            raise Refusal("torchvision is not importable by %s (apt-get install python3-torchvision): %s"
                          % (sys.executable, e))
        names = set(torchvision.models.list_models())
        if spec not in names:
            raise Refusal("%s is not a torchvision model (torchvision.models.list_models())" % spec)
        kwargs = dict(kwargs)
        kwargs.setdefault("weights", None)
        if "weights_backbone" in inspect.signature(torchvision.models.get_model_builder(spec)).parameters:
            kwargs.setdefault("weights_backbone", None)
        m = torchvision.models.get_model(spec, **kwargs)
    if not isinstance(m, torch.nn.Module):
        raise Refusal("%s did not build an nn.Module" % spec)
    return m.train()


def select_output(out):
    """The logits among a module's outputs: a segmentation model's "out", a
    model with auxiliary heads' first output."""
    if isinstance(out, dict):
        if "out" not in out:
            raise Refusal("the module returns a dict without \"out\" (%s)" % ", ".join(out))
        return out["out"]
    if isinstance(out, (tuple, list)):
        return out[0]
    return out


def snake(name):
    """nn.Hardswish -> hardswish, nn.AdaptiveMaxPool2d -> adaptive_max_pool2d."""
    name = name.replace("ReLU", "Relu").replace("GELU", "Gelu").replace("SiLU", "Silu")
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


class Importer:
    """Converts a traced module node by node into a Builder."""

    def __init__(self, module, shapes, dtypes, loss, ignore_index, survey=False):
        self.torch = torch = _torch()
        self.survey = survey
        self.module = module
        self.b = db.Builder()
        self.seed = 0
        self.args = {}  # id(tensor) -> V, parameters and buffers in the file
        self.arg_tensors = []  # (name, tensor) in file order
        self.names = {}
        for n, t in module.named_parameters():
            self.names.setdefault(id(t), (n, "param"))
        for n, t in module.named_buffers():
            self.names.setdefault(id(t), (n, "buffer"))
        self.loss, self.ignore_index = loss, ignore_index
        tracer = _Tracer(torch)
        forward = inspect.signature(module.forward).parameters
        extra = list(forward)[len(shapes):]
        concrete = {k: forward[k].default for k in extra if forward[k].default is not inspect.Parameter.empty}
        try:
            self.graph = tracer.trace(module, concrete_args=concrete or None)
        except Exception as e:  # noqa: BLE001  torch.fx raises many kinds
            raise Refusal("torch.fx cannot trace %s: %s" % (type(module).__name__, str(e).splitlines()[0]))
        self.gm = torch.fx.GraphModule(module, self.graph)
        self.modules = dict(module.named_modules())
        self.shapes, self.dtypes = shapes, dtypes
        self.runs = [self._run(shapes[0][0] + k) for k in (0, 1)]

    # --- shapes: the trace run at two batch sizes ---------------------------
    def _run(self, batch):
        torch = self.torch
        saved = [(t, t.clone()) for t in self.module.buffers()]
        values = {}

        class Recorder(torch.fx.Interpreter):
            def run_node(self, n):
                r = super().run_node(n)
                values[n] = tuple(r.shape) if isinstance(r, torch.Tensor) else r
                return r

        g = torch.Generator().manual_seed(0)
        inputs = []
        for shape, dtype in zip(self.shapes, self.dtypes):
            shape = [batch] + list(shape[1:])
            inputs.append(torch.randint(0, 2, shape, generator=g) if dtype == "i64"
                          else torch.randn(shape, generator=g))
        try:
            with torch.no_grad():
                Recorder(self.gm).run(*inputs)
        except Exception as e:  # noqa: BLE001
            raise Refusal("the module does not run on inputs of shape %s: %s"
                          % (", ".join("x".join(map(str, [batch] + list(s[1:]))) for s in self.shapes),
                             str(e).splitlines()[0]))
        finally:
            with torch.no_grad():
                for t, value in saved:
                    t.copy_(value)
        return values

    def shape(self, node):
        """The node's tensor shape, None where it changes with the batch."""
        a, b = self.runs[0][node], self.runs[1][node]
        return [None if x != y else x for x, y in zip(a, b)]

    # --- diagnostics -----------------------------------------------------------
    def where(self, node):
        path = node.target if node.op == "call_module" else node.meta.get("dlc_module", "")
        frames = re.findall(r'File "([^"]+)", line (\d+)', node.stack_trace or "")
        # Innermost first: the first frame in the model's own code.
        frames = [f for f in frames if "/torch/" not in f[0] and not os.path.basename(f[0]).startswith("dlc_import")]
        line = "%s:%s" % frames[0] if frames else "unknown source line"
        return "module %s, %s" % (path or "(top level)", line)

    def refuse(self, node, op, why="the train dialect has no such op"):
        raise Refusal("%s: %s (%s)" % (op, why, self.where(node)))

    # --- parameters ------------------------------------------------------------
    def tensor_arg(self, node, t, init):
        if id(t) in self.args:
            return self.args[id(t)]
        if id(t) not in self.names:
            self.refuse(node, "constant tensor", "a tensor that is neither a parameter nor a buffer")
        name, role = self.names[id(t)]
        shape = list(t.shape)
        v = (self.b.param(name, shape, init) if role == "param" else self.b.buffer(name, shape, init))
        self.args[id(t)] = v
        self.arg_tensors.append((name, t))
        return v

    # --- the conversion --------------------------------------------------------
    def convert(self):
        torch = self.torch
        env = {}
        inputs = []
        self.input_names = []
        self.missing = []
        live = self.live()
        for node in self.graph.nodes:
            if node.op not in ("placeholder", "output") and node not in live:
                continue  # e.g. an auxiliary head the loss does not read
            if node.op == "placeholder":
                i = len(inputs)
                if i >= len(self.shapes):
                    self.refuse(node, "input %s" % node.target, "no --input-shape given for it")
                shape = [None] + list(self.shapes[i][1:])
                name = node.target if len(self.shapes) > 1 else "x"
                v = self.b.input(name, shape, self.dtypes[i])
                if i == 0:
                    self.batch_of = v  # whose batch train.expand takes
                self.input_names.append(name)
                inputs.append(v)
                env[node] = v
            elif node.op == "output":
                out = self.logits_node()
                if not isinstance(out, torch.fx.Node) or not isinstance(env.get(out), db.V):
                    self.refuse(node, "output", "the module's output is not a tensor")
                if self.missing:
                    raise Refusal(self.missing[0])
                return self.finish(env[out], out)
            else:
                try:
                    value = self.node(node, env)
                except Refusal as e:
                    if not self.survey:
                        raise
                    self.missing.append(str(e))
                    value = self.stand_in(self.runs[0][node], node)
                if isinstance(value, db.V) and isinstance(self.runs[0][node], tuple) and \
                        all(isinstance(d, int) for d in self.runs[0][node]):
                    value.shape = self.shape(node)
                env[node] = value
        raise Refusal("the traced graph has no output")

    def logits_node(self):
        """The output node select_output picks, through a namedtuple's
        constructor (GoogLeNetOutputs), which the trace records as a call."""
        out = select_output([n for n in self.graph.nodes if n.op == "output"][0].args[0])
        while isinstance(out, self.torch.fx.Node) and out.op == "call_function" and \
                isinstance(out.target, type) and issubclass(out.target, tuple):
            out = out.args[0]
        return out

    def live(self):
        """The nodes the selected output depends on."""
        todo = [self.logits_node()]
        live = set()
        while todo:
            n = todo.pop()
            if isinstance(n, self.torch.fx.Node) and n not in live:
                live.add(n)
                todo.extend(n.all_input_nodes)
        return live

    def stand_in(self, recorded, node):
        """With --all-missing: a value of the traced shape where an op was
        refused, so that the conversion goes on to find the next one."""
        if isinstance(recorded, tuple) and all(isinstance(d, int) for d in recorded):
            return db.V("%missing", self.shape(node))
        if isinstance(recorded, (tuple, list)):
            return tuple(self.stand_in(r, node) for r in recorded)
        return recorded

    def finish(self, logits, node):
        b = self.b
        if self.loss == "class":
            if len(logits.shape) != 2:
                raise Refusal("--loss class wants logits [N, classes]; the output is %s" % logits.ty)
            labels = b.label("labels", [None])
        else:
            if len(logits.shape) != 4:
                raise Refusal("--loss pixel wants logits [N, classes, H, W]; the output is %s" % logits.ty)
            labels = b.label("labels", [None] + logits.shape[2:])
        self.classes = logits.shape[1]
        self.label_shape = labels.shape
        return b.cross_entropy(logits, labels, ignore=self.ignore_index)

    def value(self, a, env):
        torch = self.torch
        if isinstance(a, torch.fx.Node):
            return env[a]
        if isinstance(a, (list, tuple)):
            return type(a)(self.value(x, env) for x in a)
        return a

    def node(self, node, env):
        args = [self.value(a, env) for a in node.args]
        kwargs = {k: self.value(v, env) for k, v in node.kwargs.items()}
        if node.op == "get_attr":
            t = self.gm
            for part in node.target.split("."):
                t = getattr(t, part)
            # A parameter read directly, not through its module's call: a norm
            # layer's scale starts at one; anything else (a class token, a
            # layer scale) is recorded as zeros, its value is --params-out's.
            owner, _, attr = node.target.rpartition(".")
            norms = (self.torch.nn.LayerNorm, self.torch.nn.GroupNorm,
                     self.torch.nn.modules.batchnorm._NormBase)
            ones = attr in ("weight", "running_var") and isinstance(self.modules.get(owner), norms)
            if id(t) not in self.args and id(t) not in self.names:
                return _Constant(t)  # refused where an op reads it, but masked_fill's mask
            return self.tensor_arg(node, t, db.ONES if ones else db.ZEROS)
        flat = [x for a in list(args) + list(kwargs.values()) for x in (a if isinstance(a, (list, tuple)) else [a])]
        if args and isinstance(args[0], _Constant) and node.op == "call_method" and \
                node.target in ("view", "reshape", "flatten") and not args[0].t.is_floating_point():
            # An index table (MaxViT's relative positions): reshaped here, read by a gather.
            return _Constant(getattr(args[0].t, node.target)(*args[1:], **kwargs))
        gather = node.target is operator.getitem and len(args) == 2 and isinstance(args[1], _Constant)
        if any(isinstance(a, _Constant) for a in flat) and not gather and \
                node.target not in ("masked_fill", self.torch.masked_fill):
            self.refuse(node, "constant tensor", "a tensor that is neither a parameter nor a buffer")
        tensors = [a for a in args if isinstance(a, db.V)]
        if (node.op, node.target) in ((node.op, getattr), ("call_method", "size"), ("call_method", "dim")):
            return self.runs[0][node]  # a tensor's shape: the value the trace computed
        if node.op == "call_module":
            m = self.modules[node.target]
            conv = _MODULES.get(type(m).__name__)
            if conv is None or type(m).__module__.split(".")[0] != "torch":
                where = "torch.nn" if type(m).__module__.startswith("torch.nn") else type(m).__module__
                self.refuse(node, "%s (%s.%s)" % (snake(type(m).__name__), where, type(m).__name__))
            return conv(self, node, m, args, kwargs)
        if not tensors and not any(isinstance(a, (list, tuple)) and any(isinstance(x, db.V) for x in a)
                                   for a in args):
            return self.runs[0][node]  # sizes, shapes, flags: the value the trace computed
        if node.op == "call_method":
            conv = _METHODS.get(node.target)
            name = "Tensor.%s" % node.target
        else:
            conv = _FUNCTIONS.get(node.target)
            name = getattr(node.target, "__name__", str(node.target))
        if conv is None:
            self.refuse(node, name)
        return conv(self, node, args, kwargs)

    def text(self, loss, header, optimizer):
        return self.b.text(header, optimizer, loss, generator="dlc-import")

    def next_seed(self):
        self.seed += 1
        return self.seed


def _proxy_iter(self):
    """`n, c, h, w = x.shape`: torch 1.13's Proxy.__iter__ finds the
    UNPACK_SEQUENCE by an instruction index that Python 3.11's inline caches
    shifted; this looks it up by offset. Installed on torch.fx.Proxy itself,
    since x.shape gives an Attribute, a Proxy no tracer creates."""
    frame = inspect.currentframe().f_back
    inst = [i for i in dis.get_instructions(frame.f_code) if i.offset == frame.f_lasti]
    if inst and inst[0].opname == "UNPACK_SEQUENCE":
        return (self[i] for i in range(inst[0].argval))
    return self.tracer.iter(self)


def _Tracer(torch):
    torch.fx.Proxy.__iter__ = _proxy_iter

    class Tracer(torch.fx.Tracer):
        """Keeps every torch.nn module but the containers as one node, so the
        converter sees nn.Conv2d, not the functional call inside it."""

        def __init__(self):
            super().__init__()
            self.record_stack_traces = True

        def is_leaf_module(self, m, qualname):
            # TransformerEncoder only loops over its layers (its fast path is
            # for inference); the layers are converted whole.
            containers = (torch.nn.Sequential, torch.nn.ModuleList, torch.nn.ModuleDict,
                          torch.nn.TransformerEncoder)
            return type(m).__module__.startswith("torch.nn") and not isinstance(m, containers)

        def create_node(self, *args, **kwargs):
            n = super().create_node(*args, **kwargs)
            n.meta["dlc_module"] = getattr(self, "_dlc_path", "")
            return n

        def call_module(self, m, forward, args, kwargs):
            outer = getattr(self, "_dlc_path", "")
            self._dlc_path = self.path_of_module(m)
            try:
                return super().call_module(m, forward, args, kwargs)
            finally:
                self._dlc_path = outer
    return Tracer()


from dlc_import_ops import FUNCTIONS as _FUNCTIONS, METHODS as _METHODS, MODULES as _MODULES  # noqa: E402
from dlc_import_ops import Constant as _Constant  # noqa: E402


def parse_shape(text):
    dims, _, dtype = text.partition(":")
    try:
        shape = [int(d) for d in dims.split("x")]
    except ValueError:
        raise Refusal("--input-shape %s: want dimensions like 2x3x32x32[:i64]" % text)
    if dtype not in ("", "f32", "i64") or any(d <= 0 for d in shape):
        raise Refusal("--input-shape %s: want positive dimensions and f32 or i64" % text)
    return shape, dtype or "f32"


def parser():
    p = argparse.ArgumentParser(prog="dlc-import", description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="torchvision model name, or module:Class / file.py:Class")
    p.add_argument("--args", default="{}", help="constructor keyword arguments as JSON")
    p.add_argument("--input-shape", action="append", required=True,
                   help="example input NxDx..[:i64], batch first (repeat for more inputs)")
    p.add_argument("--loss", choices=["class", "pixel"], default="class",
                   help="cross-entropy over classes [N, C], or per pixel [N, C, H, W]")
    p.add_argument("--ignore-index", type=int, help="labels not counted by the loss")
    p.add_argument("--optimizer", choices=["sgd", "adamw"], default="sgd")
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--momentum", type=float, default=0.9, help="SGD momentum")
    p.add_argument("--weight-decay", type=float, help="default 1e-4 (sgd), 0.01 (adamw)")
    p.add_argument("--betas", default="0.9,0.999", help="AdamW beta1,beta2")
    p.add_argument("--eps", type=float, default=1e-8, help="AdamW epsilon")
    p.add_argument("--seed", type=int, default=0, help="torch.manual_seed before building")
    p.add_argument("-o", "--output", required=True, help="the .mlir file to write")
    p.add_argument("--params-out", help="write every parameter and buffer as DIR/<name>.npy")
    p.add_argument("--inputs-out", help="write an example batch (inputs and labels) as DIR/<name>.npy")
    p.add_argument("--all-missing", action="store_true",
                   help="on refusal, name every missing op (one line each), not only the first")
    return p


def optimizer_text(a):
    if a.optimizer == "sgd":
        return db.sgd(a.lr, a.momentum, 1e-4 if a.weight_decay is None else a.weight_decay)
    try:
        b1, b2 = (float(x) for x in a.betas.split(","))
    except ValueError:
        raise Refusal("--betas %s: want two numbers, beta1,beta2" % a.betas)
    return db.adamw(a.lr, b1, b2, a.eps, 0.01 if a.weight_decay is None else a.weight_decay)


def build(a):
    """(module, input shapes and dtypes) from the parsed command line."""
    torch = _torch()
    try:
        kwargs = json.loads(a.args)
    except json.JSONDecodeError as e:
        raise Refusal("--args is not JSON: %s" % e)
    if not isinstance(kwargs, dict):
        raise Refusal("--args wants a JSON object of keyword arguments")
    torch.manual_seed(a.seed)
    module = load_module(a.model, kwargs)
    parsed = [parse_shape(s) for s in a.input_shape]
    return module, [s for s, _ in parsed], [d for _, d in parsed]


def example_batch(shapes, dtypes, label_shape, classes, ignore_index, seed):
    """Inputs ~ N(0, 1) (i64 inputs in [0, 2)), labels uniform over the
    classes, a tenth of them ignore_index where there is one."""
    torch = _torch()
    g = torch.Generator().manual_seed(seed)
    out = [torch.randint(0, 2, s, generator=g) if d == "i64" else torch.randn(s, generator=g)
           for s, d in zip(shapes, dtypes)]
    n = shapes[0][0]
    lshape = [n] + label_shape[1:]
    labels = torch.randint(0, classes, lshape, generator=g)
    if ignore_index is not None:
        labels[torch.rand(lshape, generator=g) < 0.1] = ignore_index
    return out, labels


def main(argv=None):
    a = parser().parse_args(argv)
    try:
        module, shapes, dtypes = build(a)
        imp = Importer(module, shapes, dtypes, a.loss, a.ignore_index, a.all_missing)
        try:
            loss = imp.convert()
        except Refusal:
            for line in imp.missing[:-1]:  # the last goes out below, as any refusal
                print("dlc-import: error: %s" % line, file=sys.stderr)
            if imp.missing:
                raise Refusal(imp.missing[-1])
            raise
        header = [
            "Imported by dlc-import from %s (torch %s%s) in training mode." % (
                a.model, imp.torch.__version__, _torchvision_version()),
            "Command: dlc-import " + shlex.join(sys.argv[1:] if argv is None else argv),
            "Parameters keep the module's state_dict names; initializers are the",
            "torch.nn modules' defaults (the model's own initialization is in --params-out).",
        ]
        text = imp.text(loss, header, optimizer_text(a))
        with open(a.output, "w") as f:
            f.write(text)
        import numpy as np
        if a.params_out:
            os.makedirs(a.params_out, exist_ok=True)
            for name, t in imp.arg_tensors:
                np.save(os.path.join(a.params_out, name + ".npy"), t.detach().float().numpy())
        if a.inputs_out:
            os.makedirs(a.inputs_out, exist_ok=True)
            xs, labels = example_batch(shapes, dtypes, imp.label_shape, imp.classes, a.ignore_index, a.seed)
            for name, x in zip(imp.input_names, xs):
                np.save(os.path.join(a.inputs_out, name + ".npy"), x.numpy())
            np.save(os.path.join(a.inputs_out, "labels.npy"), labels.numpy().astype(np.int64))
        elements = sum(t.numel() for n, t in imp.arg_tensors if imp.names[id(t)][1] == "param")
        print("dlc-import: %s: %d parameters (%d elements), %d buffers, %d ops -> %s" % (
            a.model, sum(1 for _, t in imp.arg_tensors if imp.names[id(t)][1] == "param"), elements,
            sum(1 for _, t in imp.arg_tensors if imp.names[id(t)][1] == "buffer"), imp.b.count, a.output))
        return 0
    except Refusal as e:
        print("dlc-import: error: %s" % e, file=sys.stderr)
        return 1


def _torchvision_version():
    try:
        import torchvision
        return ", torchvision %s" % torchvision.__version__
    except ImportError:
        return ""


if __name__ == "__main__":
    sys.exit(main())
