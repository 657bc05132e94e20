"""What the PyTorch and JAX peers share: the command line, the models'
hyper-parameters, the methodology's statistics and the dlc-bench/1 report.

This file imports neither torch nor jax, so each peer can say clearly what
is missing before it imports its framework.
"""

import argparse
import datetime
import json
import math
import os
import platform
import re
import subprocess
import sys

SCHEMA = "dlc-bench/1"
HERE = os.path.dirname(os.path.abspath(__file__))
MODELS_DIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "models")

# Trainable elements of each model as dlc counts them (`dlc-bench
# models/X.mlir --compile-only` prints them; test/Bench/peers.test checks the
# small ones against dlc-bench itself). A peer whose model differs refuses to
# time it: a baseline of another architecture is no baseline.
DLC_PARAMETERS = {
    "mlp": 203530,
    "small_convnet": 10138,
    "tiny_transformer": 17376,
    "resnet50": 25557032,
    "vgg16": 138357544,
    "bert_base": 110106428,
    "gpt2": 124439808,
}
MODELS = list(DLC_PARAMETERS)

# Fields of the dlc-bench/1 schema that come from dlc's compiled plan (counts,
# bytes, FLOPs and what is derived from them: TFLOP/s, the peak behind MFU);
# a peer has no plan, so it writes null, not a made-up zero.
PLAN_FIELDS = ["kernels_per_step", "device_launches", "launches_per_step",
               "memory_bytes_per_step", "fused_groups",
               "kernels_by_kind", "achieved_tflops", "peak_tflops", "mfu", "peak_name",
               "forward_macs_per_sample", "train_flops_per_step",
               "peak_arena_bytes", "total_buffer_bytes",
               "live_bytes_lower_bound", "padding_bytes"]


class PeerError(Exception):
    """A refusal or failure, printed as `<tool>: error: <message>`."""


def optimizer_of(model, models_dir=MODELS_DIR):
    """The train.optimizer attribute of models/<model>.mlir as a dict, so the
    peers train with exactly the hyper-parameters dlc reads."""
    path = os.path.join(models_dir, model + ".mlir")
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise PeerError("cannot read %s for the optimizer's hyper-parameters: %s"
                        % (path, e.strerror))
    m = re.search(r"train\.optimizer\s*=\s*\{([^}]*)\}", text)
    if not m:
        raise PeerError("%s has no train.optimizer attribute" % path)
    opt = {}
    for key, value in re.findall(r'(\w+)\s*=\s*("[^"]*"|[-+0-9.eE]+)', m.group(1)):
        opt[key] = value.strip('"') if value.startswith('"') else float(value)
    if opt.get("kind") not in ("sgd", "adamw"):
        raise PeerError("%s: optimizer kind %r is neither sgd nor adamw"
                        % (path, opt.get("kind")))
    defaults = ({"momentum": 0.0, "weight_decay": 0.0} if opt["kind"] == "sgd" else
                {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8, "weight_decay": 0.01})
    for key, value in defaults.items():
        opt.setdefault(key, value)
    if "lr" not in opt:
        raise PeerError("%s: train.optimizer has no lr" % path)
    return opt


def parse_args(tool, modes, argv=None):
    p = argparse.ArgumentParser(
        prog=tool,
        description="Times the training step of one of dlc's models in a peer "
                    "framework, as dlc-bench does, and writes dlc-bench's JSON "
                    "report (schema %s)." % SCHEMA)
    p.add_argument("model", choices=MODELS)
    p.add_argument("--batch", type=int, default=None,
                   help="samples per step (default: the model's benchmark batch)")
    p.add_argument("--mode", choices=modes, default=modes[0])
    p.add_argument("--warmup", type=int, default=20, help="untimed steps per repeat (default 20)")
    p.add_argument("--steps", type=int, default=100, help="timed steps per repeat (default 100)")
    p.add_argument("--repeats", type=int, default=5, help="repeats (default 5)")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cuda")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of parameters (seed) and synthetic data (seed + 1)")
    p.add_argument("-o", "--output", default="-", help="JSON report (default: stdout)")
    args = p.parse_args(argv)
    for name in ("batch", "steps", "repeats"):
        value = getattr(args, name)
        if value is not None and value < 1:
            p.error("--%s must be at least 1, got %d" % (name, value))
    if args.warmup < 0:
        p.error("--warmup must be at least 0, got %d" % args.warmup)
    if args.batch is None:
        args.batch = DEFAULT_BATCH[args.model]
    return args


# The default benchmark batch each model file states.
DEFAULT_BATCH = {"mlp": 64, "small_convnet": 32, "tiny_transformer": 8,
                 "resnet50": 256, "vgg16": 64, "bert_base": 32, "gpt2": 8}


def inputs_of(model, batch):
    """The model file's inputs and labels in order: (name, kind, shape) with
    kind "normal" (N(0, 1) floats), "zeros" (floats), or an int n (integers
    uniform in [0, n)). dlc-bench draws the same kinds, except that it fills
    BERT's additive attention mask from N(0, 1) too; zeros (no padding) cost
    the same and mean something."""
    b = batch
    return {
        "mlp": [("x", "normal", (b, 784)), ("labels", 10, (b,))],
        "small_convnet": [("x", "normal", (b, 3, 32, 32)), ("labels", 10, (b,))],
        "tiny_transformer": [("tokens", 64, (b, 16)), ("labels", 64, (b, 16))],
        "resnet50": [("x", "normal", (b, 3, 224, 224)), ("labels", 1000, (b,))],
        "vgg16": [("x", "normal", (b, 3, 224, 224)), ("labels", 1000, (b,))],
        "bert_base": [("input_ids", 30522, (b, 128)), ("token_type_ids", 2, (b, 128)),
                      ("attention_mask", "zeros", (b, 1, 1, 128)),
                      ("masked_lm_labels", 30522, (b, 128)), ("next_sentence_label", 2, (b,))],
        "gpt2": [("input_ids", 50257, (b, 1024)), ("labels", 50257, (b, 1024))],
    }[model]


# Classes of each model's (first) loss: at initialization the loss is close
# to ln(classes), since the logits start near zero.
CLASSES = {"mlp": 10, "small_convnet": 10, "tiny_transformer": 64, "resnet50": 1000,
           "vgg16": 1000, "bert_base": 30522, "gpt2": 50257}


def spread(values):
    """Median (mean of the middle two for an even count, as dlc-bench), min, max."""
    v = sorted(values)
    n = len(v)
    median = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    return {"median": median, "min": v[0], "max": v[-1]}


# dlc-bench's bootstrap (bench/run/Stats.h), draw for draw, so that a peer's
# interval is computed exactly as dlc's: percentile bootstrap of the median,
# SplitMix64 draws from a fixed seed.
CONFIDENCE_LEVEL = 0.95
BOOTSTRAP_RESAMPLES = 10000
BOOTSTRAP_SEED = 20
_MASK = (1 << 64) - 1


def _splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & _MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return state, z ^ (z >> 31)


def _median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def bootstrap_median(values, level=CONFIDENCE_LEVEL):
    """{"low", "high", "level"}: the median's percentile-bootstrap interval."""
    median = _median(values)
    if len(values) < 2:
        return {"low": median, "high": median, "level": level}
    state, n, medians = BOOTSTRAP_SEED, len(values), []
    for _ in range(BOOTSTRAP_RESAMPLES):
        resample = []
        for _ in range(n):
            state, draw = _splitmix64(state)
            resample.append(values[(draw * n) >> 64])
        medians.append(_median(resample))
    medians.sort()

    def quantile(q):
        at = q * (len(medians) - 1)
        below = int(math.floor(at))
        above = min(below + 1, len(medians) - 1)
        return medians[below] + (at - below) * (medians[above] - medians[below])
    return {"low": quantile((1 - level) / 2), "high": quantile((1 + level) / 2),
            "level": level}


def statistics(level=CONFIDENCE_LEVEL):
    """The methodology line of dlc-bench's intervals (Stats.cpp, intervalMethod)."""
    return ("%g%% confidence intervals: percentile bootstrap of the median over the "
            "repeats' samples/s (%d resamples, seed %d); a speed-up is called only where "
            "the bootstrap interval of its ratio of medians excludes 1, else n.s. (no "
            "significant difference)" % (round(level * 1000) / 10, BOOTSTRAP_RESAMPLES,
                                         BOOTSTRAP_SEED))


def finite(x):
    """A JSON number, or null for NaN / inf (a diverged loss is data)."""
    return x if x is not None and math.isfinite(x) else None


def check_parameters(tool, model, count):
    expected = DLC_PARAMETERS[model]
    if count != expected:
        raise PeerError("%s has %d parameters here but %d in dlc (models/%s.mlir): "
                        "the peer's model is not dlc's" % (model, count, expected, model))
    log(tool, "%s: %d parameters, as dlc's" % (model, count))


def log(tool, message):
    print("%s: %s" % (tool, message), file=sys.stderr, flush=True)


def report(args, *, backend, precision, fusion, optimizer, parameters, threads,
           repeat_results, extra, layout=None):
    """One dlc-bench/1 result object. repeat_results: dicts with
    samples_per_sec, step_ms, loss_first, loss_last. layout: NCHW or NHWC
    as dlc reports it, None where the framework picks its own (XLA)."""
    sps = spread([r["samples_per_sec"] for r in repeat_results])
    ms = spread([r["step_ms"] for r in repeat_results])
    first = repeat_results[0]
    r = {
        "schema": SCHEMA,
        "model": args.model,
        "backend": backend,
        "batch": args.batch,
        "precision": precision,
        "fusion": fusion,
        "gpus": 1,
        "threads": threads,
        "optimizer": optimizer,
        "layout": layout,
        "seed": args.seed,
        "warmup_steps": args.warmup,
        "timed_steps": args.steps,
        "repeats": args.repeats,
        "samples_per_sec": sps,
        "step_ms": ms,
        "samples_per_sec_ci": bootstrap_median([r["samples_per_sec"] for r in repeat_results]),
        "step_ms_ci": bootstrap_median([r["step_ms"] for r in repeat_results]),
        "statistics": statistics(),
        # One configuration per process: its repeats in a row. The peers do
        # not sample the host's load (dlc-bench's HostLoad.h).
        "timing_order": "consecutive",
        "host_load_percent": None,
        "host_load_varied": False,
        "loss": {"first": finite(first["loss_first"]), "last": finite(first["loss_last"])},
        # As dlc's report: false when any repeat's loss was NaN or infinite.
        "loss_finite": all(finite(x[k]) is not None for x in repeat_results
                           for k in ("loss_first", "loss_last")),
    }
    for name in PLAN_FIELDS:
        r[name] = None
    # One process on one device: no gradient is all-reduced (a fact, not a
    # plan's count).
    r["all_reduces_per_step"] = 0
    r["all_reduce_bytes_per_step"] = 0
    r["all_reduce_overlap"] = False
    r["all_reduce_dtype"] = None
    # The peers do not measure their host's CPU time.
    r["host_cpu_utilization_percent"] = None
    # dlc's fast CPU backend's own facts (what ran where, what compiling
    # its host kernels cost): a peer has none.
    r["cpu_backend"] = None
    r["host_compile_seconds"] = None
    r["parameters"] = parameters
    r["compile_ms"] = extra.pop("compile_ms", None)
    r["repeat_results"] = [
        {"samples_per_sec": x["samples_per_sec"], "step_ms": x["step_ms"],
         "loss_first": finite(x["loss_first"]), "loss_last": finite(x["loss_last"]),
         "host_load_percent": None}
        for x in repeat_results]
    # What a reader needs to trust or reproduce a peer's figure.
    peer = {"host": platform.node(), "python": platform.python_version(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "command": " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:])}
    peer.update(extra)
    r["peer"] = peer
    r.update(provenance())
    return r


def provenance():
    """The fields every dlc-bench report carries about what produced it:
    the revision of this checkout (the peer scripts are dlc's), the date,
    the host's CPU and cores, the command line."""
    revision = None
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        head = subprocess.run(["git", "-C", here, "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True)
        if head.returncode == 0:
            revision = head.stdout.strip()
            dirty = subprocess.run(["git", "-C", here, "diff", "--quiet", "HEAD", "--"])
            if dirty.returncode != 0:
                revision += "-dirty"
    except OSError:
        pass
    cpu = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "dlc_revision": revision,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "host": {"cpu": cpu, "cores": os.cpu_count()},
        "command": " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:]),
    }


def write(args, result):
    text = json.dumps(result, indent=2) + "\n"
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)


def summary(tool, result):
    s = result["samples_per_sec"]
    log(tool, "%s %s %s %s batch %d: %.1f samples/s (min %.1f, max %.1f) over %d repeats "
        "of %d steps; loss %s -> %s"
        % (result["model"], result["backend"], result["precision"], result["fusion"],
           result["batch"], s["median"], s["min"], s["max"], result["repeats"],
           result["timed_steps"], result["loss"]["first"], result["loss"]["last"]))


def main_guard(tool, body):
    """Runs body(); a PeerError becomes one clear line and exit status 1."""
    try:
        body()
    except PeerError as e:
        print("%s: error: %s" % (tool, e), file=sys.stderr)
        sys.exit(1)
