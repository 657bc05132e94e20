//===- TrainOps.td - train dialect ops ----------------------*- tablegen -*-===//
//
// Forward ops of the train dialect: every op the seed models (ResNet-50 v1.5,
// VGG16, DeepLabV3+, HRNet-W18, BERT-base, GPT-2 small) and the small test
// models need. Layouts follow PyTorch: activations NCHW, filters OIHW, linear
// weights [out, in]. Every op infers its result types; the verification
// lives in the inference so that a model file and the C++ builders get the
// same diagnostics.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DIALECT_TRAIN_IR_TRAINOPS_TD
#define DLC_DIALECT_TRAIN_IR_TRAINOPS_TD

include "dlc/Dialect/Train/IR/TrainBase.td"
include "dlc/Dialect/Train/IR/TrainInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

/// Defines inferReturnTypes of an op by forwarding to a shared helper in
/// TrainShapes.cpp, so op families share one shape rule.
class Train_InferWith<string helper> {
  code inferDefinition = [{
    ::mlir::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, ::std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      if (::mlir::failed(
              ::mlir::dlc::train::withDefaults<$cppClass>(context, loc, adaptor)))
        return ::mlir::failure();
      return }] # helper # [{(context, loc, getOperationName(), adaptor, types);
    }
  }];
}

//===----------------------------------------------------------------------===//
// Constants and casts
//===----------------------------------------------------------------------===//

def Train_ConstantOp : Train_Op<"constant",
    [Train_OpClass<"Opaque">, ConstantLike, Pure, InferTypeOpAdaptor]> {
  let summary = "a tensor constant";
  let description = [{
    Materializes a dense tensor constant. The result type is the type of the
    attribute.

    ```mlir
    %half = train.constant dense<5.000000e-01> : tensor<f32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Train_AnyTensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def Train_CastOp : Train_Op<"cast", [Train_OpClass<"Elementwise">, Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_DifferentiableOpInterface>]> {
  let summary = "converts a tensor to another element type";
  let description = [{
    Converts every element to the element type `to`, keeping the shape.
    Float-to-float casts round to nearest even; float-to-integer casts
    truncate toward zero.

    ```mlir
    %h = train.cast %x to f16 : tensor<?x768xf32>
    ```
  }];
  let arguments = (ins Train_AnyTensor:$input, TypeAttr:$to);
  let results = (outs Train_AnyTensor:$output);
  let assemblyFormat = "$input `to` $to attr-dict `:` type($input)";
}

//===----------------------------------------------------------------------===//
// Element-wise ops
//===----------------------------------------------------------------------===//

class Train_UnaryOp<string mnemonic,
    list<Trait> traits = [Pure, Train_OpClass<"Elementwise">, Train_Activation]>
    : Train_Op<mnemonic, !listconcat([InferTypeOpAdaptor,
        DeclareOpInterfaceMethods<Train_DifferentiableOpInterface>], traits)>,
      Train_InferWith<"inferUnaryOp"> {
  let results = (outs Train_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let extraClassDefinition = inferDefinition;
}

def Train_ReluOp : Train_UnaryOp<"relu"> {
  let summary = "rectified linear unit, max(x, 0)";
  let description = [{
    ```mlir
    %y = train.relu %x : tensor<?x64x56x56xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
}

def Train_TanhOp : Train_UnaryOp<"tanh"> {
  let summary = "hyperbolic tangent";
  let description = [{
    ```mlir
    %y = train.tanh %x : tensor<?x768xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
}

def Train_SigmoidOp : Train_UnaryOp<"sigmoid"> {
  let summary = "logistic sigmoid, 1 / (1 + exp(-x))";
  let description = [{
    ```mlir
    %y = train.sigmoid %x : tensor<?x10xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
}

def Train_SiluOp : Train_UnaryOp<"silu"> {
  let summary = "sigmoid linear unit, x * sigmoid(x)";
  let description = [{
    Also called swish; `torch.nn.functional.silu`.

    ```mlir
    %y = train.silu %x : tensor<?x256xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
}

def Train_Relu6Op : Train_UnaryOp<"relu6"> {
  let summary = "rectified linear unit capped at six, min(max(x, 0), 6)";
  let description = [{
    `torch.nn.functional.relu6`, the same as `hardtanh(x, 0, 6)`. NaN stays
    NaN, as PyTorch's clamp keeps it.

    ```mlir
    %y = train.relu6 %x : tensor<?x32x56x56xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
}

def Train_HardswishOp : Train_UnaryOp<"hardswish"> {
  let summary = "hard swish, x * relu6(x + 3) / 6";
  let description = [{
    `torch.nn.functional.hardswish` (MobileNetV3), computed in PyTorch's
    order: (x * relu6(x + 3)) / 6.

    ```mlir
    %y = train.hardswish %x : tensor<?x16x32x32xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
}

def Train_HardsigmoidOp : Train_UnaryOp<"hardsigmoid"> {
  let summary = "hard sigmoid, relu6(x + 3) / 6";
  let description = [{
    `torch.nn.functional.hardsigmoid` (MobileNetV3's squeeze-and-excitation
    gate).

    ```mlir
    %y = train.hardsigmoid %x : tensor<?x16x1x1xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
}

def Train_GeluOp : Train_UnaryOp<"gelu"> {
  let summary = "Gaussian error linear unit, exact or tanh-approximated";
  let description = [{
    `approximate = "none"` (the default) computes x * Phi(x) with the error
    function, as BERT does; `approximate = "tanh"` computes
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as GPT-2 does. The
    names follow `torch.nn.functional.gelu`.

    ```mlir
    %y = train.gelu %x {approximate = "tanh"} : tensor<?x128x3072xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input,
                   DefaultValuedStrAttr<StrAttr, "none">:$approximate);
}

def Train_ScaleOp : Train_UnaryOp<"scale"> {
  let summary = "affine map of every element, x * scale + bias";
  let description = [{
    The `scale` activation of PaddlePaddle's fusion vocabulary.

    ```mlir
    %y = train.scale %x {scale = 1.250000e-01 : f32} : tensor<?x12x128x64xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input,
                   DefaultValuedAttr<F32Attr, "1.0f">:$scale,
                   DefaultValuedAttr<F32Attr, "0.0f">:$bias);
}

// Not Pure: without declared memory effects the op is treated as having
// unknown effects, which keeps CSE from merging two dropouts.
def Train_DropoutOp : Train_UnaryOp<"dropout", [Train_OpClass<"Random">]> {
  let summary = "zeroes elements with probability `rate`, scales the rest by 1/(1-rate)";
  let description = [{
    The keep mask is a counter-based random function of (`seed`, training
    step, element index), so a step is reproducible and the backward pass
    can regenerate the mask instead of storing it. Each dropout op of a
    model gets its own `seed`. The op reads the step counter, so it is not
    pure: two dropouts of the same value are never merged.

    ```mlir
    %y = train.dropout %x {rate = 1.000000e-01 : f32, seed = 3 : i64} : tensor<?x128x768xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, F32Attr:$rate, I64Attr:$seed);
}

class Train_BinaryOp<string mnemonic>
    : Train_Op<mnemonic, [Pure, Train_OpClass<"Elementwise">, InferTypeOpAdaptor,
        DeclareOpInterfaceMethods<Train_DifferentiableOpInterface>]>,
      Train_InferWith<"inferBroadcastOp"> {
  let arguments = (ins Train_FloatTensor:$lhs, Train_FloatTensor:$rhs);
  let results = (outs Train_FloatTensor:$output);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
  let extraClassDefinition = inferDefinition;
}

def Train_AddOp : Train_BinaryOp<"add"> {
  let summary = "element-wise addition with NumPy broadcasting";
  let description = [{
    Shapes broadcast as in NumPy: aligned from the trailing dimension, a
    dimension of size 1 stretches to the other operand's size.

    ```mlir
    %y = train.add %x, %shortcut : tensor<?x256x56x56xf32>, tensor<?x256x56x56xf32>
    ```
  }];
}

def Train_SubOp : Train_BinaryOp<"sub"> {
  let summary = "element-wise subtraction with NumPy broadcasting";
  let description = [{
    ```mlir
    %y = train.sub %x, %mean : tensor<?x128x768xf32>, tensor<?x128x1xf32>
    ```
  }];
}

def Train_MulOp : Train_BinaryOp<"mul"> {
  let summary = "element-wise multiplication with NumPy broadcasting";
  let description = [{
    ```mlir
    %y = train.mul %x, %gate : tensor<?x64x8x8xf32>, tensor<?x64x1x1xf32>
    ```
  }];
}

def Train_DivOp : Train_BinaryOp<"div"> {
  let summary = "element-wise division with NumPy broadcasting";
  let description = [{
    ```mlir
    %y = train.div %x, %n : tensor<?x10xf32>, tensor<f32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Convolution, normalization and pooling (NCHW)
//===----------------------------------------------------------------------===//

def Train_Conv2dOp : Train_Op<"conv2d", [Train_OpClass<"Contraction">, Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_DifferentiableOpInterface>]> {
  let summary = "2-D convolution of an NCHW input with an OIHW filter";
  let description = [{
    Cross-correlation as in `torch.nn.functional.conv2d`: `stride`,
    `padding` (added on both sides), `dilation` are [h, w] pairs, `groups`
    splits input and output channels into groups (`groups` equal to the input
    channels is a depthwise convolution). The filter has shape
    [C_out, C_in / groups, KH, KW]; the optional bias has shape [C_out].
    Output size per spatial dimension:
    (in + 2 * pad - dilation * (k - 1) - 1) / stride + 1.
    With `layout = "NHWC"` the input and output are NHWC and the filter
    OHWI ([C_out, KH, KW, C_in / groups]).

    ```mlir
    %y = train.conv2d %x, %w {padding = array<i64: 3, 3>, stride = array<i64: 2, 2>}
        : tensor<?x3x224x224xf32>, tensor<64x3x7x7xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, Train_FloatTensor:$filter,
                   Optional<Train_FloatTensor>:$bias,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$stride,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$padding,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilation,
                   DefaultValuedAttr<I64Attr, "1">:$groups,
                   Train_LayoutAttr:$layout);
  let results = (outs Train_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $filter (`,` $bias^)? attr-dict `:` type($input) `,` type($filter) (`,` type($bias)^)?
  }];
}

def Train_BatchNormOp : Train_Op<"batch_norm", [Train_OpClass<"BatchNormalization">, Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_DifferentiableOpInterface>]> {
  let summary = "batch normalization in training mode over the channel dimension";
  let description = [{
    Normalizes an NCHW (or NC) input with the statistics of the batch (mean
    and biased variance over every dimension but 1), then applies the
    per-channel `scale` and `bias`. It also returns the updated running
    statistics, as `torch.nn.BatchNorm2d` does in training mode:
    new = (1 - momentum) * running + momentum * batch, where the running
    variance is updated with the unbiased batch variance. With
    `layout = "NHWC"` the channel dimension of the (4-d) input is the last.

    ```mlir
    %y, %mean, %var = train.batch_norm %x, %gamma, %beta, %rm, %rv
        {epsilon = 1.000000e-05 : f32, momentum = 1.000000e-01 : f32}
        : tensor<?x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, Train_FloatTensor:$scale,
                   Train_FloatTensor:$bias, Train_FloatTensor:$running_mean,
                   Train_FloatTensor:$running_var,
                   DefaultValuedAttr<F32Attr, "1e-5f">:$epsilon,
                   DefaultValuedAttr<F32Attr, "0.1f">:$momentum,
                   Train_LayoutAttr:$layout);
  let results = (outs Train_FloatTensor:$output,
                      Train_FloatTensor:$new_running_mean,
                      Train_FloatTensor:$new_running_var);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias `,` $running_mean `,` $running_var attr-dict `:`
    type($input) `,` type($scale) `,` type($bias) `,` type($running_mean) `,` type($running_var)
  }];
}

def Train_LayerNormOp : Train_Op<"layer_norm", [Train_OpClass<"RowNormalization">, Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_DifferentiableOpInterface>]> {
  let summary = "layer normalization over the last dimension";
  let description = [{
    Normalizes every vector along the last dimension by its own mean and
    biased variance, then applies `scale` and `bias` of shape [D].

    ```mlir
    %y = train.layer_norm %x, %gamma, %beta {epsilon = 9.99999996E-13 : f32}
        : tensor<?x128x768xf32>, tensor<768xf32>, tensor<768xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, Train_FloatTensor:$scale,
                   Train_FloatTensor:$bias,
                   DefaultValuedAttr<F32Attr, "1e-5f">:$epsilon);
  let results = (outs Train_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias attr-dict `:` type($input) `,` type($scale) `,` type($bias)
  }];
}

def Train_MaxPool2dOp : Train_Op<"max_pool2d", [Train_OpClass<"Opaque">, Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_DifferentiableOpInterface>]> {
  let summary = "2-D max pooling of an NCHW (or NHWC) input";
  let description = [{
    Padding is implicit negative infinity. With `ceil_mode` the output size
    rounds up, as in `torch.nn.MaxPool2d`.

    ```mlir
    %y = train.max_pool2d %x {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>,
                              stride = array<i64: 2, 2>} : tensor<?x64x112x112xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input,
                   DenseI64ArrayAttr:$kernel_size, DenseI64ArrayAttr:$stride,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$padding,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                   Train_LayoutAttr:$layout);
  let results = (outs Train_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Train_AvgPool2dOp : Train_Op<"avg_pool2d", [Train_OpClass<"Opaque">, Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_DifferentiableOpInterface>]> {
  let summary = "2-D average pooling of an NCHW (or NHWC) input";
  let description = [{
    With `count_include_pad` (the default, as in PyTorch) the divisor is the
    full window size, padding included.

    ```mlir
    %y = train.avg_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>}
        : tensor<?x64x32x32xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input,
                   DenseI64ArrayAttr:$kernel_size, DenseI64ArrayAttr:$stride,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$padding,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                   DefaultValuedAttr<BoolAttr, "true">:$count_include_pad,
                   Train_LayoutAttr:$layout);
  let results = (outs Train_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Train_GlobalAvgPoolOp : Train_Op<"global_avg_pool",
    [Train_OpClass<"Reduction">, Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_DifferentiableOpInterface>]> {
  let summary = "mean over the spatial dimensions of an NCHW input, to N x C x 1 x 1";
  let description = [{
    The adaptive average pooling to 1x1 that closes ResNet and feeds
    DeepLabV3+'s image-pooling branch.

    ```mlir
    %y = train.global_avg_pool %x : tensor<?x2048x7x7xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input);
  let results = (outs Train_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Train_ResizeBilinearOp : Train_Op<"resize_bilinear",
    [Train_OpClass<"Opaque">, Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_DifferentiableOpInterface>]> {
  let summary = "bilinear resize of an NCHW (or NHWC) input to a given spatial size";
  let description = [{
    Samples as `torch.nn.functional.interpolate(mode="bilinear")`: with
    `align_corners` the corner pixels of input and output are aligned,
    without it (the default) pixel centres are, and sources are clamped.
    `layout = "NHWC"` (set by dlc-convert-layout) takes and gives
    channels-last data; `size` is [H, W] either way.

    ```mlir
    %y = train.resize_bilinear %x {size = array<i64: 128, 256>, align_corners = false}
        : tensor<?x256x32x64xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, DenseI64ArrayAttr:$size,
                   DefaultValuedAttr<BoolAttr, "false">:$align_corners,
                   Train_LayoutAttr:$layout);
  let results = (outs Train_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

def Train_MatmulOp : Train_Op<"matmul", [Train_OpClass<"Contraction">, Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_DifferentiableOpInterface>]> {
  let summary = "batched matrix product with optional transposes";
  let description = [{
    Multiplies the last two dimensions, op(lhs) [.., M, K] x op(rhs)
    [.., K, N] -> [.., M, N], where op transposes the last two dimensions
    when `transpose_lhs` / `transpose_rhs` is set. Leading (batch)
    dimensions broadcast as in NumPy.

    ```mlir
    %scores = train.matmul %q, %k {transpose_rhs = true}
        : tensor<?x12x128x64xf32>, tensor<?x12x128x64xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$lhs, Train_FloatTensor:$rhs,
                   DefaultValuedAttr<BoolAttr, "false">:$transpose_lhs,
                   DefaultValuedAttr<BoolAttr, "false">:$transpose_rhs);
  let results = (outs Train_FloatTensor:$output);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
}

def Train_LinearOp : Train_Op<"linear", [Train_OpClass<"Contraction">, Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_DifferentiableOpInterface>]> {
  let summary = "fully connected layer, x W^T + b, over the last dimension";
  let description = [{
    As `torch.nn.functional.linear`: `weight` has shape [out, in], the
    optional `bias` [out]; every leading dimension of the input is kept.

    ```mlir
    %y = train.linear %x, %w, %b : tensor<?x128x768xf32>, tensor<3072x768xf32>, tensor<3072xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, Train_FloatTensor:$weight,
                   Optional<Train_FloatTensor>:$bias);
  let results = (outs Train_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,` type($weight) (`,` type($bias)^)?
  }];
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

def Train_ReshapeOp : Train_Op<"reshape", [Train_OpClass<"Opaque">, Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_DifferentiableOpInterface>]> {
  let summary = "reinterprets a tensor with a new shape of the same element count";
  let description = [{
    `shape` gives the new dimensions; one of them may be -1 and is inferred
    from the element count. An input whose batch dimension is dynamic must
    use -1 for the dimension that absorbs it.

    ```mlir
    %heads = train.reshape %x {shape = array<i64: -1, 128, 12, 64>} : tensor<?x128x768xf32>
    ```
  }];
  let arguments = (ins Train_AnyTensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs Train_AnyTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Train_TransposeOp : Train_Op<"transpose", [Train_OpClass<"DataMovement">, Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_DifferentiableOpInterface>]> {
  let summary = "permutes the dimensions of a tensor";
  let description = [{
    Result dimension i is input dimension `permutation[i]`.

    ```mlir
    %y = train.transpose %x {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x128x12x64xf32>
    ```
  }];
  let arguments = (ins Train_AnyTensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Train_AnyTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Train_ExpandOp : Train_Op<"expand", [Train_OpClass<"DataMovement">, Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_DifferentiableOpInterface>]> {
  let summary = "broadcasts a tensor to a shape whose batch is another tensor's";
  let description = [{
    PyTorch's `x.expand(...)` in a model file, where the batch dimension is
    dynamic: the input broadcasts (as NumPy does) to `shape`, in which
    dimension 0 may be -1, the size of dimension 0 of `batch_of`. Only that
    size is read from `batch_of`, never its values, and it gets no gradient.
    Once the batch is known (dlc-specialize-batch) the op is a
    `train.broadcast_to` of the static shape; it never reaches a plan.

    ```mlir
    %cls = train.expand %token, %x {shape = array<i64: -1, 1, 768>} : tensor<1x1x768xf32>, tensor<?x3x224x224xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, Train_AnyTensor:$batch_of, DenseI64ArrayAttr:$shape);
  let results = (outs Train_FloatTensor:$output);
  let assemblyFormat = "$input `,` $batch_of attr-dict `:` type($input) `,` type($batch_of)";
}

def Train_ConcatOp : Train_Op<"concat", [Train_OpClass<"DataMovement">, Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_DifferentiableOpInterface>]> {
  let summary = "joins tensors along one dimension";
  let description = [{
    Every input has the same rank and element type, and the same size in
    every dimension but `axis`.

    ```mlir
    %y = train.concat %a, %b {axis = 1 : i64} : tensor<?x256x64x128xf32>, tensor<?x48x64x128xf32>
    ```
  }];
  let arguments = (ins Variadic<Train_AnyTensor>:$inputs, I64Attr:$axis);
  let results = (outs Train_AnyTensor:$output);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs)";
}

def Train_SliceOp : Train_Op<"slice", [Train_OpClass<"DataMovement">, Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_DifferentiableOpInterface>]> {
  let summary = "takes elements start, start + step, ... < end along one dimension";
  let description = [{
    As `x.narrow` / `x[..., start:end:step, ...]` in PyTorch, along `axis`,
    with 0 <= start < end <= size and step >= 1.

    ```mlir
    %cls = train.slice %x {axis = 1 : i64, start = 0 : i64, end = 1 : i64} : tensor<?x128x768xf32>
    ```
  }];
  let arguments = (ins Train_AnyTensor:$input, I64Attr:$axis, I64Attr:$start,
                   I64Attr:$end, DefaultValuedAttr<I64Attr, "1">:$step);
  let results = (outs Train_AnyTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

//===----------------------------------------------------------------------===//
// Attention and embeddings
//===----------------------------------------------------------------------===//

def Train_SoftmaxOp : Train_Op<"softmax", [Train_OpClass<"RowNormalization">, Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_DifferentiableOpInterface>]> {
  let summary = "softmax along one dimension, with scale, additive mask and causal mask";
  let description = [{
    Computes softmax(scale * x + mask) along `axis` (negative counts from the
    end). The optional additive `mask` broadcasts to the input. With
    `causal`, `axis` must be the last dimension and, for a query position i
    (second-to-last dimension) and key position j (last dimension), every
    j > i + (keys - queries) is masked out: the attention mask of GPT-2.

    ```mlir
    %p = train.softmax %scores {causal = true, scale = 1.250000e-01 : f32}
        : tensor<?x12x1024x1024xf32>
    %q = train.softmax %scores mask %pad {scale = 1.250000e-01 : f32}
        : tensor<?x12x128x128xf32>, tensor<?x1x1x128xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input,
                   Optional<Train_FloatTensor>:$mask,
                   DefaultValuedAttr<I64Attr, "-1">:$axis,
                   DefaultValuedAttr<F32Attr, "1.0f">:$scale,
                   DefaultValuedAttr<BoolAttr, "false">:$causal);
  let results = (outs Train_FloatTensor:$output);
  let assemblyFormat = [{
    $input (`mask` $mask^)? attr-dict `:` type($input) (`,` type($mask)^)?
  }];
}

// Not Pure, as train.dropout: with a dropout rate it reads the step counter.
def Train_AttentionOp : Train_Op<"attention", [Train_OpClass<"Opaque">, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_DifferentiableOpInterface>]> {
  let summary = "scaled dot-product attention with its softmax statistics (fused)";
  let description = [{
    For q [B..., Sq, D], k [B..., Sk, D] and v [B..., Sk, Dv] of one float
    type, computes s = scale * q k^T + mask (the optional additive mask
    broadcasts to [B..., Sq, Sk]; with `causal`, key j > i + (Sk - Sq) is
    masked out, train.softmax's causal rule), p = softmax(s) over the keys in
    float32, p' = dropout(p) with exactly the mask train.dropout with `seed`
    and `dropout_rate` draws for the [B..., Sq, Sk] tensor p (rate 0: none),
    and `output` = p' v [B..., Sq, Dv] in the operands' type. `lse` is
    log(sum_j exp(s_ij)) [B..., Sq], always float32: the backward recomputes
    p from it instead of storing p. dlc-fuse-attention forms it from
    matmul -> softmax -> dropout -> matmul; the score tensor is never
    materialised by the fast kernels.

    ```mlir
    %o, %lse = train.attention %q, %k, %v {causal = true, dropout_rate = 1.000000e-01 : f32,
        scale = 1.250000e-01 : f32, seed = 7 : i64}
        : tensor<?x12x1024x64xf32>, tensor<?x12x1024x64xf32>, tensor<?x12x1024x64xf32>
    %o2, %lse2 = train.attention %q, %k, %v mask %pad {scale = 1.250000e-01 : f32}
        : tensor<?x12x128x64xf32>, tensor<?x12x128x64xf32>, tensor<?x12x128x64xf32>,
          tensor<?x1x1x128xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$query, Train_FloatTensor:$key,
                   Train_FloatTensor:$value,
                   Optional<Train_FloatTensor>:$mask,
                   DefaultValuedAttr<F32Attr, "1.0f">:$scale,
                   DefaultValuedAttr<BoolAttr, "false">:$causal,
                   DefaultValuedAttr<F32Attr, "0.0f">:$dropout_rate,
                   DefaultValuedAttr<I64Attr, "0">:$seed);
  let results = (outs Train_FloatTensor:$output, Train_FloatTensor:$lse);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` $mask^)? attr-dict `:` type($query) `,` type($key) `,`
    type($value) (`,` type($mask)^)?
  }];
}

def Train_EmbeddingOp : Train_Op<"embedding", [Train_OpClass<"Opaque">, Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_DifferentiableOpInterface>]> {
  let summary = "gathers rows of an embedding table by integer indices";
  let description = [{
    The result has the shape of `indices` followed by the table's row size.

    ```mlir
    %tok = train.embedding %table, %ids : tensor<30522x768xf32>, tensor<?x128xi64>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$table, Train_IntTensor:$indices);
  let results = (outs Train_FloatTensor:$output);
  let assemblyFormat = "$table `,` $indices attr-dict `:` type($table) `,` type($indices)";
}

//===----------------------------------------------------------------------===//
// Losses and reductions
//===----------------------------------------------------------------------===//

def Train_SoftmaxCrossEntropyOp : Train_Op<"softmax_cross_entropy",
    [Train_OpClass<"Opaque">, Pure, InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Train_DifferentiableOpInterface>]> {
  let summary = "mean softmax cross-entropy of logits against integer class labels";
  let description = [{
    `class_axis` of `logits` holds the classes; `labels` has the shape of
    `logits` without that dimension: [N] for classification, [N, H, W] for
    per-pixel segmentation with `class_axis = 1`, [N, T] for language
    modelling with `class_axis = 2`. Labels equal to `ignore_index` add
    nothing and are not counted; the result is the mean over the counted
    labels, in f32 whatever the logits' type (as in
    `torch.nn.functional.cross_entropy`).

    ```mlir
    %loss = train.softmax_cross_entropy %logits, %labels {ignore_index = 255 : i64}
        : tensor<?x19x512x1024xf32>, tensor<?x512x1024xi64>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$logits, Train_IntTensor:$labels,
                   DefaultValuedAttr<I64Attr, "1">:$class_axis,
                   DefaultValuedAttr<I64Attr, "-100">:$ignore_index);
  let results = (outs Train_ScalarF32Tensor:$loss);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` type($logits) `,` type($labels)
  }];
}

class Train_ReduceOp<string mnemonic, string what>
    : Train_Op<mnemonic, [Pure, Train_OpClass<"Reduction">, InferTypeOpAdaptor,
        DeclareOpInterfaceMethods<Train_DifferentiableOpInterface>]>,
      Train_InferWith<"inferReduceOp"> {
  let summary = "reduces a tensor over the dimensions `axes` by " # what;
  let description = [{
    `axes` are distinct dimensions (negative counts from the end); with
    `keep_dims` they stay as size 1.

    ```mlir
    %r = train.}] # mnemonic # [{ %x {axes = array<i64: -1>, keep_dims = true} : tensor<?x128x768xf32>
    ```
  }];
  let arguments = (ins Train_FloatTensor:$input, DenseI64ArrayAttr:$axes,
                   DefaultValuedAttr<BoolAttr, "false">:$keep_dims);
  let results = (outs Train_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let extraClassDefinition = inferDefinition;
}

def Train_ReduceSumOp : Train_ReduceOp<"reduce_sum", "summing">;
def Train_ReduceMeanOp : Train_ReduceOp<"reduce_mean", "averaging">;
def Train_ReduceMaxOp : Train_ReduceOp<"reduce_max", "taking the maximum">;

include "dlc/Dialect/Train/IR/TrainGradOps.td"

//===----------------------------------------------------------------------===//
// Fused groups
//===----------------------------------------------------------------------===//

def Train_FusedOp : Train_Op<"fused", [IsolatedFromAbove,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "a group of ops a fusion strategy compiles into one kernel";
  let description = [{
    The body holds the fused ops over the block arguments (one per input)
    and yields the group's results. `kind` names the fusion pattern
    (`elewise_act`, ...) and `strategy` the strategy that formed it
    (`paddle`, `xla`), so printing the IR shows every fusion decision and
    reports can count groups by kind.

    ```mlir
    %y = train.fused "elewise_act" (%a, %b) {strategy = "paddle"}
        : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32> {
    ^bb0(%x: tensor<8x16xf32>, %z: tensor<8x16xf32>):
      %s = train.add %x, %z : tensor<8x16xf32>, tensor<8x16xf32>
      %r = train.relu %s : tensor<8x16xf32>
      train.yield %r : tensor<8x16xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<Train_AnyTensor>:$inputs, StrAttr:$kind,
                   StrAttr:$strategy);
  let results = (outs Variadic<Train_AnyTensor>:$outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $kind `(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs) $body
  }];
  let hasVerifier = 1;
}

def Train_YieldOp : Train_Op<"yield", [Pure, Terminator, HasParent<"FusedOp">]> {
  let summary = "returns a fused group's results";
  let description = [{
    ```mlir
    train.yield %r : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Variadic<Train_AnyTensor>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
  let builders = [OpBuilder<(ins), [{ /* an empty yield */ }]>];
}

#endif // DLC_DIALECT_TRAIN_IR_TRAINOPS_TD
