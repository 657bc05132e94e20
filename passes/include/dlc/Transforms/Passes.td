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
    reported here, on the op.

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
    Option<"learningRate", "lr", "double", /*default=*/"0.0",
           "learning rate; 0 takes the model's">,
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
  let statistics = [
    Statistic<"numGroups", "groups", "Number of horizontal groups formed">,
    Statistic<"numUpdates", "updates", "Number of updates moved into groups">,
  ];
  let dependentDialects = ["::mlir::dlc::train::TrainDialect"];
}

#endif // DLC_TRANSFORMS_PASSES_TD
