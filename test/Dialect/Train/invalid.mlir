// RUN: dlc-opt %s --split-input-file --verify-diagnostics

// One case for every diagnostic of the train dialect: the type inference of
// each op (TrainOps.cpp, TrainShapes.cpp), the argument attributes and the
// train.optimizer function attribute (TrainDialect.cpp), plus a few of the
// ODS-generated operand type constraints.

//===----------------------------------------------------------------------===//
// train.constant
//===----------------------------------------------------------------------===//

func.func @constant_not_tensor() {
  // expected-error @+1 {{'train.constant' op expects a value of static tensor type, got 'vector<2xf32>'}}
  %0 = train.constant dense<1.0> : vector<2xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.cast
//===----------------------------------------------------------------------===//

func.func @cast_bad_to(%x: tensor<2xf32>) {
  // expected-error @+1 {{'train.cast' op expects 'to' to be f32, f16, bf16, i32 or i64, got 'f64'}}
  %0 = train.cast %x to f64 : tensor<2xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Element-wise ops (ODS operand constraints, broadcasting)
//===----------------------------------------------------------------------===//

func.func @relu_int(%x: tensor<4xi32>) {
  // expected-error @+1 {{'train.relu' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4xi32>'}}
  %0 = train.relu %x : tensor<4xi32>
  return
}

// -----

func.func @add_element_types(%a: tensor<2x3xf32>, %b: tensor<2x3xf16>) {
  // expected-error @+1 {{'train.add' op expects operands of one element type, got 'f32' and 'f16'}}
  %0 = train.add %a, %b : tensor<2x3xf32>, tensor<2x3xf16>
  return
}

// -----

func.func @add_broadcast(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{'train.add' op expects broadcast-compatible shapes, got [2, 3] and [4, 3]}}
  %0 = train.add %a, %b : tensor<2x3xf32>, tensor<4x3xf32>
  return
}

// -----

func.func @sub_element_types(%a: tensor<3xbf16>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'train.sub' op expects operands of one element type, got 'bf16' and 'f32'}}
  %0 = train.sub %a, %b : tensor<3xbf16>, tensor<3xf32>
  return
}

// -----

func.func @sub_broadcast(%a: tensor<?x5xf32>, %b: tensor<?x4xf32>) {
  // expected-error @+1 {{'train.sub' op expects broadcast-compatible shapes, got [?, 5] and [?, 4]}}
  %0 = train.sub %a, %b : tensor<?x5xf32>, tensor<?x4xf32>
  return
}

// -----

func.func @mul_element_types(%a: tensor<3xf16>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'train.mul' op expects operands of one element type, got 'f16' and 'f32'}}
  %0 = train.mul %a, %b : tensor<3xf16>, tensor<3xf32>
  return
}

// -----

func.func @mul_broadcast(%a: tensor<2x3x4xf32>, %b: tensor<3x3x4xf32>) {
  // expected-error @+1 {{'train.mul' op expects broadcast-compatible shapes, got [2, 3, 4] and [3, 3, 4]}}
  %0 = train.mul %a, %b : tensor<2x3x4xf32>, tensor<3x3x4xf32>
  return
}

// -----

func.func @div_element_types(%a: tensor<3xf32>, %b: tensor<f16>) {
  // expected-error @+1 {{'train.div' op expects operands of one element type, got 'f32' and 'f16'}}
  %0 = train.div %a, %b : tensor<3xf32>, tensor<f16>
  return
}

// -----

func.func @div_broadcast(%a: tensor<3xf32>, %b: tensor<2xf32>) {
  // expected-error @+1 {{'train.div' op expects broadcast-compatible shapes, got [3] and [2]}}
  %0 = train.div %a, %b : tensor<3xf32>, tensor<2xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.conv2d
//===----------------------------------------------------------------------===//

func.func @conv2d_input_rank(%x: tensor<3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'train.conv2d' op expects an NCHW input of rank 4, got 'tensor<3x8x8xf32>'}}
  %0 = train.conv2d %x, %w : tensor<3x8x8xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

func.func @conv2d_filter_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3xf32>) {
  // expected-error @+1 {{'train.conv2d' op expects an OIHW filter of rank 4, got 'tensor<4x3x3xf32>'}}
  %0 = train.conv2d %x, %w : tensor<1x3x8x8xf32>, tensor<4x3x3xf32>
  return
}

// -----

func.func @conv2d_stride_entries(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'train.conv2d' op expects 'stride' to have 2 entries [h, w], got 3}}
  %0 = train.conv2d %x, %w {stride = array<i64: 1, 1, 1>} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

func.func @conv2d_stride_minimum(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'train.conv2d' op expects 'stride' entries >= 1, got [0, 1]}}
  %0 = train.conv2d %x, %w {stride = array<i64: 0, 1>} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

func.func @conv2d_padding_entries(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'train.conv2d' op expects 'padding' to have 2 entries [h, w], got 1}}
  %0 = train.conv2d %x, %w {padding = array<i64: 1>} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

func.func @conv2d_padding_minimum(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'train.conv2d' op expects 'padding' entries >= 0, got [1, -1]}}
  %0 = train.conv2d %x, %w {padding = array<i64: 1, -1>} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

func.func @conv2d_dilation_entries(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'train.conv2d' op expects 'dilation' to have 2 entries [h, w], got 0}}
  %0 = train.conv2d %x, %w {dilation = array<i64>} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

func.func @conv2d_dilation_minimum(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'train.conv2d' op expects 'dilation' entries >= 1, got [2, 0]}}
  %0 = train.conv2d %x, %w {dilation = array<i64: 2, 0>} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

func.func @conv2d_groups(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'train.conv2d' op expects 'groups' >= 1, got 0}}
  %0 = train.conv2d %x, %w {groups = 0 : i64} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

func.func @conv2d_element_types(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf16>) {
  // expected-error @+1 {{'train.conv2d' op expects input and filter of one element type, got 'f32' and 'f16'}}
  %0 = train.conv2d %x, %w : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf16>
  return
}

// -----

func.func @conv2d_dynamic_channels(%x: tensor<1x?x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'train.conv2d' op expects a static input channel count}}
  %0 = train.conv2d %x, %w : tensor<1x?x8x8xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

func.func @conv2d_dynamic_filter(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x?x?xf32>) {
  // expected-error @+1 {{'train.conv2d' op expects a filter of static shape, got [4, 3, ?, ?]}}
  %0 = train.conv2d %x, %w : tensor<1x3x8x8xf32>, tensor<4x3x?x?xf32>
  return
}

// -----

func.func @conv2d_groups_divide(%x: tensor<?x6x8x8xf32>, %w: tensor<16x1x3x3xf32>) {
  // expected-error @+1 {{'train.conv2d' op expects input channels (6) and output channels (16) divisible by groups (4)}}
  %0 = train.conv2d %x, %w {groups = 4 : i64} : tensor<?x6x8x8xf32>, tensor<16x1x3x3xf32>
  return
}

// -----

func.func @conv2d_filter_channels(%x: tensor<?x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{'train.conv2d' op expects the filter's input-channel dimension (1) to be input channels / groups = 2, got 4}}
  %0 = train.conv2d %x, %w {groups = 2 : i64} : tensor<?x4x8x8xf32>, tensor<8x4x3x3xf32>
  return
}

// -----

func.func @conv2d_bias_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<1x4xf32>) {
  // expected-error @+1 {{'train.conv2d' op expects bias of rank 1, got 'tensor<1x4xf32>'}}
  %0 = train.conv2d %x, %w, %b : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<1x4xf32>
  return
}

// -----

func.func @conv2d_bias_shape(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'train.conv2d' op expects bias of shape [4], got [8]}}
  %0 = train.conv2d %x, %w, %b : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<8xf32>
  return
}

// -----

func.func @conv2d_bias_element_type(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{'train.conv2d' op expects bias of element type 'f32', got 'f16'}}
  %0 = train.conv2d %x, %w, %b : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf16>
  return
}

// -----

func.func @conv2d_filter_too_large(%x: tensor<1x3x4x4xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'train.conv2d' op expects the dilated filter to fit the padded input, got filter [4, 3, 3, 3] over input [1, 3, 4, 4]}}
  %0 = train.conv2d %x, %w {dilation = array<i64: 2, 2>} : tensor<1x3x4x4xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.batch_norm
//===----------------------------------------------------------------------===//

func.func @batch_norm_input_rank(%x: tensor<2x4x8xf32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{'train.batch_norm' op expects an NC or NCHW input, got 'tensor<2x4x8xf32>'}}
  %0:3 = train.batch_norm %x, %v, %v, %v, %v : tensor<2x4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @batch_norm_scale_rank(%x: tensor<2x4xf32>, %s: tensor<1x4xf32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{'train.batch_norm' op expects scale of rank 1, got 'tensor<1x4xf32>'}}
  %0:3 = train.batch_norm %x, %s, %v, %v, %v : tensor<2x4xf32>, tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @batch_norm_scale_shape(%x: tensor<?x4x8x8xf32>, %s: tensor<3xf32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{'train.batch_norm' op expects scale of shape [4], got [3]}}
  %0:3 = train.batch_norm %x, %s, %v, %v, %v : tensor<?x4x8x8xf32>, tensor<3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @batch_norm_bias_rank(%x: tensor<2x4xf32>, %b: tensor<f32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{'train.batch_norm' op expects bias of rank 1, got 'tensor<f32>'}}
  %0:3 = train.batch_norm %x, %v, %b, %v, %v : tensor<2x4xf32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @batch_norm_bias_shape(%x: tensor<2x4xf32>, %b: tensor<5xf32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{'train.batch_norm' op expects bias of shape [4], got [5]}}
  %0:3 = train.batch_norm %x, %v, %b, %v, %v : tensor<2x4xf32>, tensor<4xf32>, tensor<5xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

// The statistics follow the scale's element type (f32 under AMP), not the
// input's.
func.func @batch_norm_bias_element_type(%x: tensor<2x4xf16>, %b: tensor<4xf16>, %v: tensor<4xf32>) {
  // expected-error @+1 {{'train.batch_norm' op expects bias of element type 'f32', got 'f16'}}
  %0:3 = train.batch_norm %x, %v, %b, %v, %v : tensor<2x4xf16>, tensor<4xf32>, tensor<4xf16>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @batch_norm_running_mean_rank(%x: tensor<2x4xf32>, %m: tensor<4x1xf32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{'train.batch_norm' op expects running_mean of rank 1, got 'tensor<4x1xf32>'}}
  %0:3 = train.batch_norm %x, %v, %v, %m, %v : tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x1xf32>, tensor<4xf32>
  return
}

// -----

func.func @batch_norm_running_mean_shape(%x: tensor<2x4xf32>, %m: tensor<2xf32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{'train.batch_norm' op expects running_mean of shape [4], got [2]}}
  %0:3 = train.batch_norm %x, %v, %v, %m, %v : tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2xf32>, tensor<4xf32>
  return
}

// -----

func.func @batch_norm_running_mean_element_type(%x: tensor<2x4xf32>, %m: tensor<4xbf16>, %v: tensor<4xf32>) {
  // expected-error @+1 {{'train.batch_norm' op expects running_mean of element type 'f32', got 'bf16'}}
  %0:3 = train.batch_norm %x, %v, %v, %m, %v : tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xbf16>, tensor<4xf32>
  return
}

// -----

func.func @batch_norm_running_var_rank(%x: tensor<2x4xf32>, %r: tensor<1x1x4xf32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{'train.batch_norm' op expects running_var of rank 1, got 'tensor<1x1x4xf32>'}}
  %0:3 = train.batch_norm %x, %v, %v, %v, %r : tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<1x1x4xf32>
  return
}

// -----

func.func @batch_norm_running_var_shape(%x: tensor<2x4xf32>, %r: tensor<8xf32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{'train.batch_norm' op expects running_var of shape [4], got [8]}}
  %0:3 = train.batch_norm %x, %v, %v, %v, %r : tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>
  return
}

// -----

func.func @batch_norm_running_var_element_type(%x: tensor<2x4xf32>, %r: tensor<4xf16>, %v: tensor<4xf32>) {
  // expected-error @+1 {{'train.batch_norm' op expects running_var of element type 'f32', got 'f16'}}
  %0:3 = train.batch_norm %x, %v, %v, %v, %r : tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf16>
  return
}

// -----

func.func @batch_norm_epsilon(%x: tensor<2x4xf32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{'train.batch_norm' op expects a positive 'epsilon', got 0.000000e+00}}
  %0:3 = train.batch_norm %x, %v, %v, %v, %v {epsilon = 0.0 : f32} : tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @batch_norm_momentum(%x: tensor<2x4xf32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{'train.batch_norm' op expects 'momentum' in [0, 1], got 1.500000e+00}}
  %0:3 = train.batch_norm %x, %v, %v, %v, %v {momentum = 1.5 : f32} : tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.layer_norm
//===----------------------------------------------------------------------===//

func.func @layer_norm_input_rank(%x: tensor<f32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{'train.layer_norm' op expects an input of rank >= 1}}
  %0 = train.layer_norm %x, %v, %v : tensor<f32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @layer_norm_scale_rank(%x: tensor<?x4xf32>, %s: tensor<2x2xf32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{'train.layer_norm' op expects scale of rank 1, got 'tensor<2x2xf32>'}}
  %0 = train.layer_norm %x, %s, %v : tensor<?x4xf32>, tensor<2x2xf32>, tensor<4xf32>
  return
}

// -----

func.func @layer_norm_scale_shape(%x: tensor<?x4xf32>, %s: tensor<3xf32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{'train.layer_norm' op expects scale of shape [4], got [3]}}
  %0 = train.layer_norm %x, %s, %v : tensor<?x4xf32>, tensor<3xf32>, tensor<4xf32>
  return
}

// -----

func.func @layer_norm_bias_rank(%x: tensor<?x4xf32>, %v: tensor<4xf32>, %b: tensor<1x4xf32>) {
  // expected-error @+1 {{'train.layer_norm' op expects bias of rank 1, got 'tensor<1x4xf32>'}}
  %0 = train.layer_norm %x, %v, %b : tensor<?x4xf32>, tensor<4xf32>, tensor<1x4xf32>
  return
}

// -----

func.func @layer_norm_bias_shape(%x: tensor<?x4xf32>, %v: tensor<4xf32>, %b: tensor<6xf32>) {
  // expected-error @+1 {{'train.layer_norm' op expects bias of shape [4], got [6]}}
  %0 = train.layer_norm %x, %v, %b : tensor<?x4xf32>, tensor<4xf32>, tensor<6xf32>
  return
}

// -----

func.func @layer_norm_bias_element_type(%x: tensor<?x4xf16>, %v: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{'train.layer_norm' op expects bias of element type 'f32', got 'f16'}}
  %0 = train.layer_norm %x, %v, %b : tensor<?x4xf16>, tensor<4xf32>, tensor<4xf16>
  return
}

// -----

func.func @layer_norm_epsilon(%x: tensor<?x4xf32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{'train.layer_norm' op expects a positive 'epsilon'}}
  %0 = train.layer_norm %x, %v, %v {epsilon = -1.0 : f32} : tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.max_pool2d
//===----------------------------------------------------------------------===//

func.func @max_pool2d_input_rank(%x: tensor<4x8x8xf32>) {
  // expected-error @+1 {{'train.max_pool2d' op expects an NCHW input of rank 4, got 'tensor<4x8x8xf32>'}}
  %0 = train.max_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>} : tensor<4x8x8xf32>
  return
}

// -----

func.func @max_pool2d_kernel_entries(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{'train.max_pool2d' op expects 'kernel_size' to have 2 entries [h, w], got 1}}
  %0 = train.max_pool2d %x {kernel_size = array<i64: 2>, stride = array<i64: 2, 2>} : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @max_pool2d_kernel_minimum(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{'train.max_pool2d' op expects 'kernel_size' entries >= 1, got [0, 2]}}
  %0 = train.max_pool2d %x {kernel_size = array<i64: 0, 2>, stride = array<i64: 2, 2>} : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @max_pool2d_stride_entries(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{'train.max_pool2d' op expects 'stride' to have 2 entries [h, w], got 4}}
  %0 = train.max_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 1, 1, 2, 2>} : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @max_pool2d_stride_minimum(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{'train.max_pool2d' op expects 'stride' entries >= 1, got [2, -2]}}
  %0 = train.max_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, -2>} : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @max_pool2d_padding_entries(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{'train.max_pool2d' op expects 'padding' to have 2 entries [h, w], got 3}}
  %0 = train.max_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0, 0>} : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @max_pool2d_padding_minimum(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{'train.max_pool2d' op expects 'padding' entries >= 0, got [-1, 0]}}
  %0 = train.max_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: -1, 0>} : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @max_pool2d_padding_half_kernel(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{'train.max_pool2d' op expects padding at most half the kernel size, got padding 2 for kernel 3}}
  %0 = train.max_pool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 2>} : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @max_pool2d_window_fit(%x: tensor<1x4x8x2xf32>) {
  // expected-error @+1 {{'train.max_pool2d' op expects the window to fit the input, got kernel 3 over 2 (padding 0)}}
  %0 = train.max_pool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>} : tensor<1x4x8x2xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.avg_pool2d
//===----------------------------------------------------------------------===//

func.func @avg_pool2d_input_rank(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{'train.avg_pool2d' op expects an NCHW input of rank 4, got 'tensor<8x8xf32>'}}
  %0 = train.avg_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>} : tensor<8x8xf32>
  return
}

// -----

func.func @avg_pool2d_kernel_entries(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{'train.avg_pool2d' op expects 'kernel_size' to have 2 entries [h, w], got 3}}
  %0 = train.avg_pool2d %x {kernel_size = array<i64: 2, 2, 2>, stride = array<i64: 2, 2>} : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @avg_pool2d_kernel_minimum(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{'train.avg_pool2d' op expects 'kernel_size' entries >= 1, got [2, 0]}}
  %0 = train.avg_pool2d %x {kernel_size = array<i64: 2, 0>, stride = array<i64: 2, 2>} : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @avg_pool2d_stride_entries(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{'train.avg_pool2d' op expects 'stride' to have 2 entries [h, w], got 1}}
  %0 = train.avg_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2>} : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @avg_pool2d_stride_minimum(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{'train.avg_pool2d' op expects 'stride' entries >= 1, got [0, 0]}}
  %0 = train.avg_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 0, 0>} : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @avg_pool2d_padding_entries(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{'train.avg_pool2d' op expects 'padding' to have 2 entries [h, w], got 1}}
  %0 = train.avg_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 1>} : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @avg_pool2d_padding_minimum(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{'train.avg_pool2d' op expects 'padding' entries >= 0, got [0, -3]}}
  %0 = train.avg_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, -3>} : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @avg_pool2d_padding_half_kernel(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{'train.avg_pool2d' op expects padding at most half the kernel size, got padding 2 for kernel 2}}
  %0 = train.avg_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 2, 0>} : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @avg_pool2d_window_fit(%x: tensor<?x4x1x8xf32>) {
  // expected-error @+1 {{'train.avg_pool2d' op expects the window to fit the input, got kernel 2 over 1 (padding 0)}}
  %0 = train.avg_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>} : tensor<?x4x1x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.global_avg_pool
//===----------------------------------------------------------------------===//

func.func @global_avg_pool_input_rank(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'train.global_avg_pool' op expects an NCHW input of rank 4, got 'tensor<?x4xf32>'}}
  %0 = train.global_avg_pool %x : tensor<?x4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.resize_bilinear
//===----------------------------------------------------------------------===//

func.func @resize_bilinear_input_rank(%x: tensor<4x8x8xf32>) {
  // expected-error @+1 {{'train.resize_bilinear' op expects an NCHW input of rank 4, got 'tensor<4x8x8xf32>'}}
  %0 = train.resize_bilinear %x {size = array<i64: 16, 16>} : tensor<4x8x8xf32>
  return
}

// -----

func.func @resize_bilinear_size_entries(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{'train.resize_bilinear' op expects 'size' to have 2 entries [h, w], got 1}}
  %0 = train.resize_bilinear %x {size = array<i64: 16>} : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @resize_bilinear_size_minimum(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{'train.resize_bilinear' op expects 'size' entries >= 1, got [16, 0]}}
  %0 = train.resize_bilinear %x {size = array<i64: 16, 0>} : tensor<1x4x8x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.matmul
//===----------------------------------------------------------------------===//

func.func @matmul_rank(%a: tensor<4xf32>, %b: tensor<4x2xf32>) {
  // expected-error @+1 {{'train.matmul' op expects operands of rank >= 2, got 'tensor<4xf32>' and 'tensor<4x2xf32>'}}
  %0 = train.matmul %a, %b : tensor<4xf32>, tensor<4x2xf32>
  return
}

// -----

func.func @matmul_element_types(%a: tensor<3x4xf32>, %b: tensor<4x2xbf16>) {
  // expected-error @+1 {{'train.matmul' op expects operands of one element type, got 'f32' and 'bf16'}}
  %0 = train.matmul %a, %b : tensor<3x4xf32>, tensor<4x2xbf16>
  return
}

// -----

func.func @matmul_contracting(%a: tensor<3x4xf32>, %b: tensor<4x2xf32>) {
  // expected-error @+1 {{'train.matmul' op expects contracting dimensions to match, got 3 and 4 (shapes [3, 4] and [4, 2])}}
  %0 = train.matmul %a, %b {transpose_lhs = true} : tensor<3x4xf32>, tensor<4x2xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x3x4xf32>, %b: tensor<5x4x2xf32>) {
  // expected-error @+1 {{'train.matmul' op expects broadcast-compatible batch dimensions, got [2] and [5]}}
  %0 = train.matmul %a, %b : tensor<2x3x4xf32>, tensor<5x4x2xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.linear
//===----------------------------------------------------------------------===//

func.func @linear_weight_rank(%x: tensor<?x4xf32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{'train.linear' op expects an [out, in] weight of rank 2, got 'tensor<4xf32>'}}
  %0 = train.linear %x, %w : tensor<?x4xf32>, tensor<4xf32>
  return
}

// -----

func.func @linear_input_rank(%x: tensor<f32>, %w: tensor<2x4xf32>) {
  // expected-error @+1 {{'train.linear' op expects an input of rank >= 1}}
  %0 = train.linear %x, %w : tensor<f32>, tensor<2x4xf32>
  return
}

// -----

func.func @linear_element_types(%x: tensor<?x4xf16>, %w: tensor<2x4xf32>) {
  // expected-error @+1 {{'train.linear' op expects input and weight of one element type, got 'f16' and 'f32'}}
  %0 = train.linear %x, %w : tensor<?x4xf16>, tensor<2x4xf32>
  return
}

// -----

func.func @linear_in_features(%x: tensor<?x5xf32>, %w: tensor<2x4xf32>) {
  // expected-error @+1 {{'train.linear' op expects the input's last dimension (5) to match the weight's in-features (4)}}
  %0 = train.linear %x, %w : tensor<?x5xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @linear_bias_rank(%x: tensor<?x4xf32>, %w: tensor<2x4xf32>, %b: tensor<1x2xf32>) {
  // expected-error @+1 {{'train.linear' op expects bias of rank 1, got 'tensor<1x2xf32>'}}
  %0 = train.linear %x, %w, %b : tensor<?x4xf32>, tensor<2x4xf32>, tensor<1x2xf32>
  return
}

// -----

func.func @linear_bias_shape(%x: tensor<?x4xf32>, %w: tensor<2x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'train.linear' op expects bias of shape [2], got [4]}}
  %0 = train.linear %x, %w, %b : tensor<?x4xf32>, tensor<2x4xf32>, tensor<4xf32>
  return
}

// -----

func.func @linear_bias_element_type(%x: tensor<?x4xf32>, %w: tensor<2x4xf32>, %b: tensor<2xf16>) {
  // expected-error @+1 {{'train.linear' op expects bias of element type 'f32', got 'f16'}}
  %0 = train.linear %x, %w, %b : tensor<?x4xf32>, tensor<2x4xf32>, tensor<2xf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.reshape
//===----------------------------------------------------------------------===//

func.func @reshape_two_inferred(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'train.reshape' op expects at most one -1 in 'shape'}}
  %0 = train.reshape %x {shape = array<i64: -1, 3, -1>} : tensor<2x6xf32>
  return
}

// -----

func.func @reshape_bad_entry(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'train.reshape' op expects 'shape' entries >= 1 or -1, got 0}}
  %0 = train.reshape %x {shape = array<i64: 12, 0>} : tensor<2x6xf32>
  return
}

// -----

func.func @reshape_dynamic_without_inferred(%x: tensor<?x6xf32>) {
  // expected-error @+1 {{'train.reshape' op expects a -1 in 'shape' to absorb the dynamic dimension of [?, 6]}}
  %0 = train.reshape %x {shape = array<i64: 2, 3>} : tensor<?x6xf32>
  return
}

// -----

func.func @reshape_not_divisible(%x: tensor<2x6xi64>) {
  // expected-error @+1 {{'train.reshape' op cannot reshape [2, 6] (12 elements) to [-1, 5]}}
  %0 = train.reshape %x {shape = array<i64: -1, 5>} : tensor<2x6xi64>
  return
}

// -----

func.func @reshape_element_count(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'train.reshape' op expects the same element count, got [2, 6] (12) and [5, 2] (10)}}
  %0 = train.reshape %x {shape = array<i64: 5, 2>} : tensor<2x6xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.transpose
//===----------------------------------------------------------------------===//

func.func @transpose_entries(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'train.transpose' op expects a permutation of 3 entries, got 2}}
  %0 = train.transpose %x {permutation = array<i64: 1, 0>} : tensor<2x3x4xf32>
  return
}

// -----

func.func @transpose_not_permutation(%x: tensor<2x3x4xi32>) {
  // expected-error @+1 {{'train.transpose' op expects a permutation of [0, 3), got [0, 2, 2]}}
  %0 = train.transpose %x {permutation = array<i64: 0, 2, 2>} : tensor<2x3x4xi32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.concat
//===----------------------------------------------------------------------===//

// The custom syntax cannot spell an empty operand list; the generic form can.
func.func @concat_no_input() {
  // expected-error @+2 {{'train.concat' op expects at least one input}}
  // expected-error @+1 {{'train.concat' op failed to infer returned types}}
  %0 = "train.concat"() {axis = 0 : i64} : () -> tensor<0xf32>
  return
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) {
  // expected-error @+1 {{'train.concat' op expects 'axis' in [-2, 2), got 2}}
  %0 = train.concat %a, %b {axis = 2 : i64} : tensor<2x3xf32>, tensor<2x3xf32>
  return
}

// -----

func.func @concat_ranks(%a: tensor<2x3xf32>, %b: tensor<2x3x1xf32>) {
  // expected-error @+1 {{'train.concat' op expects inputs of one rank and element type, got 'tensor<2x3xf32>' and 'tensor<2x3x1xf32>'}}
  %0 = train.concat %a, %b {axis = 0 : i64} : tensor<2x3xf32>, tensor<2x3x1xf32>
  return
}

// -----

func.func @concat_dimensions(%a: tensor<?x3x8xf32>, %b: tensor<?x3x4xf32>) {
  // expected-error @+1 {{'train.concat' op expects inputs to agree in dimension 2, got [?, 3, 8] and [?, 3, 4]}}
  %0 = train.concat %a, %b {axis = 1 : i64} : tensor<?x3x8xf32>, tensor<?x3x4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.slice
//===----------------------------------------------------------------------===//

func.func @slice_axis(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'train.slice' op expects 'axis' in [-2, 2), got -3}}
  %0 = train.slice %x {axis = -3 : i64, start = 0 : i64, end = 1 : i64} : tensor<?x8xf32>
  return
}

// -----

func.func @slice_step(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'train.slice' op expects 'step' >= 1, got 0}}
  %0 = train.slice %x {axis = 1 : i64, start = 0 : i64, end = 4 : i64, step = 0 : i64} : tensor<?x8xf32>
  return
}

// -----

func.func @slice_bounds(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'train.slice' op expects 0 <= start < end <= [8], got start 2 and end 9}}
  %0 = train.slice %x {axis = 1 : i64, start = 2 : i64, end = 9 : i64} : tensor<?x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.softmax
//===----------------------------------------------------------------------===//

func.func @softmax_axis(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'train.softmax' op expects 'axis' in [-2, 2), got 2}}
  %0 = train.softmax %x {axis = 2 : i64} : tensor<?x8xf32>
  return
}

// -----

func.func @softmax_causal_axis(%x: tensor<?x8x8xf32>) {
  // expected-error @+1 {{'train.softmax' op expects a causal softmax over the last dimension of an input of rank >= 2}}
  %0 = train.softmax %x {axis = 1 : i64, causal = true} : tensor<?x8x8xf32>
  return
}

// -----

func.func @softmax_causal_queries(%x: tensor<?x16x8xf32>) {
  // expected-error @+1 {{'train.softmax' op expects no more queries (16) than keys (8) in a causal softmax}}
  %0 = train.softmax %x {causal = true} : tensor<?x16x8xf32>
  return
}

// -----

func.func @softmax_mask_element_type(%x: tensor<?x8x8xf32>, %m: tensor<8x8xf16>) {
  // expected-error @+1 {{'train.softmax' op expects a mask of the input's element type, got 'f16'}}
  %0 = train.softmax %x mask %m : tensor<?x8x8xf32>, tensor<8x8xf16>
  return
}

// -----

func.func @softmax_mask_broadcast(%x: tensor<?x8x8xf32>, %m: tensor<2x1x8x8xf32>) {
  // expected-error @+1 {{'train.softmax' op expects a mask that broadcasts to the input, got [2, 1, 8, 8] for [?, 8, 8]}}
  %0 = train.softmax %x mask %m : tensor<?x8x8xf32>, tensor<2x1x8x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.embedding
//===----------------------------------------------------------------------===//

func.func @embedding_table_rank(%t: tensor<10x4x2xf32>, %i: tensor<?x8xi64>) {
  // expected-error @+1 {{'train.embedding' op expects a [rows, features] table of rank 2, got 'tensor<10x4x2xf32>'}}
  %0 = train.embedding %t, %i : tensor<10x4x2xf32>, tensor<?x8xi64>
  return
}

// -----

func.func @embedding_float_indices(%t: tensor<10x4xf32>, %i: tensor<?x8xf32>) {
  // expected-error @+1 {{'train.embedding' op operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<?x8xf32>'}}
  %0 = train.embedding %t, %i : tensor<10x4xf32>, tensor<?x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.softmax_cross_entropy
//===----------------------------------------------------------------------===//

func.func @softmax_cross_entropy_logits_rank(%l: tensor<10xf32>, %y: tensor<i64>) {
  // expected-error @+1 {{'train.softmax_cross_entropy' op expects logits of rank >= 2 (batch and classes), got 'tensor<10xf32>'}}
  %0 = train.softmax_cross_entropy %l, %y : tensor<10xf32>, tensor<i64>
  return
}

// -----

func.func @softmax_cross_entropy_class_axis(%l: tensor<?x10xf32>, %y: tensor<?xi64>) {
  // expected-error @+1 {{'train.softmax_cross_entropy' op expects 'class_axis' in [1, 2), got 0}}
  %0 = train.softmax_cross_entropy %l, %y {class_axis = 0 : i64} : tensor<?x10xf32>, tensor<?xi64>
  return
}

// -----

func.func @softmax_cross_entropy_labels_shape(%l: tensor<?x19x4x4xf32>, %y: tensor<?x4x5xi64>) {
  // expected-error @+1 {{'train.softmax_cross_entropy' op expects labels of shape [?, 4, 4] (the logits without the class dimension), got [?, 4, 5]}}
  %0 = train.softmax_cross_entropy %l, %y : tensor<?x19x4x4xf32>, tensor<?x4x5xi64>
  return
}

// -----

func.func @softmax_cross_entropy_float_labels(%l: tensor<?x10xf32>, %y: tensor<?xf32>) {
  // expected-error @+1 {{'train.softmax_cross_entropy' op operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<?xf32>'}}
  %0 = train.softmax_cross_entropy %l, %y : tensor<?x10xf32>, tensor<?xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.reduce_sum, train.reduce_mean, train.reduce_max
//===----------------------------------------------------------------------===//

func.func @reduce_sum_no_axes(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'train.reduce_sum' op expects at least one axis to reduce}}
  %0 = train.reduce_sum %x {axes = array<i64>} : tensor<?x8xf32>
  return
}

// -----

func.func @reduce_sum_axis_range(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'train.reduce_sum' op expects axes in [-2, 2), got 2}}
  %0 = train.reduce_sum %x {axes = array<i64: 0, 2>} : tensor<?x8xf32>
  return
}

// -----

func.func @reduce_sum_distinct(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'train.reduce_sum' op expects distinct axes, got 1 twice}}
  %0 = train.reduce_sum %x {axes = array<i64: 1, -1>} : tensor<?x8xf32>
  return
}

// -----

func.func @reduce_mean_no_axes(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'train.reduce_mean' op expects at least one axis to reduce}}
  %0 = train.reduce_mean %x {axes = array<i64>, keep_dims = true} : tensor<?x8xf32>
  return
}

// -----

func.func @reduce_mean_axis_range(%x: tensor<?x8x4xf32>) {
  // expected-error @+1 {{'train.reduce_mean' op expects axes in [-3, 3), got -4}}
  %0 = train.reduce_mean %x {axes = array<i64: -4>} : tensor<?x8x4xf32>
  return
}

// -----

func.func @reduce_mean_distinct(%x: tensor<?x8x4xf32>) {
  // expected-error @+1 {{'train.reduce_mean' op expects distinct axes, got 2 twice}}
  %0 = train.reduce_mean %x {axes = array<i64: 2, 1, 2>} : tensor<?x8x4xf32>
  return
}

// -----

func.func @reduce_max_no_axes(%x: tensor<4xf32>) {
  // expected-error @+1 {{'train.reduce_max' op expects at least one axis to reduce}}
  %0 = train.reduce_max %x {axes = array<i64>} : tensor<4xf32>
  return
}

// -----

func.func @reduce_max_axis_range(%x: tensor<f32>) {
  // expected-error @+1 {{'train.reduce_max' op expects axes in [0, 0), got 0}}
  %0 = train.reduce_max %x {axes = array<i64: 0>} : tensor<f32>
  return
}

// -----

func.func @reduce_max_distinct(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'train.reduce_max' op expects distinct axes, got 0 twice}}
  %0 = train.reduce_max %x {axes = array<i64: -2, 0>} : tensor<4x4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Argument attributes: train.name
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'func.func' op argument #0 'train.name' expects a non-empty string}}
func.func @name_empty(%x: tensor<?x4xf32> {train.name = ""}) {
  return
}

// -----

//===----------------------------------------------------------------------===//
// Argument attributes: train.input, train.label
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'func.func' op argument #0 'train.input' expects a unit attribute}}
func.func @input_not_unit(%x: tensor<?x4xf32> {train.input = true}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #1 'train.label' expects a unit attribute}}
func.func @label_not_unit(%x: tensor<?x4xf32> {train.input}, %y: tensor<?xi64> {train.label = 1 : i64}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0 'train.input' expects a ranked tensor argument}}
func.func @input_not_tensor(%x: f32 {train.input}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0 'train.label' expects a ranked tensor argument}}
func.func @label_unranked(%y: tensor<*xi64> {train.label}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0 'train.label' expects integer labels, got 'tensor<?xf32>'}}
func.func @label_float(%y: tensor<?xf32> {train.label}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0 expects only the batch dimension (0) to be dynamic, got 'tensor<?x?xf32>'}}
func.func @input_dynamic_feature(%x: tensor<?x?xf32> {train.input}) {
  return
}

// -----

//===----------------------------------------------------------------------===//
// Argument attributes: train.param, train.buffer initializers
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'func.func' op argument #0 'train.param' expects a dictionary with an 'init' entry, got "zeros"}}
func.func @param_not_dictionary(%w: tensor<4xf32> {train.param = "zeros"}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0 'train.buffer' expects a dictionary with an 'init' entry, got unit}}
func.func @buffer_not_dictionary(%w: tensor<4xf32> {train.buffer}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0 'train.param' expects a string 'init' entry naming the initializer}}
func.func @param_no_init(%w: tensor<4xf32> {train.param = {std = 1.0 : f64}}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0 'train.param' has unknown initializer "glorot" (expected zeros, ones, constant, normal, truncated_normal, uniform, kaiming_normal, kaiming_uniform, xavier_normal or xavier_uniform)}}
func.func @param_unknown_init(%w: tensor<4xf32> {train.param = {init = "glorot"}}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0 'train.buffer' expects 'value' for initializer "constant"}}
func.func @constant_no_value(%w: tensor<4xf32> {train.buffer = {init = "constant"}}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0 'train.param' expects 'std' for initializer "normal"}}
func.func @normal_no_std(%w: tensor<4xf32> {train.param = {init = "normal", mean = 0.0 : f64}}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0 'train.param' expects 'std' for initializer "truncated_normal"}}
func.func @truncated_normal_no_std(%w: tensor<4xf32> {train.param = {init = "truncated_normal"}}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0 'train.param' expects 'low' for initializer "uniform"}}
func.func @uniform_no_low(%w: tensor<4xf32> {train.param = {init = "uniform", high = 1.0 : f64}}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0 'train.param' expects 'high' for initializer "uniform"}}
func.func @uniform_no_high(%w: tensor<4xf32> {train.param = {init = "uniform", low = 0.0 : f64}}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0 'train.param' has unexpected key 'std' for initializer "zeros"}}
func.func @zeros_unexpected_key(%w: tensor<4xf32> {train.param = {init = "zeros", std = 1.0 : f64}}) {
  return
}

// -----

// The storage order dlc-convert-layout gives a filter must permute its
// dimensions.
// expected-error @+1 {{'func.func' op argument #0 'train.param' expects 'storage' to be a permutation of its 4 dimensions, got array<i64: 0, 2, 3>}}
func.func @storage_not_a_permutation(%w: tensor<4x3x3x3xf32> {train.param = {init = "zeros", storage = array<i64: 0, 2, 3>}}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0 'train.optimizer_state' expects 'storage' to be an array of dimensions, got "OHWI"}}
func.func @storage_not_an_array(%w: tensor<4x3x3x3xf32> {train.optimizer_state = {init = "zeros", storage = "OHWI"}}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0 'train.param' expects 'mode' to be "fan_in" or "fan_out"}}
func.func @kaiming_bad_mode(%w: tensor<4x4xf32> {train.param = {init = "kaiming_normal", mode = "fan_avg"}}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0 'train.param' expects 'nonlinearity' to be "relu", "leaky_relu" or "linear"}}
func.func @kaiming_bad_nonlinearity(%w: tensor<4x4xf32> {train.param = {init = "kaiming_uniform", nonlinearity = "tanh"}}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0 'train.param' expects 'gain' to be a float, got 1 : i64}}
func.func @xavier_gain_not_float(%w: tensor<4x4xf32> {train.param = {init = "xavier_uniform", gain = 1 : i64}}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0 'train.param' expects a positive 'std'}}
func.func @normal_std_not_positive(%w: tensor<4xf32> {train.param = {init = "normal", std = 0.0 : f64}}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0 'train.param' expects 'low' < 'high'}}
func.func @uniform_low_high(%w: tensor<4xf32> {train.param = {init = "uniform", low = 1.0 : f64, high = -1.0 : f64}}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0 'train.param' expects a float tensor of static shape, got 'tensor<4xi32>'}}
func.func @param_int_tensor(%w: tensor<4xi32> {train.param = {init = "zeros"}}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0 'train.buffer' expects a float tensor of static shape, got 'tensor<?xf32>'}}
func.func @buffer_dynamic(%w: tensor<?xf32> {train.buffer = {init = "ones"}}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op has unknown train dialect argument attribute 'train.weight'}}
func.func @unknown_argument_attribute(%w: tensor<4xf32> {train.weight}) {
  return
}

// -----

//===----------------------------------------------------------------------===//
// Function attributes: train.optimizer
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'func.func' op has unknown train dialect attribute 'train.schedule'}}
func.func @unknown_attribute() attributes {train.schedule = "cosine"} {
  return
}

// -----

// expected-error @+1 {{'func.func' op 'train.optimizer' expects a dictionary with a string 'kind'}}
func.func @optimizer_no_kind() attributes {train.optimizer = {lr = 0.1 : f64}} {
  return
}

// -----

// expected-error @+1 {{'func.func' op 'train.optimizer' has unknown kind "adam" (expected "sgd" or "adamw")}}
func.func @optimizer_unknown_kind() attributes {train.optimizer = {kind = "adam", lr = 0.1 : f64}} {
  return
}

// -----

// expected-error @+1 {{'func.func' op 'train.optimizer' has unexpected key 'beta1' for "sgd"}}
func.func @optimizer_unexpected_key() attributes {train.optimizer = {kind = "sgd", lr = 0.1 : f64, beta1 = 0.9 : f64}} {
  return
}

// -----

// expected-error @+1 {{'func.func' op 'train.optimizer' expects 'nesterov' to be a bool}}
func.func @optimizer_nesterov_not_bool() attributes {train.optimizer = {kind = "sgd", lr = 0.1 : f64, nesterov = 1.0 : f64}} {
  return
}

// -----

// expected-error @+1 {{'func.func' op 'train.optimizer' expects 'lr' to be a float}}
func.func @optimizer_lr_not_float() attributes {train.optimizer = {kind = "adamw", lr = 1 : i64}} {
  return
}

// -----

//===----------------------------------------------------------------------===//
// Required attributes missing in the custom form (reported by inference,
// which the parser runs before the op exists)
//===----------------------------------------------------------------------===//

func.func @max_pool2d_missing_kernel(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'train.max_pool2d' op requires attribute 'kernel_size'}}
  %0 = train.max_pool2d %x {stride = array<i64: 1, 1>} : tensor<1x1x4x4xf32>
  return
}

// -----

func.func @slice_missing_end(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'train.slice' op requires attribute 'end'}}
  %0 = train.slice %x {axis = 0 : i64, start = 0 : i64} : tensor<2x3xf32>
  return
}

// -----

// Written with no attribute dictionary at all, an op's properties are
// empty rather than partly filled; each is reported, never a crash.

func.func @transpose_no_attributes(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'train.transpose' op requires attribute 'permutation'}}
  %0 = train.transpose %x : tensor<2x3xf32>
  return
}

// -----

func.func @reshape_no_attributes(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'train.reshape' op requires attribute 'shape'}}
  %0 = train.reshape %x : tensor<2x3xf32>
  return
}

// -----

func.func @concat_no_attributes(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'train.concat' op requires attribute 'axis'}}
  %0 = train.concat %x, %x : tensor<2x3xf32>, tensor<2x3xf32>
  return
}

// -----

func.func @sum_to_shape_no_attributes(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'train.sum_to_shape' op requires attribute 'shape'}}
  %0 = train.sum_to_shape %x : tensor<2x3xf32>
  return
}

// -----

func.func @broadcast_to_no_attributes(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'train.broadcast_to' op requires attribute 'shape'}}
  %0 = train.broadcast_to %x : tensor<2x3xf32>
  return
}

// -----

func.func @dropout_no_attributes(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'train.dropout' op requires attribute 'rate'}}
  %0 = train.dropout %x : tensor<2x3xf32>
  return
}

// -----

func.func @embedding_backward_no_attributes(%g: tensor<2x3xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{'train.embedding_backward' op requires attribute 'num_rows'}}
  %0 = train.embedding_backward %g, %i : tensor<2x3xf32>, tensor<2xi64>
  return
}

// -----

func.func @embedding_backward_scalar_grad(%g: tensor<f32>, %i: tensor<i64>) {
  // expected-error @+1 {{'train.embedding_backward' op expects a gradient of rank >= 1, got 'tensor<f32>'}}
  %0 = train.embedding_backward %g, %i {num_rows = 4 : i64} : tensor<f32>, tensor<i64>
  return
}

// -----

// The custom syntax parses the status's type as any type, before the
// verifier checks it; inference must not assume a ranked tensor.
func.func @sgd_update_status_not_tensor(%p: tensor<3xf32>, %s: f32) {
  // expected-error @+1 {{'train.sgd_update' op expects a loss-scale status of 2 elements, got 'f32'}}
  %0:2 = train.sgd_update %p, %p, %p unscale(%s : f32) {lr = 1.0 : f32} : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  return
}

// -----

func.func @sgd_update_status_unranked(%p: tensor<3xf32>, %s: tensor<*xf32>) {
  // expected-error @+1 {{'train.sgd_update' op expects a loss-scale status of 2 elements, got 'tensor<*xf32>'}}
  %0:2 = train.sgd_update %p, %p, %p unscale(%s : tensor<*xf32>) {lr = 1.0 : f32} : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  return
}

// -----

func.func @reshape_overflowing_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'train.reshape' op expects 'shape' to have fewer than 2^63 elements}}
  %0 = train.reshape %x {shape = array<i64: -1, 4294967296, 4294967296>} : tensor<2x3xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.fused
//===----------------------------------------------------------------------===//

func.func @fused_argument_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.fused' op expects one block argument per input, got 2 for 1 inputs}}
  %r = train.fused "elewise_act" (%x) {strategy = "paddle"} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    train.yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @fused_argument_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.fused' op expects block argument #0 of type 'tensor<4xf32>', got 'tensor<4xf16>'}}
  %r = train.fused "elewise_act" (%x) {strategy = "paddle"} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf16>):
    %c = train.cast %a to f32 : tensor<4xf16>
    train.yield %c : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @fused_yield_types(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.fused' op expects the yielded types to be the result types}}
  %r = train.fused "elewise_act" (%x) {strategy = "paddle"} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %c = train.cast %a to f16 : tensor<4xf32>
    train.yield %c : tensor<4xf16>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @fused_nested(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = train.fused "outer" (%x) {strategy = "paddle"} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @+1 {{'train.fused' op cannot be inside a train.fused group}}
    %i = train.fused "inner" (%a) {strategy = "paddle"} : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%b: tensor<4xf32>):
      train.yield %b : tensor<4xf32>
    }
    train.yield %i : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @fused_empty_kind(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'train.fused' op expects a non-empty kind}}
  %r = train.fused "" (%x) {strategy = "paddle"} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    train.yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Backward and optimizer ops
//===----------------------------------------------------------------------===//

func.func @activation_backward_types(%dy: tensor<4x8xf32>, %x: tensor<4x4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'train.relu_backward' op expects the gradient and the saved forward value of one type, got 'tensor<4x8xf32>' and 'tensor<4x4xf32>'}}
  %0 = train.relu_backward %dy, %x : tensor<4x8xf32>, tensor<4x4xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @sum_to_shape_not_broadcast(%dy: tensor<4x8xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'train.sum_to_shape' op expects [3] to broadcast to the input's shape [4, 8]}}
  %0 = train.sum_to_shape %dy {shape = array<i64: 3>} : tensor<4x8xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @broadcast_to_not_broadcast(%x: tensor<3xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'train.broadcast_to' op expects the input's shape [3] to broadcast to [4, 8]}}
  %0 = train.broadcast_to %x {shape = array<i64: 4, 8>} : tensor<3xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @conv_backward_data_rank(%dy: tensor<4x8xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+1 {{'train.conv2d_backward_data' op expects a gradient of rank 4, got 'tensor<4x8xf32>'}}
  %0 = train.conv2d_backward_data %dy, %w {input_shape = array<i64: 4, 3, 8, 8>} : tensor<4x8xf32>, tensor<8x3x3x3xf32>
  return
}

// -----

func.func @conv_backward_data_shape(%dy: tensor<2x8x6x6xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+1 {{'train.conv2d_backward_data' op expects an NCHW 'input_shape'}}
  %0 = train.conv2d_backward_data %dy, %w {input_shape = array<i64: 2, 3, 8>} : tensor<2x8x6x6xf32>, tensor<8x3x3x3xf32>
  return
}

// -----

func.func @conv_backward_filter_shape(%dy: tensor<2x8x6x6xf32>, %x: tensor<2x3x8x8xf32>) {
  // expected-error @+1 {{'train.conv2d_backward_filter' op expects an OIHW 'filter_shape'}}
  %0 = train.conv2d_backward_filter %dy, %x {filter_shape = array<i64: 8, 3, 3>} : tensor<2x8x6x6xf32>, tensor<2x3x8x8xf32>
  return
}

// -----

func.func @batch_norm_backward_input(%dy: tensor<2x4x3x3xf32>, %x: tensor<2x4x3x2xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'train.batch_norm_backward' op expects the input of type 'tensor<2x4x3x3xf32>', got 'tensor<2x4x3x2xf32>'}}
  %0:3 = train.batch_norm_backward %dy, %x, %g : tensor<2x4x3x3xf32>, tensor<2x4x3x2xf32>, tensor<4xf32>
  return
}

// -----

func.func @avg_pool_backward_dynamic(%dy: tensor<2x4x3x3xf32>) {
  // expected-error @+1 {{'train.avg_pool2d_backward' op expects 'input_shape' to be a static shape, got [2, 4, ?, 6]}}
  %0 = train.avg_pool2d_backward %dy {input_shape = array<i64: 2, 4, -9223372036854775808, 6>, kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>} : tensor<2x4x3x3xf32>
  return
}

// -----

func.func @slice_backward_rank(%dy: tensor<2x1x8xf32>) {
  // expected-error @+1 {{'train.slice_backward' op expects 'input_shape' of the gradient's rank}}
  %0 = train.slice_backward %dy {axis = 1 : i64, end = 1 : i64, input_shape = array<i64: 2, 8>, start = 0 : i64} : tensor<2x1x8xf32>
  return
}

// -----

func.func @softmax_backward_output(%dy: tensor<2x8xf32>, %y: tensor<2x4xf32>) {
  // expected-error @+1 {{'train.softmax_backward' op expects the forward output of type 'tensor<2x8xf32>', got 'tensor<2x4xf32>'}}
  %0 = train.softmax_backward %dy, %y : tensor<2x8xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @embedding_backward_rows(%dy: tensor<2x5x4xf32>, %ids: tensor<2x5xi64>) {
  // expected-error @+1 {{'train.embedding_backward' op expects 'num_rows' >= 1}}
  %0 = train.embedding_backward %dy, %ids {num_rows = 0 : i64} : tensor<2x5x4xf32>, tensor<2x5xi64>
  return
}

// -----

func.func @sgd_grad_type(%p: tensor<4xf32>, %g: tensor<5xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'train.sgd_update' op expects the gradient of type 'tensor<4xf32>', got 'tensor<5xf32>'}}
  %0:2 = train.sgd_update %p, %g, %b {lr = 0.1 : f32} : tensor<4xf32>, tensor<5xf32>, tensor<4xf32>
  return
}

// -----

func.func @sgd_buffer_type(%p: tensor<4xf32>, %g: tensor<4xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{'train.sgd_update' op expects the momentum buffer of type 'tensor<4xf32>', got 'tensor<5xf32>'}}
  %0:2 = train.sgd_update %p, %g, %b {lr = 0.1 : f32} : tensor<4xf32>, tensor<4xf32>, tensor<5xf32>
  return
}

// -----

func.func @adamw_moment_type(%p: tensor<4xf32>, %g: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<3xf32>) {
  // expected-error @+1 {{'train.adamw_update' op expects exp_avg_sq of type 'tensor<4xf32>', got 'tensor<3xf32>'}}
  %0:3 = train.adamw_update %p, %g, %m, %v {lr = 1.0e-3 : f32} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3xf32>
  return
}

// -----

func.func @adamw_first_moment_type(%p: tensor<4xf32>, %g: tensor<4xf32>, %m: tensor<2xf32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{'train.adamw_update' op expects exp_avg of type 'tensor<4xf32>', got 'tensor<2xf32>'}}
  %0:3 = train.adamw_update %p, %g, %m, %v {lr = 1.0e-3 : f32} : tensor<4xf32>, tensor<4xf32>, tensor<2xf32>, tensor<4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Training-step result attributes
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'func.func' op result #0 'train.update_of' expects the index of an argument, got 5 : i64}}
func.func @update_of_range(%p: tensor<4xf32>) -> (tensor<4xf32> {train.update_of = 5 : i64}) {
  return %p : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op result #0 updates argument #0 of another type}}
func.func @update_of_type(%p: tensor<4xf32>, %q: tensor<3xf32>) -> (tensor<3xf32> {train.update_of = 0 : i64}) {
  return %q : tensor<3xf32>
}

// -----

// expected-error @+1 {{'func.func' op has unknown train dialect result attribute 'train.next'}}
func.func @unknown_result_attr(%p: tensor<4xf32>) -> (tensor<4xf32> {train.next = 0 : i64}) {
  return %p : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op argument #0 'train.optimizer_state' has unknown initializer "bogus"}}
func.func @optimizer_state_init(%m: tensor<4xf32> {train.optimizer_state = {init = "bogus"}}) {
  return
}

// -----

func.func @status_without_gradients(%s: tensor<f32>) {
  // expected-error @+2 {{'train.loss_scale_status' op expects at least one gradient}}
  // expected-error @+1 {{'train.loss_scale_status' op failed to infer returned types}}
  %0 = "train.loss_scale_status"(%s) : (tensor<f32>) -> tensor<2xf32>
  return
}

// -----

func.func @status_size(%p: tensor<4xf32>, %st: tensor<3xf32>) {
  // expected-error @+1 {{'train.sgd_update' op expects a loss-scale status of 2 elements, got 'tensor<3xf32>'}}
  %0:2 = train.sgd_update %p, %p, %p unscale(%st : tensor<3xf32>) {lr = 0.1 : f32} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @adamw_status_size(%p: tensor<4xf32>, %st: tensor<1xf32>) {
  // expected-error @+1 {{'train.adamw_update' op expects a loss-scale status of 2 elements, got 'tensor<1xf32>'}}
  %0:3 = train.adamw_update %p, %p, %p, %p unscale(%st : tensor<1xf32>) {lr = 0.1 : f32} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @scale_update_status(%s: tensor<f32>, %st: tensor<4xf32>) {
  // expected-error @+1 {{'train.update_loss_scale' op expects a loss-scale status of 2 elements, got 'tensor<4xf32>'}}
  %0:2 = train.update_loss_scale %s, %s, %st : tensor<f32>, tensor<f32>, tensor<4xf32>
  return
}

// -----

func.func @growth_interval(%s: tensor<f32>, %st: tensor<2xf32>) {
  // expected-error @+1 {{'train.update_loss_scale' op expects a 'growth_interval' >= 1, got 0}}
  %0:2 = train.update_loss_scale %s, %s, %st {growth_interval = 0 : i64} : tensor<f32>, tensor<f32>, tensor<2xf32>
  return
}

// -----

func.func @growth_factor(%s: tensor<f32>, %st: tensor<2xf32>) {
  // expected-error @+1 {{'train.update_loss_scale' op expects a 'growth_factor' >= 1}}
  %0:2 = train.update_loss_scale %s, %s, %st {growth_factor = 0.5 : f32} : tensor<f32>, tensor<f32>, tensor<2xf32>
  return
}

// -----

func.func @backoff_factor(%s: tensor<f32>, %st: tensor<2xf32>) {
  // expected-error @+1 {{'train.update_loss_scale' op expects a 'backoff_factor' in (0, 1)}}
  %0:2 = train.update_loss_scale %s, %s, %st {backoff_factor = 1.0 : f32} : tensor<f32>, tensor<f32>, tensor<2xf32>
  return
}

// -----

func.func @seed_not_constant(%x: tensor<4xf32>) {
  // expected-error @+1 {{'train.relu' op 'train.seed_gradient' expects a unit attribute on a train.constant}}
  %0 = train.relu %x {train.seed_gradient} : tensor<4xf32>
  return
}

// -----

func.func @half_param_state(%p: tensor<4xf16>, %b: tensor<4xbf16>) {
  // expected-error @+1 {{'train.sgd_update' op expects the momentum buffer of type 'tensor<4xf16>' or 'tensor<4xf32>', got 'tensor<4xbf16>'}}
  %0:2 = train.sgd_update %p, %p, %b {lr = 0.1 : f32} : tensor<4xf16>, tensor<4xf16>, tensor<4xbf16>
  return
}

// -----

func.func @conv2d_layout_name(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'train.conv2d' op expects 'layout' to be "NCHW" or "NHWC", got "CHWN"}}
  %0 = train.conv2d %x, %w {layout = "CHWN"} : tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

// NHWC: the channels are the input's last dimension and the filter's (OHWI).
func.func @conv2d_nhwc_filter_channels(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3x4xf32>) {
  // expected-error @+1 {{'train.conv2d' op expects the filter's input-channel dimension (3) to be input channels / groups = 3, got 4}}
  %0 = train.conv2d %x, %w {layout = "NHWC"} : tensor<1x8x8x3xf32>, tensor<4x3x3x4xf32>
  return
}

// -----

func.func @resize_bilinear_nhwc_rank(%x: tensor<4x8x8xf32>) {
  // expected-error @+1 {{'train.resize_bilinear' op expects an NHWC input of rank 4, got 'tensor<4x8x8xf32>'}}
  %0 = train.resize_bilinear %x {layout = "NHWC", size = array<i64: 16, 16>} : tensor<4x8x8xf32>
  return
}

// -----

func.func @resize_bilinear_backward_layout_name(%dy: tensor<1x4x16x16xf32>) {
  // expected-error @+1 {{'train.resize_bilinear_backward' op expects 'layout' to be "NCHW" or "NHWC", got "NCWH"}}
  %0 = train.resize_bilinear_backward %dy {input_shape = array<i64: 1, 4, 8, 8>, layout = "NCWH"} : tensor<1x4x16x16xf32>
  return
}

// -----

func.func @batch_norm_nhwc_rank(%x: tensor<2x4xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{'train.batch_norm' op expects an NHWC input, got 'tensor<2x4xf32>'}}
  %y, %m, %v = train.batch_norm %x, %s, %s, %s, %s {layout = "NHWC"} : tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @batch_norm_nhwc_channels(%x: tensor<2x5x5x4xf32>, %s: tensor<5xf32>) {
  // expected-error @+1 {{'train.batch_norm' op expects scale of shape [4], got [5]}}
  %y, %m, %v = train.batch_norm %x, %s, %s, %s, %s {layout = "NHWC"} : tensor<2x5x5x4xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>
  return
}

// -----

func.func @all_reduce_one_rank(%g: tensor<4xf32>) {
  // expected-error @+1 {{'train.all_reduce' op expects 'ranks' >= 2, got 1}}
  %r = train.all_reduce %g {ranks = 1 : i64} : tensor<4xf32>
  return
}

// -----

func.func @all_reduce_nothing() {
  // expected-error @+2 {{'train.all_reduce' op expects at least one gradient}}
  // expected-error @+1 {{'train.all_reduce' op failed to infer returned types}}
  "train.all_reduce"() {ranks = 2 : i64} : () -> ()
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.attention
//===----------------------------------------------------------------------===//

func.func @attention_rank(%q: tensor<8x4xf32>, %k: tensor<2x8x4xf32>) {
  // expected-error @+1 {{'train.attention' op expects query, key and value of one rank >= 2 ([B..., S, D]), got [8, 4], [2, 8, 4] and [2, 8, 4]}}
  %o, %l = train.attention %q, %k, %k : tensor<8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>
  return
}

// -----

func.func @attention_types(%q: tensor<2x8x4xf32>, %k: tensor<2x8x4xf16>) {
  // expected-error @+1 {{'train.attention' op expects query, key and value of one element type, got 'f32', 'f16' and 'f32'}}
  %o, %l = train.attention %q, %k, %q : tensor<2x8x4xf32>, tensor<2x8x4xf16>, tensor<2x8x4xf32>
  return
}

// -----

func.func @attention_head_dim(%q: tensor<2x8x4xf32>, %k: tensor<2x8x5xf32>) {
  // expected-error @+1 {{'train.attention' op expects query and key with the same head dimension, got [2, 8, 4] and [2, 8, 5]}}
  %o, %l = train.attention %q, %k, %k : tensor<2x8x4xf32>, tensor<2x8x5xf32>, tensor<2x8x5xf32>
  return
}

// -----

func.func @attention_keys(%q: tensor<2x8x4xf32>, %k: tensor<2x8x4xf32>, %v: tensor<2x6x4xf32>) {
  // expected-error @+1 {{'train.attention' op expects key and value with the same number of keys, got [2, 8, 4] and [2, 6, 4]}}
  %o, %l = train.attention %q, %k, %v : tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x6x4xf32>
  return
}

// -----

func.func @attention_batch(%q: tensor<2x8x4xf32>, %k: tensor<3x8x4xf32>) {
  // expected-error @+1 {{'train.attention' op expects query, key and value with the same batch dimensions, got [2, 8, 4], [3, 8, 4] and [3, 8, 4]}}
  %o, %l = train.attention %q, %k, %k : tensor<2x8x4xf32>, tensor<3x8x4xf32>, tensor<3x8x4xf32>
  return
}

// -----

func.func @attention_causal(%q: tensor<2x9x4xf32>, %k: tensor<2x8x4xf32>) {
  // expected-error @+1 {{'train.attention' op expects no more queries (9) than keys (8) in a causal attention}}
  %o, %l = train.attention %q, %k, %k {causal = true} : tensor<2x9x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>
  return
}

// -----

func.func @attention_rate(%q: tensor<2x8x4xf32>) {
  // expected-error @+1 {{'train.attention' op expects 'dropout_rate' in [0, 1), got 1.0}}
  %o, %l = train.attention %q, %q, %q {dropout_rate = 1.0 : f32} : tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>
  return
}

// -----

func.func @attention_scale(%q: tensor<2x8x4xf32>) {
  // expected-error @+1 {{'train.attention' op expects a finite 'scale'}}
  %o, %l = train.attention %q, %q, %q {scale = 0x7F800000 : f32} : tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>
  return
}

// -----

func.func @attention_mask(%q: tensor<2x8x4xf32>, %m: tensor<3x8x8xf32>) {
  // expected-error @+1 {{'train.attention' op expects a mask that broadcasts to the scores [2, 8, 8], got [3, 8, 8]}}
  %o, %l = train.attention %q, %q, %q mask %m : tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<3x8x8xf32>
  return
}

// -----

func.func @attention_backward_lse(%q: tensor<2x8x4xf32>, %l: tensor<2x8xf16>) {
  // expected-error @+1 {{'train.attention_backward' op expects an f32 lse of type 'tensor<2x8xf32>', got 'tensor<2x8xf16>'}}
  %dq, %dk, %dv = train.attention_backward %q, %q, %q, %q, %q, %l
      : tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8xf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// train.expand
//===----------------------------------------------------------------------===//

func.func @expand_not_broadcastable(%t: tensor<1x2x6xf32>, %x: tensor<?x4x6xf32>) {
  // expected-error @+1 {{'train.expand' op expects the input's shape [1, 2, 6] to broadcast to [?, 3, 6]}}
  %0 = train.expand %t, %x {shape = array<i64: -1, 3, 6>} : tensor<1x2x6xf32>, tensor<?x4x6xf32>
  return
}

// -----

func.func @expand_batch_not_first(%t: tensor<1x1x6xf32>, %x: tensor<?x4x6xf32>) {
  // expected-error @+1 {{'train.expand' op expects 'shape' of sizes >= 1 (dimension 0 may be -1, the batch), got [2, -1, 6]}}
  %0 = train.expand %t, %x {shape = array<i64: 2, -1, 6>} : tensor<1x1x6xf32>, tensor<?x4x6xf32>
  return
}
