//===- TrainGradOps.td - backward and optimizer ops ---------*- tablegen -*-===//
//
// Ops that autodiff emits: the backward halves of the forward ops, the
// broadcast bookkeeping of gradients, and the optimizer updates. They are
// ops of the dialect like any other, so fusion passes see the whole step.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DIALECT_TRAIN_IR_TRAINGRADOPS_TD
#define DLC_DIALECT_TRAIN_IR_TRAINGRADOPS_TD

//===----------------------------------------------------------------------===//
// Element-wise backward
//===----------------------------------------------------------------------===//

/// dx from dy and the forward input or output (`saved`); same type as dy.
class Train_ActivationBackwardOp<string mnemonic, string savedWhat>
    : Train_Op<mnemonic, [Pure, Train_OpClass<"Elementwise">, Train_Activation,
        InferTypeOpAdaptor]>,
      Train_InferWith<"inferActivationBackwardOp"> {
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$saved);
  let results = (outs Train_FloatTensor:$output);
  let assemblyFormat = "$grad `,` $saved attr-dict `:` type($grad) `,` type($saved)";
  let extraClassDefinition = inferDefinition;
  let summary = "gradient of an activation, from dy and the forward " # savedWhat;
}

def Train_ReluBackwardOp : Train_ActivationBackwardOp<"relu_backward", "output"> {
  let description = [{
    dx = dy where y > 0, else 0, from the forward output y (positive exactly
    where the input is), so the input need not be kept for the backward pass.

    ```mlir
    %dx = train.relu_backward %dy, %y : tensor<8x16xf32>, tensor<8x16xf32>
    ```
  }];
}

def Train_TanhBackwardOp : Train_ActivationBackwardOp<"tanh_backward", "output"> {
  let description = [{
    dx = dy * (1 - y^2), from the forward output y.

    ```mlir
    %dx = train.tanh_backward %dy, %y : tensor<8x16xf32>, tensor<8x16xf32>
    ```
  }];
}

def Train_SigmoidBackwardOp : Train_ActivationBackwardOp<"sigmoid_backward", "output"> {
  let description = [{
    dx = dy * y * (1 - y), from the forward output y.

    ```mlir
    %dx = train.sigmoid_backward %dy, %y : tensor<8x16xf32>, tensor<8x16xf32>
    ```
  }];
}

def Train_SiluBackwardOp : Train_ActivationBackwardOp<"silu_backward", "input"> {
  let description = [{
    dx = dy * s (1 + x (1 - s)) with s = sigmoid(x), from the forward input x.

    ```mlir
    %dx = train.silu_backward %dy, %x : tensor<8x16xf32>, tensor<8x16xf32>
    ```
  }];
}

// PyTorch's CUDA kernels and its scalar CPU loop are the rules followed
// below; its vectorized CPU loop differs at single points (relu6's gradient
// at NaN is 0 there, hardswish's at x = 3 is dy and at NaN NaN).
def Train_Relu6BackwardOp : Train_ActivationBackwardOp<"relu6_backward", "input"> {
  let description = [{
    dx = 0 where x <= 0 or x >= 6, else dy (PyTorch's `hardtanh_backward`:
    zero at both boundaries; a NaN input passes dy, as `relu_backward` does).

    ```mlir
    %dx = train.relu6_backward %dy, %x : tensor<8x16xf32>, tensor<8x16xf32>
    ```
  }];
}

def Train_HardswishBackwardOp : Train_ActivationBackwardOp<"hardswish_backward", "input"> {
  let description = [{
    dx = 0 where x < -3, dy * (x / 3 + 0.5) where -3 <= x <= 3, dy where
    x > 3 (PyTorch's `hardswish_backward`; a NaN input passes dy).

    ```mlir
    %dx = train.hardswish_backward %dy, %x : tensor<8x16xf32>, tensor<8x16xf32>
    ```
  }];
}

def Train_HardsigmoidBackwardOp : Train_ActivationBackwardOp<"hardsigmoid_backward", "input"> {
  let description = [{
    dx = dy * (1/6, rounded to float) where -3 < x < 3, else 0 (PyTorch's
    `hardsigmoid_backward`; zero at both boundaries and at NaN).

    ```mlir
    %dx = train.hardsigmoid_backward %dy, %x : tensor<8x16xf32>, tensor<8x16xf32>
    ```
  }];
}

def Train_GeluBackwardOp : Train_ActivationBackwardOp<"gelu_backward", "input"> {
  let description = [{
    The derivative of `train.gelu` with the same `approximate`, from the
    forward input.

    ```mlir
    %dx = train.gelu_backward %dy, %x {approximate = "tanh"} : tensor<8x16xf32>, tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$saved,
                   DefaultValuedStrAttr<StrAttr, "none">:$approximate);
}

def Train_SumToShapeOp : Train_Op<"sum_to_shape", [Train_OpClass<"Reduction">, Pure, InferTypeOpAdaptor]> {
  let summary = "sums a broadcast gradient back to an operand's shape";
  let description = [{
    The adjoint of NumPy broadcasting: sums over the leading dimensions that
    broadcasting added and over every dimension where `shape` has 1 and the
    input does not.

    ```mlir
    %db = train.sum_to_shape %dy {shape = array<i64: 768>} : tensor<8x128x768xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs Train_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Train_BroadcastToOp : Train_Op<"broadcast_to", [Train_OpClass<"DataMovement">, Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_DifferentiableOpInterface>]> {
  let summary = "broadcasts a tensor to a shape, as NumPy does";
  let description = [{
    The gradient of sums (reductions, `train.global_avg_pool`) and, in a
    model, what `train.expand` becomes once the batch is known; its own
    gradient sums back to the input's shape.

    ```mlir
    %y = train.broadcast_to %x {shape = array<i64: 8, 64, 7, 7>} : tensor<8x64x1x1xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs Train_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

//===----------------------------------------------------------------------===//
// Convolution, normalization, pooling, resizing backward
//===----------------------------------------------------------------------===//

def Train_Conv2dBackwardDataOp : Train_Op<"conv2d_backward_data",
    [Train_OpClass<"Contraction">, Pure, InferTypeOpAdaptor]> {
  let summary = "gradient of a 2-D convolution with respect to its input";
  let description = [{
    The transposed convolution of dy with the filter, to the forward input's
    spatial size `input_shape` (which the stride alone cannot determine).
    Attributes mean what they mean on `train.conv2d`; `input_shape` is in
    the `layout`'s order.

    ```mlir
    %dx = train.conv2d_backward_data %dy, %w {input_shape = array<i64: 8, 3, 32, 32>,
        padding = array<i64: 1, 1>} : tensor<8x16x32x32xf32>, tensor<16x3x3x3xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$filter,
                   DenseI64ArrayAttr:$input_shape,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$stride,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$padding,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilation,
                   DefaultValuedAttr<I64Attr, "1">:$groups,
                   Train_LayoutAttr:$layout);
  let results = (outs Train_FloatTensor:$output);
  let assemblyFormat = "$grad `,` $filter attr-dict `:` type($grad) `,` type($filter)";
}

def Train_Conv2dBackwardFilterOp : Train_Op<"conv2d_backward_filter",
    [Train_OpClass<"Contraction">, Pure, InferTypeOpAdaptor]> {
  let summary = "gradient of a 2-D convolution with respect to its filter";
  let description = [{
    Correlates the forward input with dy, giving a filter of `filter_shape`
    (OIHW, or OHWI with `layout = "NHWC"`).

    ```mlir
    %dw = train.conv2d_backward_filter %dy, %x {filter_shape = array<i64: 16, 3, 3, 3>,
        padding = array<i64: 1, 1>} : tensor<8x16x32x32xf32>, tensor<8x3x32x32xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$input,
                   DenseI64ArrayAttr:$filter_shape,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$stride,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$padding,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilation,
                   DefaultValuedAttr<I64Attr, "1">:$groups,
                   Train_LayoutAttr:$layout);
  let results = (outs Train_FloatTensor:$output);
  let assemblyFormat = "$grad `,` $input attr-dict `:` type($grad) `,` type($input)";
}

def Train_BatchNormBackwardOp : Train_Op<"batch_norm_backward",
    [Train_OpClass<"BatchNormalization">, Pure, InferTypeOpAdaptor]> {
  let summary = "gradient of training-mode batch normalization";
  let description = [{
    From dy, the forward input and scale, gives dx, dscale and dbias; the
    batch statistics are recomputed from the input.

    ```mlir
    %dx, %dg, %db = train.batch_norm_backward %dy, %x, %gamma {epsilon = 1.000000e-05 : f32}
        : tensor<8x16x32x32xf32>, tensor<8x16x32x32xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$input,
                   Train_FloatTensor:$scale,
                   DefaultValuedAttr<F32Attr, "1e-5f">:$epsilon,
                   Train_LayoutAttr:$layout);
  let results = (outs Train_FloatTensor:$input_grad,
                      Train_FloatTensor:$scale_grad,
                      Train_FloatTensor:$bias_grad);
  let assemblyFormat = [{
    $grad `,` $input `,` $scale attr-dict `:` type($grad) `,` type($input) `,` type($scale)
  }];
}

def Train_LayerNormBackwardOp : Train_Op<"layer_norm_backward",
    [Train_OpClass<"RowNormalization">, Pure, InferTypeOpAdaptor]> {
  let summary = "gradient of layer normalization over the last dimension";
  let description = [{
    ```mlir
    %dx, %dg, %db = train.layer_norm_backward %dy, %x, %gamma
        : tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<32xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$input,
                   Train_FloatTensor:$scale,
                   DefaultValuedAttr<F32Attr, "1e-5f">:$epsilon);
  let results = (outs Train_FloatTensor:$input_grad,
                      Train_FloatTensor:$scale_grad,
                      Train_FloatTensor:$bias_grad);
  let assemblyFormat = [{
    $grad `,` $input `,` $scale attr-dict `:` type($grad) `,` type($input) `,` type($scale)
  }];
}

def Train_MaxPool2dBackwardOp : Train_Op<"max_pool2d_backward",
    [Train_OpClass<"Opaque">, Pure, InferTypeOpAdaptor]> {
  let summary = "gradient of 2-D max pooling, routed to each window's maximum";
  let description = [{
    Each window's gradient goes to its first maximal input element (the tie
    rule of PyTorch), accumulated where windows overlap.

    ```mlir
    %dx = train.max_pool2d_backward %dy, %x {kernel_size = array<i64: 2, 2>,
        stride = array<i64: 2, 2>} : tensor<8x16x16x16xf32>, tensor<8x16x32x32xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$input,
                   DenseI64ArrayAttr:$kernel_size, DenseI64ArrayAttr:$stride,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$padding,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                   Train_LayoutAttr:$layout);
  let results = (outs Train_FloatTensor:$output);
  let assemblyFormat = "$grad `,` $input attr-dict `:` type($grad) `,` type($input)";
}

def Train_AvgPool2dBackwardOp : Train_Op<"avg_pool2d_backward",
    [Train_OpClass<"Opaque">, Pure, InferTypeOpAdaptor]> {
  let summary = "gradient of 2-D average pooling";
  let description = [{
    ```mlir
    %dx = train.avg_pool2d_backward %dy {input_shape = array<i64: 8, 16, 8, 8>,
        kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>} : tensor<8x16x4x4xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, DenseI64ArrayAttr:$input_shape,
                   DenseI64ArrayAttr:$kernel_size, DenseI64ArrayAttr:$stride,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$padding,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                   DefaultValuedAttr<BoolAttr, "true">:$count_include_pad,
                   Train_LayoutAttr:$layout);
  let results = (outs Train_FloatTensor:$output);
  let assemblyFormat = "$grad attr-dict `:` type($grad)";
}

def Train_ResizeBilinearBackwardOp : Train_Op<"resize_bilinear_backward",
    [Train_OpClass<"Opaque">, Pure, InferTypeOpAdaptor]> {
  let summary = "gradient of bilinear resizing, to the forward input's size";
  let description = [{
    `input_shape` is in the op's `layout` (NCHW, or NHWC).

    ```mlir
    %dx = train.resize_bilinear_backward %dy {input_shape = array<i64: 8, 16, 8, 8>}
        : tensor<8x16x32x32xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, DenseI64ArrayAttr:$input_shape,
                   DefaultValuedAttr<BoolAttr, "false">:$align_corners,
                   Train_LayoutAttr:$layout);
  let results = (outs Train_FloatTensor:$output);
  let assemblyFormat = "$grad attr-dict `:` type($grad)";
}

def Train_SliceBackwardOp : Train_Op<"slice_backward", [Train_OpClass<"DataMovement">, Pure, InferTypeOpAdaptor]> {
  let summary = "places a slice's gradient into zeros of the forward input's shape";
  let description = [{
    ```mlir
    %dx = train.slice_backward %dy {axis = 1 : i64, end = 1 : i64,
        input_shape = array<i64: 8, 128, 768>, start = 0 : i64} : tensor<8x1x768xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, DenseI64ArrayAttr:$input_shape,
                   I64Attr:$axis, I64Attr:$start, I64Attr:$end,
                   DefaultValuedAttr<I64Attr, "1">:$step);
  let results = (outs Train_FloatTensor:$output);
  let assemblyFormat = "$grad attr-dict `:` type($grad)";
}

//===----------------------------------------------------------------------===//
// Attention, embeddings and losses backward
//===----------------------------------------------------------------------===//

def Train_SoftmaxBackwardOp : Train_Op<"softmax_backward", [Train_OpClass<"RowNormalization">, Pure, InferTypeOpAdaptor]> {
  let summary = "gradient of softmax with respect to its (unscaled) input";
  let description = [{
    dx = scale * y * (dy - sum(dy * y)) along `axis`, from the forward
    output y; masked positions (y = 0) get no gradient.

    ```mlir
    %dx = train.softmax_backward %dy, %y {scale = 1.250000e-01 : f32}
        : tensor<8x2x16x16xf32>, tensor<8x2x16x16xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_FloatTensor:$output,
                   DefaultValuedAttr<I64Attr, "-1">:$axis,
                   DefaultValuedAttr<F32Attr, "1.0f">:$scale);
  let results = (outs Train_FloatTensor:$input_grad);
  let assemblyFormat = "$grad `,` $output attr-dict `:` type($grad) `,` type($output)";
}

// Not Pure, as train.dropout: with a dropout rate it reads the step counter.
def Train_AttentionBackwardOp : Train_Op<"attention_backward",
    [Train_OpClass<"Opaque">, InferTypeOpAdaptor]> {
  let summary = "gradient of train.attention with respect to q, k and v";
  let description = [{
    FlashAttention-2's backward from the forward's operands, its output and
    its `lse`: p is recomputed from q, k and lse; dp' = grad v^T,
    dp = dp' * keep / (1 - rate), D = rowsum(grad * output),
    ds = p * (dp - D), dq = scale * ds k, dk = scale * ds^T q, dv = p'^T grad.
    The attributes are the forward's; the mask gets no gradient.

    ```mlir
    %dq, %dk, %dv = train.attention_backward %q, %k, %v, %o, %do, %lse {causal = true,
        scale = 1.250000e-01 : f32}
        : tensor<8x12x64x64xf32>, tensor<8x12x64x64xf32>, tensor<8x12x64x64xf32>,
          tensor<8x12x64x64xf32>, tensor<8x12x64x64xf32>, tensor<8x12x64xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$query, Train_FloatTensor:$key,
                   Train_FloatTensor:$value, Train_FloatTensor:$output,
                   Train_FloatTensor:$grad, Train_FloatTensor:$lse,
                   Optional<Train_FloatTensor>:$mask,
                   DefaultValuedAttr<F32Attr, "1.0f">:$scale,
                   DefaultValuedAttr<BoolAttr, "false">:$causal,
                   DefaultValuedAttr<F32Attr, "0.0f">:$dropout_rate,
                   DefaultValuedAttr<I64Attr, "0">:$seed);
  let results = (outs Train_FloatTensor:$query_grad, Train_FloatTensor:$key_grad,
                      Train_FloatTensor:$value_grad);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $output `,` $grad `,` $lse (`mask` $mask^)? attr-dict `:`
    type($query) `,` type($key) `,` type($value) `,` type($output) `,` type($grad) `,`
    type($lse) (`,` type($mask)^)?
  }];
}

def Train_EmbeddingBackwardOp : Train_Op<"embedding_backward",
    [Train_OpClass<"Opaque">, Pure, InferTypeOpAdaptor]> {
  let summary = "gradient of an embedding table: rows of dy summed by index";
  let description = [{
    ```mlir
    %dt = train.embedding_backward %dy, %ids {num_rows = 64 : i64}
        : tensor<8x16x32xf32>, tensor<8x16xi64>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$grad, Train_IntTensor:$indices,
                   I64Attr:$num_rows);
  let results = (outs Train_FloatTensor:$output);
  let assemblyFormat = "$grad `,` $indices attr-dict `:` type($grad) `,` type($indices)";
}

def Train_SoftmaxCrossEntropyBackwardOp : Train_Op<"softmax_cross_entropy_backward",
    [Train_OpClass<"Opaque">, Pure, InferTypeOpAdaptor]> {
  let summary = "gradient of the mean softmax cross-entropy with respect to the logits";
  let description = [{
    dlogits = dloss * (softmax(logits) - onehot(labels)) / count, zero at
    ignored labels, where count is the number of labels not ignored.

    ```mlir
    %dl = train.softmax_cross_entropy_backward %dloss, %logits, %labels
        : tensor<f32>, tensor<8x10xf32>, tensor<8xi64>
    ```
  }];
  let arguments = (ins Train_ScalarF32Tensor:$grad, Train_FloatTensor:$logits,
                   Train_IntTensor:$labels,
                   DefaultValuedAttr<I64Attr, "1">:$class_axis,
                   DefaultValuedAttr<I64Attr, "-100">:$ignore_index);
  let results = (outs Train_FloatTensor:$output);
  let assemblyFormat = [{
    $grad `,` $logits `,` $labels attr-dict `:` type($grad) `,` type($logits) `,` type($labels)
  }];
}

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

def Train_SgdUpdateOp : Train_Op<"sgd_update", [Train_OpClass<"Optimizer">, Pure, InferTypeOpAdaptor]> {
  let summary = "one step of SGD with momentum and weight decay, as torch.optim.SGD";
  let description = [{
    g' = g + weight_decay * p; buf' = momentum * buf + g' (buf' = g' on the
    first step, which the runtime's step counter tells); p' = p - lr * d
    where d = g' + momentum * buf' with `nesterov`, else buf'. Returns the
    new parameter and momentum buffer.

    Under loss scaling the update takes the `train.loss_scale_status` of the
    step (`unscale(%status)`): g is multiplied by status[0] (1 / scale)
    first, and when status[1] is non-zero (a gradient overflowed) the
    update is skipped: p' = p, buf' = buf, as torch.cuda.amp.GradScaler
    skips optimizer.step().

    ```mlir
    %p2, %buf2 = train.sgd_update %p, %g, %buf {lr = 1.000000e-01 : f32,
        momentum = 9.000000e-01 : f32, weight_decay = 9.99999974E-5 : f32}
        : tensor<16x3x3x3xf32>, tensor<16x3x3x3xf32>, tensor<16x3x3x3xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$param, Train_FloatTensor:$grad,
                   Train_FloatTensor:$momentum_buffer,
                   Optional<Train_LossScaleStatus>:$scale_status, F32Attr:$lr,
                   DefaultValuedAttr<F32Attr, "0.0f">:$momentum,
                   DefaultValuedAttr<F32Attr, "0.0f">:$weight_decay,
                   DefaultValuedAttr<BoolAttr, "false">:$nesterov);
  let results = (outs Train_FloatTensor:$new_param,
                      Train_FloatTensor:$new_momentum_buffer);
  let assemblyFormat = [{
    $param `,` $grad `,` $momentum_buffer (`unscale` `(` $scale_status^ `:` type($scale_status) `)`)? attr-dict `:`
    type($param) `,` type($grad) `,` type($momentum_buffer)
  }];
}

def Train_AdamWUpdateOp : Train_Op<"adamw_update", [Train_OpClass<"Optimizer">, Pure, InferTypeOpAdaptor]> {
  let summary = "one step of AdamW with decoupled weight decay, as torch.optim.AdamW";
  let description = [{
    p *= 1 - lr * weight_decay; m' = beta1 m + (1 - beta1) g;
    v' = beta2 v + (1 - beta2) g^2; p' = p - lr * (m' / (1 - beta1^t)) /
    (sqrt(v' / (1 - beta2^t)) + epsilon), with t the step number (from 1)
    that the runtime's step counter gives. With `unscale(%status)` the
    gradient is unscaled and the update skipped on overflow, as for
    `train.sgd_update` (a skipped step still advances t, unlike PyTorch,
    whose GradScaler skips optimizer.step() and with it the step count).

    ```mlir
    %p2, %m2, %v2 = train.adamw_update %p, %g, %m, %v {lr = 1.000000e-03 : f32}
        : tensor<768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$param, Train_FloatTensor:$grad,
                   Train_FloatTensor:$exp_avg, Train_FloatTensor:$exp_avg_sq,
                   Optional<Train_LossScaleStatus>:$scale_status, F32Attr:$lr,
                   DefaultValuedAttr<F32Attr, "0.9f">:$beta1,
                   DefaultValuedAttr<F32Attr, "0.999f">:$beta2,
                   DefaultValuedAttr<F32Attr, "1e-8f">:$epsilon,
                   DefaultValuedAttr<F32Attr, "0.01f">:$weight_decay);
  let results = (outs Train_FloatTensor:$new_param, Train_FloatTensor:$new_exp_avg,
                      Train_FloatTensor:$new_exp_avg_sq);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` $exp_avg_sq (`unscale` `(` $scale_status^ `:` type($scale_status) `)`)? attr-dict `:`
    type($param) `,` type($grad) `,` type($exp_avg) `,` type($exp_avg_sq)
  }];
}

//===----------------------------------------------------------------------===//
// Loss scaling (mixed precision)
//===----------------------------------------------------------------------===//

def Train_LossScaleStatusOp : Train_Op<"loss_scale_status", [Train_OpClass<"Opaque">, Pure, InferTypeOpAdaptor]> {
  let summary = "checks every scaled gradient for overflow and gives the inverse scale";
  let description = [{
    Dynamic loss scaling multiplies the loss by `scale` so that half
    precision gradients do not underflow. Before the optimizer uses them,
    every gradient must be divided by it, and the step skipped if any
    overflowed. This op reads the scale and every gradient and returns
    [1 / scale, 1.0 if any gradient element is inf or NaN else 0.0]
    (torch._amp_foreach_non_finite_check_and_unscale_ without the in-place
    unscale: the optimizer updates unscale as they read the gradients).

    ```mlir
    %status = train.loss_scale_status %scale, %g0, %g1
        : tensor<f32>, tensor<16x3x3x3xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins Train_ScalarF32Tensor:$scale, Variadic<Train_FloatTensor>:$grads);
  let results = (outs Train_LossScaleStatus:$status);
  let assemblyFormat = "$scale `,` $grads attr-dict `:` type($scale) `,` type($grads)";
}

def Train_UpdateLossScaleOp : Train_Op<"update_loss_scale", [Train_OpClass<"Opaque">, Pure, InferTypeOpAdaptor]> {
  let summary = "grows or backs off the dynamic loss scale, as torch's GradScaler.update";
  let description = [{
    With `status` from `train.loss_scale_status`: after an overflow the
    scale is multiplied by `backoff_factor` and the count of good steps
    reset; otherwise the count grows by one, and when it reaches
    `growth_interval` the scale is multiplied by `growth_factor` and the
    count reset. Returns the next scale and count (both persistent state).

    ```mlir
    %scale2, %good2 = train.update_loss_scale %scale, %good, %status
        {growth_interval = 2000 : i64} : tensor<f32>, tensor<f32>, tensor<2xf32>
    ```
  }];
  let arguments = (ins Train_ScalarF32Tensor:$scale, Train_ScalarF32Tensor:$good_steps,
                   Train_LossScaleStatus:$status,
                   DefaultValuedAttr<F32Attr, "2.0f">:$growth_factor,
                   DefaultValuedAttr<F32Attr, "0.5f">:$backoff_factor,
                   DefaultValuedAttr<I64Attr, "2000">:$growth_interval);
  let results = (outs Train_ScalarF32Tensor:$new_scale,
                      Train_ScalarF32Tensor:$new_good_steps);
  let assemblyFormat = [{
    $scale `,` $good_steps `,` $status attr-dict `:` type($scale) `,` type($good_steps) `,` type($status)
  }];
}

//===----------------------------------------------------------------------===//
// Data parallelism
//===----------------------------------------------------------------------===//

// Not Pure: every rank must run the same collectives in the same order, so
// none may be removed, merged or moved past another.
def Train_AllReduceOp : Train_Op<"all_reduce", [Train_OpClass<"Collective">, InferTypeOpAdaptor]> {
  let summary = "averages gradients over the data-parallel ranks (one bucket)";
  let description = [{
    Each of `ranks` ranks runs the same step on its own slice of the global
    batch; this op returns, for every operand, the element-wise mean of that
    operand over the ranks: the gradient of the global batch's mean loss.
    One op is one bucket of gradients sent together, as PyTorch's
    DistributedDataParallel buckets them (`bucket` numbers it, in the order
    the backward pass finishes them). dlc-data-parallel inserts it; the CPU
    backend runs it across threads, the CUDA backend as NCCL all-reduces.

    ```mlir
    %g0r, %g1r = train.all_reduce %g0, %g1 {bucket = 0 : i64, ranks = 8 : i64}
        : tensor<1000x2048xf32>, tensor<1000xf32>
    ```
  }];
  let arguments = (ins Variadic<Train_FloatTensor>:$grads, I64Attr:$ranks,
                   DefaultValuedAttr<I64Attr, "0">:$bucket);
  let results = (outs Variadic<Train_FloatTensor>:$reduced);
  let assemblyFormat = "$grads attr-dict `:` type($grads)";
}

#endif // DLC_DIALECT_TRAIN_IR_TRAINGRADOPS_TD
