//===- Passes.td - train -> train passes --------------------*- tablegen -*-===//

#ifndef DLC_TRANSFORMS_PASSES_TD
#define DLC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def SpecializeBatchPass : Pass<"dlc-specialize-batch", "::mlir::ModuleOp"> {
  let summary = "gives the dynamic batch dimension a size and re-infers every shape";
  let description = [{
    Model files keep the batch dimension of their inputs and labels dynamic
    (`?`). This pass replaces it with `batch-size` in the signature of every
    function, then re-infers the result type of every op in order, so each
    shape downstream becomes static. Shape errors that only show with a
    concrete batch (a reshape whose element count does not divide) are
    reported here, on the op. A `train.expand`, whose shape names the
    batch, becomes the `train.broadcast_to` of its now static shape.

    Before, with `--dlc-specialize-batch=batch-size=8`:

    ```mlir
    func.func @forward(%x: tensor<?x16xf32> {train.input}, ...) -> tensor<f32> {
      %h = train.linear %x, %w : tensor<?x16xf32>, tensor<4x16xf32>
    ```

    After:

    ```mlir
    func.func @forward(%x: tensor<8x16xf32> {train.input}, ...) -> tensor<f32> {
      %h = train.linear %x, %w : tensor<8x16xf32>, tensor<4x16xf32>
    ```

    Every op in a specialized function must implement InferTypeOpInterface
    (or be `func.return`); any other op is an error, since its result types
    could go stale.
  }];
  let options = [
    Option<"batchSize", "batch-size", "int64_t", /*default=*/"0",
           "the batch size to substitute for the dynamic batch dimension">,
  ];
  let statistics = [
    Statistic<"numSpecializedArgs", "specialized-args",
              "Number of function arguments whose batch dimension was set">,
    Statistic<"numReinferredOps", "reinferred-ops",
              "Number of ops whose result types were re-inferred">,
  ];
  let dependentDialects = ["::mlir::dlc::train::TrainDialect"];
}

def AutodiffPass : Pass<"dlc-autodiff", "::mlir::ModuleOp"> {
  let summary = "derives @train_step (loss, gradients, optimizer update) from @forward";
  let description = [{
    Clones `@forward` into `@train_step`, then walks its ops in reverse and
    asks each for the gradients of its operands (DifferentiableOpInterface),
    summing the gradients of values used more than once (a residual add,
    tied embeddings). It then applies the optimizer to every `train.param`
    argument, adding the optimizer state (momentum buffers, Adam moments) as
    `train.optimizer_state` arguments, and returns the loss followed by the
    next value of every parameter, batch-norm running statistic and
    optimizer state, each result marked `train.update_of = <argument>`.
    Shapes must be static: run `dlc-specialize-batch` first.

    Before:

    ```mlir
    func.func @forward(%x: tensor<4x3xf32> {train.input}, %y: tensor<4xi64> {train.label},
                       %w: tensor<2x3xf32> {train.param = {init = "zeros"}}) -> tensor<f32> {
      %logits = train.linear %x, %w : tensor<4x3xf32>, tensor<2x3xf32>
      %loss = train.softmax_cross_entropy %logits, %y : tensor<4x2xf32>, tensor<4xi64>
      return %loss : tensor<f32>
    }
    ```

    After (with `optimizer=sgd`), beside the unchanged `@forward`:

    ```mlir
    func.func @train_step(%x: ..., %y: ..., %w: ...,
        %w_buf: tensor<2x3xf32> {train.optimizer_state = {init = "zeros"}})
        -> (tensor<f32>, tensor<2x3xf32> {train.update_of = 2 : i64},
            tensor<2x3xf32> {train.update_of = 3 : i64}) {
      %logits = train.linear %x, %w : ...
      %loss = train.softmax_cross_entropy %logits, %y : ...
      %one = train.constant dense<1.000000e+00> : tensor<f32>
      %dlogits = train.softmax_cross_entropy_backward %one, %logits, %y : ...
      %dx = train.matmul %dlogits, %w : ...
      ...
      %dw = train.matmul %dy2, %x2 {transpose_lhs = true} : ...
      %w2, %buf2 = train.sgd_update %w, %dw, %w_buf {lr = ...} : ...
      return %loss, %w2, %buf2 : ...
    }
    ```
  }];
  let options = [
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"\"",
           "sgd or adamw; empty takes the model's train.optimizer">,
    Option<"learningRate", "lr", "double",
           /*default=*/"std::numeric_limits<double>::quiet_NaN()",
           "learning rate (>= 0); absent takes the model's">,
  ];
  let statistics = [
    Statistic<"numBackwardOps", "backward-ops", "Number of ops emitted for the backward pass">,
    Statistic<"numParams", "params", "Number of parameters given an update">,
    Statistic<"numAccumulations", "accumulations",
              "Number of gradient sums for values used more than once">,
  ];
  let dependentDialects = ["::mlir::dlc::train::TrainDialect"];
}

def FuseElementwiseActivationPass
    : Pass<"dlc-fuse-elementwise-activation", "::mlir::ModuleOp"> {
  let summary = "fuses an element-wise add or mul with an activation, as PaddlePaddle";
  let description = [{
    PaddlePaddle's `fuse_elewise_add_act_ops` build strategy: an add or mul
    and a relu / tanh / sigmoid / gelu / scale become one `train.fused`
    group of kind `elewise_act`, in both orders, forward and backward (an
    activation gradient fed by a gradient sum, a gradient sum of an
    activation gradient). A pair is fused only when the inner op's result
    has no other reader; `explain` reports every refused pair and why.

    Before:

    ```mlir
    %s = train.add %x, %y : tensor<8x16xf32>, tensor<8x16xf32>
    %r = train.relu %s : tensor<8x16xf32>
    ```

    After:

    ```mlir
    %r = train.fused "elewise_act" (%x, %y) {strategy = "paddle"}
        : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32> {
    ^bb0(%a: tensor<8x16xf32>, %b: tensor<8x16xf32>):
      %s = train.add %a, %b : tensor<8x16xf32>, tensor<8x16xf32>
      %r = train.relu %s : tensor<8x16xf32>
      train.yield %r : tensor<8x16xf32>
    }
    ```
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "emit a remark for every candidate pair that was not fused, with the reason">,
  ];
  let statistics = [
    Statistic<"numFused", "fused-groups", "Number of elewise_act groups formed">,
  ];
  let dependentDialects = ["::mlir::dlc::train::TrainDialect"];
}

def FuseBatchNormActivationPass
    : Pass<"dlc-fuse-batch-norm-activation", "::mlir::ModuleOp"> {
  let summary = "fuses batch norm with relu and with add + relu, forward and backward, as PaddlePaddle";
  let description = [{
    PaddlePaddle's `fuse_bn_act_ops` / `fuse_bn_add_act_ops` (cuDNN's fused
    batch-norm modes): `relu(batch_norm(x))` becomes a `bn_act` group,
    `relu(batch_norm(x) + z)` a `bn_add_act` group, and `relu_backward`
    feeding `batch_norm_backward` a `bn_act_grad` group (`bn_add_act_grad`
    when the relu gradient also flows to a residual shortcut, which the
    group then writes out). As in PaddlePaddle, only FP16 NHWC training
    batch norm whose output has one reader is fused; `relax-gate` lifts the
    precision and layout condition for study. `explain` reports every
    refused candidate and why.

    Before (with relax-gate=true):

    ```mlir
    %y, %m, %v = train.batch_norm %x, %g, %b, %rm, %rv : ...
    %r = train.relu %y : tensor<8x16x4x4xf32>
    ```

    After:

    ```mlir
    %f:3 = train.fused "bn_act" (%x, %g, %b, %rm, %rv) {strategy = "paddle"} : ... {
    ^bb0(...):
      %y, %m, %v = train.batch_norm ...
      %r = train.relu %y : ...
      train.yield %m, %v, %r : ...
    }
    ```
  }];
  let options = [
    Option<"relaxGate", "relax-gate", "bool", /*default=*/"false",
           "fuse whatever the precision and layout (PaddlePaddle: FP16 NHWC only)">,
    ListOption<"disabled", "disable", "std::string",
               "fusion kinds not to form, for ablations: bn-act (bn_act and "
               "bn_act_grad), bn-add-act (bn_add_act and bn_add_act_grad)">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "emit a remark for every candidate that was not fused, with the reason">,
  ];
  let statistics = [
    Statistic<"numFused", "fused-groups", "Number of batch-norm groups formed">,
  ];
  let dependentDialects = ["::mlir::dlc::train::TrainDialect"];
}

def ConvertLayoutPass : Pass<"dlc-convert-layout", "::mlir::ModuleOp"> {
  let summary = "runs convolutions, batch norm, pooling and bilinear resize in NHWC (or NCHW), with the fewest transposes";
  let description = [{
    Layout assignment, as XLA's and TensorFlow's layout optimizers do it.
    First, in the training step (the function whose results update its
    arguments), each convolution filter and its optimizer state are stored
    in the target layout (OHWI for NHWC), as PyTorch's channels_last model
    keeps them: the argument's `storage` entry records the permutation for
    the runtime, which initializes, reads and dumps it in the declared
    order. Then every `conv2d`, `conv2d_backward_data`, `conv2d_backward_filter`,
    `batch_norm`, `batch_norm_backward`, `max_pool2d`, `avg_pool2d`, their
    gradients, `resize_bilinear` and `resize_bilinear_backward` on 4-d data whose `layout` is not
    the target is rewritten to the target layout between transposes (a
    filter's OIHW <-> OHWI is the same permutation as NCHW <-> NHWC). Each
    rewrite keeps the step's meaning on its own. The transposes then sink
    through layout-agnostic element-wise ops (activations and their
    gradients, add / sub / mul / div of same-shaped operands, scale,
    narrowing casts) when every operand is transposed alike, and inverse
    pairs cancel; ops with an axis (concat, slice, reductions, softmax
    cross-entropy) take the transpose in by renaming the axis; and an
    optimizer update (element-wise) carries the
    stored filter's transposes to the return, where they cancel too. What
    remains are the transposes at the layout's edges: the input image,
    the filters of @forward, and ops without an
    NHWC form (global average pooling, the flatten before the classifier). Dropout is not crossed: its mask is a function of the
    element's index. Last, a transpose that keeps its non-unit dimensions
    in order (a pooled [N, C, 1, 1]) becomes a reshape: a view, no kernel.
    Run after dlc-autodiff (and the precision passes) and
    before fusion, which then fuses the transposes like any data movement.

    Before:

    ```mlir
    %y = train.conv2d %x, %w : tensor<8x16x32x32xf16>, tensor<32x16x3x3xf16>
    %r = train.relu %y : tensor<8x32x32x32xf16>
    %z = train.conv2d %r, %w2 : tensor<8x32x32x32xf16>, tensor<32x32x3x3xf16>
    ```

    After (`layout=NHWC`):

    ```mlir
    %xt = train.transpose %x {permutation = array<i64: 0, 2, 3, 1>} : ...
    %wt = train.transpose %w {permutation = array<i64: 0, 2, 3, 1>} : ...
    %y = train.conv2d %xt, %wt {layout = "NHWC"} : tensor<8x32x32x16xf16>, tensor<32x3x3x16xf16>
    %r = train.relu %y : tensor<8x32x32x32xf16>
    %z = train.conv2d %r, %w2t {layout = "NHWC"} : ...
    %zt = train.transpose %z {permutation = array<i64: 0, 3, 1, 2>} : ...
    ```
  }];
  let options = [
    Option<"layout", "layout", "std::string", /*default=*/"\"NHWC\"",
           "the layout to run convolutions and batch norm in: NHWC or NCHW">,
  ];
  let statistics = [
    Statistic<"numConverted", "converted-ops", "Number of ops rewritten to the target layout">,
    Statistic<"numTransposes", "transposes", "Number of transposes left after propagation">,
    Statistic<"numStoredFilters", "stored-filters", "Number of convolution filters stored in the target layout">,
  ];
  let dependentDialects = ["::mlir::dlc::train::TrainDialect"];
}

def FuseOptimizerUpdatesPass : Pass<"dlc-fuse-optimizer-updates", "::mlir::ModuleOp"> {
  let summary = "runs every parameter's optimizer update as one kernel (XLA's horizontal fusion)";
  let description = [{
    Gathers the `train.sgd_update` / `train.adamw_update` ops of a block into
    one `train.fused` group of kind `optimizer_horizontal` (strategy `xla`),
    placed where the last update was. The updates are independent, so the
    group is one launch instead of one per parameter.

    Before:

    ```mlir
    %p2, %b2 = train.sgd_update %p, %g, %b {lr = ...} : ...
    %q2, %c2 = train.sgd_update %q, %h, %c {lr = ...} : ...
    ```

    After:

    ```mlir
    %r:4 = train.fused "optimizer_horizontal" (%p, %g, %b, %q, %h, %c) {strategy = "xla"} : ... {
    ^bb0(...):
      %p2, %b2 = train.sgd_update ...
      %q2, %c2 = train.sgd_update ...
      train.yield %p2, %b2, %q2, %c2 : ...
    }
    ```
  }];
  let options = [
    Option<"strategy", "strategy", "std::string", /*default=*/"\"xla\"",
           "the strategy the groups are credited to: xla, or paddle (PaddlePaddle's "
           "BuildStrategy.fuse_all_optimizer_ops does the same)">,
    Option<"fuseGradientCasts", "fuse-gradient-casts", "bool", /*default=*/"true",
           "also run each gradient's cast to its master parameter's type (mixed "
           "precision) inside the group, as XLA fuses a convert into its consumer">,
  ];
  let statistics = [
    Statistic<"numGradientCasts", "gradient-casts", "Number of gradient casts moved into groups">,
    Statistic<"numGroups", "groups", "Number of horizontal groups formed">,
    Statistic<"numUpdates", "updates", "Number of updates moved into groups">,
  ];
  let dependentDialects = ["::mlir::dlc::train::TrainDialect"];
}

def FuseGemmEpiloguePass : Pass<"dlc-fuse-gemm-epilogue", "::mlir::ModuleOp"> {
  let summary = "fuses bias and activation into GEMM and convolution epilogues (cuBLASLt, cuDNN)";
  let description = [{
    The library-call half of the `xla` strategy: a `train.linear` (with its
    bias) followed by relu or gelu becomes a `gemm_bias_act` group
    (cuBLASLt's RELU_BIAS / GELU_AUX_BIAS epilogues; the pre-activation is
    written out when gelu's gradient reads it, as the AUX output is); a
    biased `train.conv2d` followed by relu becomes `conv_bias_act` (cuDNN's
    fused convolution-bias-activation); and in the backward pass a
    `train.matmul` feeding relu_backward / gelu_backward, with the
    `sum_to_shape` that reduces the result to the bias gradient, becomes
    `gemm_dact_bgrad` (DRELU_BGRAD / DGELU_BGRAD). The bias gradient is
    scheduled right after the activation gradient so the group can run
    before the gradient's other readers.

    Before:

    ```mlir
    %h = train.linear %x, %w, %b : tensor<8x16xf32>, tensor<32x16xf32>, tensor<32xf32>
    %a = train.gelu %h : tensor<8x32xf32>
    ```

    After (the pre-activation is also returned for gelu_backward):

    ```mlir
    %f:2 = train.fused "gemm_bias_act" (%x, %w, %b) {strategy = "xla"} : ... {
    ^bb0(%0: tensor<8x16xf32>, %1: tensor<32x16xf32>, %2: tensor<32xf32>):
      %h = train.linear %0, %1, %2 : ...
      %a = train.gelu %h : tensor<8x32xf32>
      train.yield %h, %a : tensor<8x32xf32>, tensor<8x32xf32>
    }
    ```
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "emit a remark for every candidate that was not fused, with the reason">,
  ];
  let statistics = [
    Statistic<"numGroups", "fused-groups", "Number of epilogue groups formed">,
  ];
  let dependentDialects = ["::mlir::dlc::train::TrainDialect"];
}

def FuseProducerConsumerPass : Pass<"dlc-fuse-producer-consumer", "::mlir::ModuleOp"> {
  let summary = "greedy producer-consumer fusion of element-wise ops into loops and reductions (XLA)";
  let description = [{
    XLA's instruction fusion over the whole training step, forward and
    backward. Walking each block from its end, every element-wise,
    reduction or normalization op (FusionUtils.h `classifyForFusion`)
    pulls the producers of its operands into its group while
    `canFuseIntoGroup` allows: element-wise producers always, a softmax /
    layer norm / batch norm (or gradient) when the group does not reduce
    yet, never a reduction (reductions end groups). A producer whose result
    is also read outside the group stays fused and is written out by the
    group (multi-output fusion). Groups without a reduction get kind `loop`,
    groups with one `input`, as XLA names them.

    Before:

    ```mlir
    %s = train.add %x, %y : tensor<8x16xf32>, tensor<8x16xf32>
    %d = train.dropout %s {rate = 1.0e-01 : f64, seed = 3 : i64} : tensor<8x16xf32>
    %n = train.layer_norm %d, %g, %b {epsilon = 1.0e-05 : f64} : ...
    ```

    After:

    ```mlir
    %n = train.fused "input" (%x, %y, %g, %b) {strategy = "xla"} : ... {
    ^bb0(...):
      %s = train.add ...
      %d = train.dropout ...
      %n = train.layer_norm ...
      train.yield %n : tensor<8x16xf32>
    }
    ```
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "emit a remark for every fusible producer that was not fused, with the reason">,
  ];
  let statistics = [
    Statistic<"numGroups", "fused-groups", "Number of loop and input groups formed">,
    Statistic<"numFusedOps", "fused-ops", "Number of ops moved into groups">,
  ];
  let dependentDialects = ["::mlir::dlc::train::TrainDialect"];
}

def FuseOpsPass : Pass<"dlc-fuse-ops", "::mlir::ModuleOp"> {
  let summary = "TVM Relay's FuseOps: op patterns, a post-dominator tree, fusion in phases";
  let description = [{
    Relay's operator fusion (src/relay/transforms/fuse_ops.cc) over the
    whole training step. Each op gets Relay's pattern from its op class
    (element-wise, broadcast, injective, comm-reduce,
    out-element-wise-fusable, opaque: FusionUtils.h `tvmOpPattern`). On the
    post-dominator tree of each block, an op fuses with every op on the
    paths to its immediate post-dominator when those paths allow it
    (`tvmMayFuseIntoPostDominator`, `tvmPathAllows`): in phase 0 a
    contraction takes an element-wise epilogue and element-wise ops fuse
    into injective or reduction post-dominators; in phase 1 injective ops
    fuse too. A group holds at most `max-depth` ops (1 turns fusion off).
    Groups with a contraction get kind `output`, with a reduction `input`,
    the others `loop`. A value the backward pass reads again has no
    post-dominator short of the step's end, so its producer fuses into
    nothing: TVM's rule, and why it fuses less in training.

    Before:

    ```mlir
    %c = train.conv2d %x, %w {...} : ...
    %b = train.add %c, %bias : tensor<8x16x4x4xf32>, tensor<1x16x1x1xf32>
    %r = train.relu %b : tensor<8x16x4x4xf32>
    %s = train.reduce_sum %r {axes = array<i64: 1>} : tensor<8x16x4x4xf32>
    ```

    After:

    ```mlir
    %r = train.fused "output" (%x, %w, %bias) {strategy = "tvm"} : ... {
      %c = train.conv2d ...
      %b = train.add ...
      %r = train.relu ...
      train.yield %r
    }
    %s = train.reduce_sum %r ...
    ```
  }];
  let options = [
    Option<"maxDepth", "max-depth", "int64_t", /*default=*/"256",
           "the most ops a group holds (Relay's max_fuse_depth; 1 turns fusion off)">,
    Option<"fuseEpilogues", "fuse-epilogues", "bool", /*default=*/"true",
           "let contractions take their element-wise epilogues (phase 0)">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "emit a remark for every op that did not fuse into its post-dominator, with the reason">,
  ];
  let statistics = [
    Statistic<"numGroups", "fused-groups", "Number of groups formed">,
    Statistic<"numFusedOps", "fused-ops", "Number of ops moved into groups">,
  ];
  let dependentDialects = ["::mlir::dlc::train::TrainDialect"];
}

def FuseNodesPass : Pass<"dlc-fuse-nodes", "::mlir::ModuleOp"> {
  let summary = "Inductor's scheduler fusion: scored pairs that share buffers, fused greedily in rounds";
  let description = [{
    TorchInductor's Scheduler.fuse_nodes (torch/_inductor/scheduler.py)
    over the whole training step. Each op is a scheduler node
    (FusionUtils.h `inductorNodeOf`): pointwise, a reduction of (numel,
    rnumel), a GEMM or convolution template that takes epilogues, or an
    extern kernel. Each round collects the pairs of groups that touch a
    common buffer and that `inductorCanFuse` accepts (no extern node, at
    most one library call per group, so two batch norms never share one,
    templates only first with pointwise epilogues of their size, at most
    `max-fusion-size` ops, equal (numel, rnumel) for two reductions, a
    pointwise group of numel x rnumel elements beside a reduction, a
    consumer reading at the producer's index, no node in between), sorts
    them by Inductor's score (not an epilogue, same reduction-ness, bytes
    shared, proximity) and fuses them best first; up to `rounds` rounds,
    until one fuses nothing. Groups with a template get kind `output`, with
    a reduction `input`, the others `loop`.

    Before:

    ```mlir
    %a = train.relu %x : tensor<4x8xf32>
    %b = train.tanh %x : tensor<4x8xf32>
    %s = train.reduce_sum %b {axes = array<i64: 1>} : tensor<4x8xf32>
    ```

    After (the relu and the reduction share their read of %x):

    ```mlir
    %r:2 = train.fused "input" (%x) {strategy = "inductor"} : ... {
      %a = train.relu ...
      %b = train.tanh ...
      %s = train.reduce_sum ...
      train.yield %a, %s
    }
    ```
  }];
  let options = [
    Option<"maxFusionSize", "max-fusion-size", "int64_t", /*default=*/"64",
           "the most ops a group holds (config.max_fusion_size)">,
    Option<"rounds", "rounds", "int64_t", /*default=*/"10",
           "rounds of pair fusion at most (fuse_nodes' range(10))">,
    Option<"epilogueFusion", "epilogue-fusion", "bool", /*default=*/"true",
           "GEMMs and convolutions are templates that take pointwise epilogues "
           "(config.epilogue_fusion); else extern kernels">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "emit a remark for every candidate pair left unfused at the end, with the reason">,
  ];
  let statistics = [
    Statistic<"numGroups", "fused-groups", "Number of groups formed">,
    Statistic<"numFusedOps", "fused-ops", "Number of ops moved into groups">,
  ];
  let dependentDialects = ["::mlir::dlc::train::TrainDialect"];
}

def FusePriorityPass : Pass<"dlc-fuse-priority", "::mlir::ModuleOp"> {
  let summary = "XLA's priority fusion: producers fused into all their consumers, most time saved first, by dlc's cost model";
  let description = [{
    XLA's PriorityFusion (xla/service/gpu/transforms/priority_fusion.cc)
    over the training step. Each element-wise, reduction or normalization
    op starts as a group of its own. A producer group's priority is the
    time saved by fusing it into ALL its consumers, recomputed in each:

      priority = t(producer) + sum t(consumer) - sum t(consumer + producer)

    where t is dlc's cost model (dlc/runtime/perf/CostModel.h,
    predictSeconds: launch overhead plus the roofline of the group's bytes,
    read from outside once and written once) on the GPU `gpu` of the table
    in dlc/runtime/perf/Gpus.h. The producer of highest priority is fused
    first, one of negative priority never; the priorities of the groups a
    fusion touched (the merged consumers and their producers) are
    recomputed before the next pick. A producer fuses only when every
    consumer may take it (FusionUtils.h, canFuseIntoAllConsumers and
    canFusePriorityPair: no reduction into a reduction, no fusion into a
    reduction's output, a kernel budget of `max-operands` operands and
    outputs, contractions / library calls / collectives / optimizer
    updates never fuse, a random op is never recomputed). Then, with
    `multi-output`, XLA's producer-consumer multi-output fusion: a group
    whose other readers kept it out joins one consumer and is written out
    for them (canFuseMultiOutput), where the cost model says the merged
    group is faster than the two. Groups with a reduction or normalization
    get kind `input`, the rest `loop`.

    Before (priority fusion recomputes the add in both of its readers):

    ```mlir
    %s = train.add %x, %y : tensor<8x16xf32>, tensor<8x16xf32>
    %a = train.relu %s : tensor<8x16xf32>
    %b = train.tanh %s : tensor<8x16xf32>
    ```

    After:

    ```mlir
    %a = train.fused "loop" (%x, %y) {strategy = "xla-priority"} : ... {
      %s = train.add ...
      %a = train.relu %s ...
    }
    %b = train.fused "loop" (%x, %y) {strategy = "xla-priority"} : ... {
      %s = train.add ...
      %b = train.tanh %s ...
    }
    ```
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "emit a remark for every fusible producer left unfused, with the reason">,
    Option<"gpu", "gpu", "std::string", /*default=*/"\"H100-SXM\"",
           "the GPU (dlc/runtime/perf/Gpus.h) whose cost model prices the fusions">,
    Option<"calibration", "calibration", "std::string", /*default=*/"\"\"",
           "a cost-model calibration JSON (bench/calibration/h100.json); empty: CostParams' defaults">,
    Option<"maxOperands", "max-operands", "int64_t", /*default=*/"96",
           "the kernel budget: operands and outputs of a fused group (XLA's kMaxOperandsAndOutputsPerFusion)">,
    Option<"multiOutput", "multi-output", "bool", /*default=*/"true",
           "then XLA's producer-consumer multi-output fusion: a producer joins a consumer and is also written out for its other readers, where the cost model says it pays">,
  ];
  let statistics = [
    Statistic<"numFusions", "fusions", "Number of producers fused into all their consumers">,
    Statistic<"numMultiOutput", "multi-output-fusions", "Number of producers fused into one consumer and written out">,
    Statistic<"numGroups", "fused-groups", "Number of loop and input groups formed">,
    Statistic<"numFusedOps", "fused-ops", "Number of ops in the groups formed">,
  ];
  let dependentDialects = ["::mlir::dlc::train::TrainDialect"];
}

def AutoMixedPrecisionPass : Pass<"dlc-auto-mixed-precision", "::mlir::ModuleOp"> {
  let summary = "casts the forward pass to mixed precision by allow / deny / infer op lists (autocast)";
  let description = [{
    Runs on `@forward` before `dlc-autodiff`, as torch.autocast runs on the
    forward pass: the backward pass then follows each op's precision through
    the gradient rules (the gradient of a `train.cast` is a cast back).
    Every op computes in the type its list gives, with a `train.cast` of an
    operand where it differs (one cast per value and type):

    - allow, half precision: conv2d, matmul, linear;
    - deny, float32: softmax, softmax_cross_entropy, layer_norm,
      reduce_sum / reduce_mean / reduce_max, global_avg_pool;
    - batch_norm: the input keeps its type, the statistics and affine
      parameters stay float32 (cuDNN's mixed-precision batch norm);
    - infer, everything else: the widest float type of its operands.

    `mode=amp-fp16` and `amp-bf16` keep float32 master parameters (cast
    where an allow-list op reads them; their gradients come back float32 to
    the optimizer). `mode=fp16` is pure FP16 as the seed reports measure
    it: parameters are stored in fp16 too, except those only normalizations
    read. Use `dlc-loss-scaling` after autodiff with fp16 (not bf16).

    Before, with `mode=amp-fp16`:

    ```mlir
    %h = train.linear %x, %w, %b : tensor<8x16xf32>, tensor<4x16xf32>, tensor<4xf32>
    %l = train.softmax_cross_entropy %h, %y : tensor<8x4xf32>, tensor<8xi64>
    ```

    After:

    ```mlir
    %xh = train.cast %x to f16 : tensor<8x16xf32>
    %wh = train.cast %w to f16 : tensor<4x16xf32>
    %bh = train.cast %b to f16 : tensor<4xf32>
    %h = train.linear %xh, %wh, %bh : tensor<8x16xf16>, tensor<4x16xf16>, tensor<4xf16>
    %hf = train.cast %h to f32 : tensor<8x4xf16>
    %l = train.softmax_cross_entropy %hf, %y : tensor<8x4xf32>, tensor<8xi64>
    ```
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"amp-fp16\"",
           "amp-fp16 (or amp), amp-bf16, or fp16 (pure, no master weights)">,
  ];
  let statistics = [
    Statistic<"numCasts", "casts", "Number of casts inserted">,
    Statistic<"numHalfParams", "half-params", "Number of parameters stored in fp16 (mode=fp16)">,
  ];
  let dependentDialects = ["::mlir::dlc::train::TrainDialect"];
}

def LossScalingPass : Pass<"dlc-loss-scaling", "::mlir::ModuleOp"> {
  let summary = "dynamic loss scaling: scaled seed, unscaled updates skipped on overflow, scale update";
  let description = [{
    torch.cuda.amp.GradScaler inside the compiled step. The backward pass
    is seeded with the scale S (argument `loss_scale`, persistent state)
    instead of 1; `train.loss_scale_status` checks every parameter gradient
    for inf / NaN and gives [1 / S, overflow]; every optimizer update takes
    it (`unscale(%status)`), unscaling the gradient and leaving its
    parameter and state unchanged on overflow; `train.update_loss_scale`
    halves S after an overflow and doubles it after `growth-interval` good
    steps (counted in `loss_scale.good_steps`). Run after dlc-autodiff.

    Before:

    ```mlir
    %one = train.constant dense<1.0> {train.seed_gradient} : tensor<f32>
    %dl = train.softmax_cross_entropy_backward %one, %h, %y : ...
    ...
    %p2, %b2 = train.sgd_update %p, %g, %b {lr = ...} : ...
    return %loss, %p2, %b2 : ...
    ```

    After:

    ```mlir
    %dl = train.softmax_cross_entropy_backward %scale, %h, %y : ...
    ...
    %status = train.loss_scale_status %scale, %g : tensor<f32>, ...
    %p2, %b2 = train.sgd_update %p, %g, %b unscale(%status : tensor<2xf32>) {lr = ...} : ...
    %s2, %n2 = train.update_loss_scale %scale, %good, %status : ...
    return %loss, %p2, %b2, %s2, %n2 : ...
    ```
  }];
  let options = [
    Option<"initScale", "init-scale", "double", /*default=*/"65536.0",
           "the initial scale (PyTorch's default, 2^16)">,
    Option<"growthInterval", "growth-interval", "int64_t", /*default=*/"2000",
           "good steps before the scale doubles (PyTorch's default)">,
  ];
  let statistics = [
    Statistic<"numUpdates", "unscaled-updates", "Number of optimizer updates given the status">,
  ];
  let dependentDialects = ["::mlir::dlc::train::TrainDialect"];
}

def DataParallelPass : Pass<"dlc-data-parallel", "::mlir::ModuleOp"> {
  let summary = "averages every gradient over the data-parallel ranks, in buckets";
  let description = [{
    Data parallelism as PyTorch's DistributedDataParallel does it: every
    rank runs the same step on its own slice of the global batch, and each
    parameter's gradient is replaced by its mean over the ranks before the
    optimizer (and the loss-scale overflow check) reads it, so every rank
    applies the same update. Gradients are sent in buckets of about
    `bucket-mb` MiB (DDP's `bucket_cap_mb`), filled in the order the backward
    pass finishes them; each bucket's `train.all_reduce` sits right after its
    last gradient is computed, so it can overlap the rest of the backward
    pass. As in DDP, the first bucket is small (1 MiB with the default
    bucket size), so that communication starts early. With `reduce-dtype`
    (DDP's fp16 / bf16 compression hooks) float32 gradients are cast down
    before the all-reduce and their means back up after it. Run after dlc-autodiff and the precision and layout passes (the
    all-reduce reads the gradient the update reads: float32 under AMP, in
    the order the parameter is stored), and before fusion.

    Before, with `--dlc-data-parallel=ranks=4`:

    ```mlir
    %gw = train.matmul %dy, %x {transpose_lhs = true} : ...
    %gb = train.sum_to_shape %dy {shape = array<i64: 10>} : ...
    ...
    %w2, %bw2 = train.sgd_update %w, %gw, %bw {lr = ...} : ...
    %b2, %bb2 = train.sgd_update %b, %gb, %bb {lr = ...} : ...
    ```

    After:

    ```mlir
    %gw = train.matmul %dy, %x {transpose_lhs = true} : ...
    %gb = train.sum_to_shape %dy {shape = array<i64: 10>} : ...
    %gw4, %gb4 = train.all_reduce %gw, %gb {bucket = 0 : i64, ranks = 4 : i64} : ...
    ...
    %w2, %bw2 = train.sgd_update %w, %gw4, %bw {lr = ...} : ...
    %b2, %bb2 = train.sgd_update %b, %gb4, %bb {lr = ...} : ...
    ```
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", /*default=*/"2",
           "data-parallel ranks (GPUs); at least 2">,
    Option<"bucketMb", "bucket-mb", "double", /*default=*/"25.0",
           "MiB of gradients per all-reduce (PyTorch DDP's bucket_cap_mb)">,
    Option<"firstBucketMb", "first-bucket-mb", "double", /*default=*/"0.0",
           "MiB of the first bucket, the last layers' gradients, which the "
           "backward pass finishes first; 0 (default) follows DDP: 1 MiB "
           "with the default bucket-mb, else bucket-mb">,
    Option<"reduceDtype", "reduce-dtype", "std::string", /*default=*/"\"\"",
           "send float32 gradients as f16 or bf16 (DDP's fp16_compress_hook / "
           "bf16_compress_hook: half the bytes, the mean rounded to the "
           "smaller type); empty (default): as they are">,
  ];
  let statistics = [
    Statistic<"numGradients", "gradients", "Number of gradients averaged">,
    Statistic<"numBuckets", "buckets", "Number of all-reduces (buckets)">,
    Statistic<"numSentAsComputed", "sent-as-computed",
              "Gradients sent in reduce-dtype as the backward pass computed them, "
              "without AMP's widening to float32 and a cast back down">,
  ];
  let dependentDialects = ["::mlir::dlc::train::TrainDialect"];
}

def FuseParameterCastsPass : Pass<"dlc-fuse-parameter-casts", "::mlir::ModuleOp"> {
  let summary = "casts every parameter to half precision in one kernel (XLA's horizontal loop fusion)";
  let description = [{
    With float32 master weights, AMP casts each parameter a GEMM or
    convolution reads to half precision at the start of every step, one
    small independent kernel per parameter. This pass puts every cast of a
    function argument in the entry block into one `cast_horizontal` group
    (strategy `xla`), placed where the last of them is; all their readers
    must follow it.

    Before:

    ```mlir
    %wh = train.cast %w to f16 : tensor<16x8xf32>
    %vh = train.cast %v to f16 : tensor<4x16xf32>
    ```

    After:

    ```mlir
    %c:2 = train.fused "cast_horizontal" (%w, %v) {strategy = "xla"} : ... {
    ^bb0(%0: tensor<16x8xf32>, %1: tensor<4x16xf32>):
      %wh = train.cast %0 to f16 : tensor<16x8xf32>
      %vh = train.cast %1 to f16 : tensor<4x16xf32>
      train.yield %wh, %vh : tensor<16x8xf16>, tensor<4x16xf16>
    }
    ```
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "emit a remark when the casts cannot form a group, with the reason">,
  ];
  let statistics = [
    Statistic<"numGroups", "groups", "Number of horizontal cast groups formed">,
    Statistic<"numCasts", "casts", "Number of casts moved into groups">,
  ];
  let dependentDialects = ["::mlir::dlc::train::TrainDialect"];
}

def FuseAttentionPass : Pass<"dlc-fuse-attention", "::mlir::ModuleOp"> {
  let summary = "rewrites matmul -> softmax -> dropout -> matmul into train.attention (flash-style)";
  let description = [{
    The `attention` fusion kind of the `xla` and `xla-priority` strategies
    (XLA's cuDNN fused-MHA rewriter, Inductor's fuse_attention patterns). It
    runs on the model BEFORE dlc-autodiff, so that the gradient rule of
    train.attention, which recomputes the probabilities from the saved
    log-sum-exp, replaces softmax's, which reads the saved [B..., Sq, Sk]
    probabilities. It matches

      matmul(q, k, transpose_rhs) -> [cast to f32] -> softmax(scale, mask?,
      causal?, last axis) -> [dropout] -> [cast back] -> matmul(p, v)

    (the dropout may also follow the cast back) when every intermediate value
    has no other reader, q, k and v have one element type and the same batch
    dimensions, and neither matmul transposes otherwise.

    Before:

    ```mlir
    %s = train.matmul %q, %k {transpose_rhs = true} : tensor<8x2x16x4xf32>, tensor<8x2x16x4xf32>
    %p = train.softmax %s {causal = true, scale = 5.000000e-01 : f32} : tensor<8x2x16x16xf32>
    %d = train.dropout %p {rate = 1.000000e-01 : f32, seed = 2 : i64} : tensor<8x2x16x16xf32>
    %o = train.matmul %d, %v : tensor<8x2x16x16xf32>, tensor<8x2x16x4xf32>
    ```

    After:

    ```mlir
    %o, %lse = train.attention %q, %k, %v {causal = true, dropout_rate = 1.000000e-01 : f32,
        scale = 5.000000e-01 : f32, seed = 2 : i64} : ...
    ```
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "emit a remark on each attention-like pattern left unfused, with the reason">,
  ];
  let statistics = [
    Statistic<"numFused", "attentions", "Number of attention patterns rewritten">,
  ];
  let dependentDialects = ["::mlir::dlc::train::TrainDialect"];
}

#endif // DLC_TRANSFORMS_PASSES_TD
