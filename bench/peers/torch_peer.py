#!/usr/bin/env python3
"""PyTorch peer of dlc-bench: times one of dlc's models in PyTorch.

  python3 bench/peers/torch_peer.py MODEL --batch N --mode MODE \\
      --warmup W --steps S --repeats R --device cpu|cuda -o out.json

Modes (the report's "fusion"; "precision" is fp32 or amp):
  eager               fp32, NCHW, no compiler
  channels-last-amp   channels-last memory format and automatic mixed
                      precision: float16 autocast with dynamic loss scaling
                      (GradScaler) on CUDA, as NVIDIA's ResNet-50 AMP recipe;
                      bfloat16 autocast on the CPU (float16 autocast is
                      CUDA-only), no loss scaling
  compile             fp32, torch.compile(model) (forward, loss and, through
                      AOTAutograd, backward; the optimizer runs eagerly);
                      PyTorch 2.0 or later
  compile-amp         channels-last-amp under torch.compile
  channels-last-amp-bf16, compile-amp-bf16
                      the same with bfloat16 autocast and no loss scaling
                      (dlc's amp-bf16; GPT-2's precision in issue 23's sweep)

Methodology as dlc-bench's (bench/README.md): per repeat the parameters and
buffers are reset to the seed's initial values and the optimizer state is
fresh (not timed); W warm-up steps run untimed, then S steps between two
clock reads (torch.cuda.synchronize before each read on CUDA); samples/s =
batch x S / elapsed; median, min and max over R repeats. The same synthetic
batch (seed + 1) is used for every step. The report is dlc-bench/1 JSON
with backend "torch-cpu" or "torch-cuda"; fields only a dlc plan has are null.
"""

import contextlib
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

TOOL = "torch_peer"
MODES = ["eager", "channels-last-amp", "compile", "compile-amp", "channels-last-amp-bf16",
         "compile-amp-bf16"]


def import_torch():
    try:
        import torch  # noqa: F401
    except ImportError as e:
        raise common.PeerError("PyTorch is not installed for %s (%s): %s"
                               % (sys.executable, sys.version.split()[0], e))
    return torch


def make_optimizer(torch, model, spec):
    """The model file's optimizer over every parameter, as dlc applies it."""
    params = list(model.parameters())
    if spec["kind"] == "sgd":
        return torch.optim.SGD(params, lr=spec["lr"], momentum=spec["momentum"],
                               weight_decay=spec["weight_decay"])
    return torch.optim.AdamW(params, lr=spec["lr"], betas=(spec["beta1"], spec["beta2"]),
                             eps=spec["epsilon"], weight_decay=spec["weight_decay"])


def run(args):
    torch = import_torch()
    import torch_models

    major = int(torch.__version__.split(".")[0])
    compiled = args.mode.startswith("compile")
    amp = "amp" in args.mode
    bf16 = args.mode.endswith("-bf16")
    if compiled and (major < 2 or not hasattr(torch, "compile")):
        raise common.PeerError(
            "--mode %s needs torch.compile, which PyTorch 2.0 added; this is PyTorch %s "
            "(%s)" % (args.mode, torch.__version__, os.path.dirname(torch.__file__)))
    if compiled and args.warmup < 1:
        raise common.PeerError("--mode %s needs --warmup 1 or more: the first step compiles"
                               % args.mode)
    if args.device == "cuda" and not torch.cuda.is_available():
        raise common.PeerError(
            "--device cuda: no CUDA device (torch.cuda.is_available() is False; PyTorch %s, "
            "built with CUDA %s)" % (torch.__version__, torch.version.cuda))
    device = torch.device(args.device)
    amp_dtype = torch.float16 if args.device == "cuda" and not bf16 else torch.bfloat16
    if args.device == "cuda":
        # cuDNN picks the fastest algorithm per shape, as benchmark scripts do.
        torch.backends.cudnn.benchmark = True
        # fp32 is IEEE fp32 on both sides: dlc runs fp32 without TF32 unless
        # --tf32, and PyTorch's matmuls already do; its convolutions would
        # otherwise use TF32 (torch.backends.cudnn.allow_tf32's default).
        torch.backends.cudnn.allow_tf32 = False

    opt_spec = common.optimizer_of(args.model)
    model = torch_models.build(args.model, args.seed).to(device)
    model.train()
    count = torch_models.parameter_count(model)
    common.check_parameters(TOOL, args.model, count)
    batch = torch_models.make_batch(args.model, args.batch, args.seed + 1, device)
    if amp:
        model = model.to(memory_format=torch.channels_last)
        batch = [t.contiguous(memory_format=torch.channels_last) if t.dim() == 4
                 and t.is_floating_point() and t.shape[1] > 1 else t for t in batch]
    initial = {k: v.detach().clone() for k, v in model.state_dict().items()}
    forward = torch.compile(model) if compiled else model

    def sync():
        if args.device == "cuda":
            torch.cuda.synchronize()

    def autocast():
        if not amp:
            return contextlib.nullcontext()
        return torch.autocast(device_type=args.device, dtype=amp_dtype)

    repeats = []
    first_step_ms = None
    for repeat in range(args.repeats):
        with torch.no_grad():
            model.load_state_dict(initial)
        # Dropout's masks: the same sequence in every repeat, as dlc's
        # counter-based dropout, so every repeat's losses are the same.
        torch.manual_seed(args.seed + 2)
        opt = make_optimizer(torch, model, opt_spec)
        scaler = None
        if amp and amp_dtype == torch.float16:  # torch.amp.GradScaler from 2.3 on
            scaler = (torch.amp.GradScaler("cuda") if hasattr(torch.amp, "GradScaler")
                      else torch.cuda.amp.GradScaler())

        def step():
            opt.zero_grad(set_to_none=True)
            with autocast():
                loss = forward(*batch)
            if scaler is not None:
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
            else:
                loss.backward()
                opt.step()
            return loss

        first = None
        for i in range(args.warmup):
            if repeat == 0 and i == 0:
                sync()
                start = time.perf_counter()
            loss = step()
            if first is None:
                first = loss.detach().float().clone()
            if repeat == 0 and i == 0:
                sync()
                first_step_ms = 1e3 * (time.perf_counter() - start)
        sync()
        start = time.perf_counter()
        for i in range(args.steps):
            loss = step()
            if first is None:
                first = loss.detach().float().clone()
        sync()
        elapsed = time.perf_counter() - start
        repeats.append({"samples_per_sec": args.batch * args.steps / elapsed,
                        "step_ms": 1e3 * elapsed / args.steps,
                        "loss_first": first.item(), "loss_last": loss.detach().float().item()})
        common.log(TOOL, "repeat %d: %.1f samples/s" % (repeat + 1, repeats[-1]["samples_per_sec"]))

    extra = {
        "framework": "torch",
        "framework_version": torch.__version__,
        "device": torch.cuda.get_device_name(device) if args.device == "cuda" else "cpu",
        "mode": args.mode,
        "memory_format": "channels_last" if amp else "contiguous",
        "amp_dtype": str(amp_dtype).replace("torch.", "") if amp else None,
        "loss_scaling": "dynamic (GradScaler)" if amp and amp_dtype == torch.float16 else None,
        "torch_compile": "default mode" if compiled else None,
        # Repeat 1's first warm-up step: with torch.compile, mostly compiling.
        "first_step_ms": first_step_ms if args.warmup else None,
        "attention": torch_models.attention_impl(),
        "optimizer_impl": "torch.optim.%s, defaults"
                          % ("SGD" if opt_spec["kind"] == "sgd" else "AdamW"),
        "hyper_parameters": opt_spec,
    }
    if args.device == "cuda":
        extra.update({
            "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(),
            "cudnn_benchmark": True,
            "tf32_matmul": torch.backends.cuda.matmul.allow_tf32,
            "tf32_cudnn": torch.backends.cudnn.allow_tf32,
            "peak_memory_bytes": torch.cuda.max_memory_allocated(device),
        })
    result = common.report(
        args, backend="torch-" + args.device,
        precision=("amp-bf16" if bf16 else "amp") if amp else "fp32",
        fusion=args.mode, optimizer=opt_spec["kind"], parameters=count,
        threads=torch.get_num_threads(), repeat_results=repeats, extra=extra,
        layout=("NHWC" if amp else "NCHW") if torch_models.has_convolutions(model) else "")
    common.write(args, result)
    common.summary(TOOL, result)


def main():
    args = common.parse_args(TOOL, MODES)
    common.main_guard(TOOL, lambda: run(args))


if __name__ == "__main__":
    main()
