#!/usr/bin/env python3
"""JAX/XLA peer of dlc-bench: times one of dlc's models in JAX.

  python3 bench/peers/jax_peer.py MODEL --batch N --mode xla|xla-amp \\
      --warmup W --steps S --repeats R --device cpu|cuda -o out.json

The whole training step (forward, loss, gradients, optimizer update,
batch-norm running statistics, dropout's key) is one jax.jit function,
compiled ahead of time (its compile time is the report's compile_ms) and
called with its state donated on CUDA. Optimizers: optax's where optax is
installed (sgd with momentum after add_decayed_weights, as torch.optim.SGD;
adamw), otherwise the same updates written out here.

Modes (the report's "fusion"; "precision" is fp32 or amp):
  xla       float32 (XLA's default matmul precision: see the report's
            peer.jax_default_matmul_precision)
  xla-amp   bfloat16 compute with float32 master weights, normalizations,
            softmax and loss; no loss scaling (bfloat16 has float32's range)

Methodology as dlc-bench's (bench/README.md), backend "jax-cpu" or "jax-cuda".
"""

import contextlib
import functools
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

TOOL = "jax_peer"
MODES = ["xla", "xla-amp"]


def import_jax():
    try:
        import jax  # noqa: F401
    except ImportError as e:
        raise common.PeerError(
            "JAX is not installed for %s (Python %s): %s. Debian has no python3-jax "
            "package; run this peer where JAX is installed (bench/peers/README.md)"
            % (sys.executable, sys.version.split()[0], e))
    return jax


def make_optimizer(jax, spec):
    """(init(params) -> state, update(params, grads, state) -> (params, state), name)."""
    jnp = jax.numpy
    tree = jax.tree_util.tree_map
    try:
        import optax
    except ImportError:
        optax = None
    if optax is not None:
        if spec["kind"] == "sgd":
            tx = optax.chain(optax.add_decayed_weights(spec["weight_decay"]),
                             optax.sgd(spec["lr"], momentum=spec["momentum"]))
        else:
            tx = optax.adamw(spec["lr"], b1=spec["beta1"], b2=spec["beta2"], eps=spec["epsilon"],
                             weight_decay=spec["weight_decay"])

        def update(params, grads, state):
            updates, state = tx.update(grads, state, params)
            return optax.apply_updates(params, updates), state
        return tx.init, update, "optax %s" % getattr(optax, "__version__", "?")

    if spec["kind"] == "sgd":
        lr, mom, wd = spec["lr"], spec["momentum"], spec["weight_decay"]

        def init(params):
            return tree(jnp.zeros_like, params)

        def update(params, grads, buf):
            buf = tree(lambda b, g, p: mom * b + g + wd * p, buf, grads, params)
            return tree(lambda p, b: p - lr * b, params, buf), buf
        return init, update, "hand-written SGD (torch.optim.SGD's update)"

    lr, b1, b2, eps, wd = (spec["lr"], spec["beta1"], spec["beta2"], spec["epsilon"],
                           spec["weight_decay"])

    def init(params):
        return (jnp.zeros((), jnp.int32), tree(jnp.zeros_like, params), tree(jnp.zeros_like, params))

    def update(params, grads, state):
        count, m, v = state
        t = (count + 1).astype(jnp.float32)
        m = tree(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
        v = tree(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
        c1, c2 = 1 - b1 ** t, 1 - b2 ** t
        params = tree(lambda p, m, v: p * (1 - lr * wd) - lr / c1 * m / (jnp.sqrt(v) / jnp.sqrt(c2) + eps),
                      params, m, v)
        return params, (count + 1, m, v)
    return init, update, "hand-written AdamW (torch.optim.AdamW's update)"


def version_of(module):
    try:
        return getattr(__import__(module), "__version__", None)
    except ImportError:
        return None


def block_until_ready(jax, tree):
    for leaf in jax.tree_util.tree_leaves(tree):
        leaf.block_until_ready()


def run(args):
    jax = import_jax()
    import numpy as np
    import jax.numpy as jnp
    import jax_models

    platform = "gpu" if args.device == "cuda" else "cpu"
    try:
        device = jax.devices(platform)[0]
    except RuntimeError as e:
        raise common.PeerError("--device %s: JAX %s has no %s device: %s (devices: %s)"
                               % (args.device, jax.__version__, platform, e,
                                  ", ".join(str(d) for d in jax.devices())))
    amp = args.mode == "xla-amp"
    cdt = jnp.bfloat16 if amp else jnp.float32
    opt_spec = common.optimizer_of(args.model)

    # The synthetic batch, from the seed + 1 (numpy, then moved).
    rng = np.random.default_rng(args.seed + 1)
    host = []
    for _, kind, shape in common.inputs_of(args.model, args.batch):
        if kind == "normal":
            host.append(rng.standard_normal(shape, dtype=np.float32))
        elif kind == "zeros":
            host.append(np.zeros(shape, np.float32))
        else:
            host.append(rng.integers(0, kind, shape).astype(np.int32))
    inputs = [jax.device_put(x, device) for x in host]

    specs = jax_models.specs_of(args.model, [jax.ShapeDtypeStruct(x.shape, x.dtype) for x in host])
    count = sum(int(np.prod(shape)) for kind, shape, _ in specs.values() if kind == "param")
    common.check_parameters(TOOL, args.model, count)
    opt_init, opt_update, opt_impl = make_optimizer(jax, opt_spec)

    @jax.jit
    def initial_state(seed):
        key = jax.random.PRNGKey(seed)
        params, buffers = jax_models.init(specs, jax.random.fold_in(key, 0))
        return params, buffers, opt_init(params), jax.random.fold_in(key, 1)

    loss_fn = functools.partial(jax_models.loss_fn, args.model, cdt)

    def train_step(state, batch):
        params, buffers, opt_state, key = state
        key, sub = jax.random.split(key)
        (loss, buffers), grads = jax.value_and_grad(loss_fn, has_aux=True)(
            params, buffers, batch, sub)
        params, opt_state = opt_update(params, grads, opt_state)
        return (params, buffers, opt_state, key), loss

    # Donating the state lets XLA update parameters in place; the CPU backend
    # does not implement donation (and would warn), so only on CUDA.
    step = jax.jit(train_step, donate_argnums=(0,) if args.device == "cuda" else ())
    def fresh_state():
        with on_device():
            return jax.device_put(initial_state(args.seed), device)

    def on_device():
        return (jax.default_device(device) if hasattr(jax, "default_device")
                else contextlib.nullcontext())

    state = fresh_state()
    with on_device():
        start = time.perf_counter()
        compiled = step.lower(state, inputs).compile()
        compile_ms = 1e3 * (time.perf_counter() - start)
    common.log(TOOL, "compiled the step in %.0f ms" % compile_ms)

    repeats = []
    for repeat in range(args.repeats):
        state = fresh_state()
        block_until_ready(jax, state)
        first = loss = None
        for _ in range(args.warmup):
            state, loss = compiled(state, inputs)
            if first is None:
                first = loss
        block_until_ready(jax, (state, loss))
        start = time.perf_counter()
        for _ in range(args.steps):
            state, loss = compiled(state, inputs)
            if first is None:
                first = loss
        block_until_ready(jax, (state, loss))
        elapsed = time.perf_counter() - start
        repeats.append({"samples_per_sec": args.batch * args.steps / elapsed,
                        "step_ms": 1e3 * elapsed / args.steps,
                        "loss_first": float(first), "loss_last": float(loss)})
        common.log(TOOL, "repeat %d: %.1f samples/s" % (repeat + 1, repeats[-1]["samples_per_sec"]))

    extra = {
        "framework": "jax",
        "framework_version": jax.__version__,
        "jaxlib_version": version_of("jaxlib"),
        "device": getattr(device, "device_kind", str(device)),
        "mode": args.mode,
        "compute_dtype": "bfloat16" if amp else "float32",
        "jax_default_matmul_precision": getattr(jax.config, "jax_default_matmul_precision", None),
        "xla_flags": os.environ.get("XLA_FLAGS"),
        "optimizer_impl": opt_impl,
        "hyper_parameters": opt_spec,
        "compile_ms": compile_ms,
    }
    stats = device.memory_stats() if hasattr(device, "memory_stats") else None
    if stats and "peak_bytes_in_use" in stats:
        extra["peak_memory_bytes"] = stats["peak_bytes_in_use"]
    result = common.report(
        args, backend="jax-" + args.device, precision="amp" if amp else "fp32",
        fusion=args.mode, optimizer=opt_spec["kind"], parameters=count, threads=None,
        repeat_results=repeats, extra=extra)
    common.write(args, result)
    common.summary(TOOL, result)


def main():
    args = common.parse_args(TOOL, MODES)
    common.main_guard(TOOL, lambda: run(args))


if __name__ == "__main__":
    main()
