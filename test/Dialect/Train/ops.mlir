// RUN: dlc-opt %s --split-input-file | FileCheck %s
// RUN: dlc-opt %s --split-input-file | dlc-opt --split-input-file | FileCheck %s
// Round trip of every train op in its custom assembly format: printing and
// re-parsing gives the same text, with default-valued attributes elided.

// CHECK-LABEL: func.func @constant_and_cast
func.func @constant_and_cast(%x: tensor<?x8xf32>) -> (tensor<?x8xbf16>, tensor<2xi64>) {
  // CHECK: train.constant dense<[3, 7]> : tensor<2xi64>
  %c = train.constant dense<[3, 7]> : tensor<2xi64>
  // CHECK: train.cast %{{.*}} to bf16 : tensor<?x8xf32>
  %h = train.cast %x to bf16 : tensor<?x8xf32>
  return %h, %c : tensor<?x8xbf16>, tensor<2xi64>
}

// -----

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%x: tensor<?x4xf32>, %y: tensor<4xf32>) -> tensor<?x4xf32> {
  // CHECK: train.relu %{{.*}} : tensor<?x4xf32>
  %0 = train.relu %x : tensor<?x4xf32>
  // CHECK: train.tanh
  %1 = train.tanh %0 : tensor<?x4xf32>
  // CHECK: train.sigmoid
  %2 = train.sigmoid %1 : tensor<?x4xf32>
  // CHECK: train.silu %{{.*}} : tensor<?x4xf32>
  %s = train.silu %2 : tensor<?x4xf32>
  // CHECK: train.relu6 %{{.*}} : tensor<?x4xf32>
  %r6 = train.relu6 %s : tensor<?x4xf32>
  // CHECK: train.hardswish %{{.*}} : tensor<?x4xf32>
  %hs = train.hardswish %r6 : tensor<?x4xf32>
  // CHECK: train.hardsigmoid %{{.*}} : tensor<?x4xf32>
  %hg = train.hardsigmoid %hs : tensor<?x4xf32>
  // CHECK: train.gelu %{{.*}} : tensor<?x4xf32>
  %3 = train.gelu %hg : tensor<?x4xf32>
  // CHECK: train.gelu %{{.*}} {approximate = "tanh"} : tensor<?x4xf32>
  %4 = train.gelu %3 {approximate = "tanh"} : tensor<?x4xf32>
  // CHECK: train.scale %{{.*}} {bias = 1.000000e+00 : f32, scale = 5.000000e-01 : f32}
  %5 = train.scale %4 {scale = 0.5 : f32, bias = 1.0 : f32} : tensor<?x4xf32>
  // CHECK: train.dropout %{{.*}} {rate = 1.000000e-01 : f32, seed = 7 : i64}
  %6 = train.dropout %5 {rate = 0.1 : f32, seed = 7 : i64} : tensor<?x4xf32>
  // CHECK: train.add %{{.*}}, %{{.*}} : tensor<?x4xf32>, tensor<4xf32>
  %7 = train.add %6, %y : tensor<?x4xf32>, tensor<4xf32>
  // CHECK: train.sub
  %8 = train.sub %7, %y : tensor<?x4xf32>, tensor<4xf32>
  // CHECK: train.mul
  %9 = train.mul %8, %y : tensor<?x4xf32>, tensor<4xf32>
  // CHECK: train.div
  %10 = train.div %9, %y : tensor<?x4xf32>, tensor<4xf32>
  return %10 : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @conv_norm_pool
func.func @conv_norm_pool(%x: tensor<?x8x16x16xf32>, %w: tensor<8x1x3x3xf32>,
                          %b: tensor<8xf32>, %g: tensor<8xf32>) -> tensor<?x8x1x1xf32> {
  // CHECK: train.conv2d %{{.*}}, %{{.*}}, %{{.*}} {dilation = array<i64: 2, 2>, groups = 8 : i64, padding = array<i64: 2, 2>} : tensor<?x8x16x16xf32>, tensor<8x1x3x3xf32>, tensor<8xf32>
  %0 = train.conv2d %x, %w, %b {dilation = array<i64: 2, 2>, groups = 8 : i64, padding = array<i64: 2, 2>} : tensor<?x8x16x16xf32>, tensor<8x1x3x3xf32>, tensor<8xf32>
  // CHECK: train.batch_norm {{.*}} {epsilon = 1.000000e-03 : f32} : tensor<?x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  %1, %rm, %rv = train.batch_norm %0, %g, %b, %b, %g {epsilon = 1.0e-3 : f32} : tensor<?x8x16x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  // CHECK: train.max_pool2d %{{.*}} {ceil_mode = true, kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>} : tensor<?x8x16x16xf32>
  %2 = train.max_pool2d %1 {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, ceil_mode = true} : tensor<?x8x16x16xf32>
  // CHECK: train.avg_pool2d %{{.*}} {count_include_pad = false, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : tensor<?x8x8x8xf32>
  %3 = train.avg_pool2d %2 {kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, count_include_pad = false} : tensor<?x8x8x8xf32>
  // CHECK: train.resize_bilinear %{{.*}} {align_corners = true, size = array<i64: 4, 4>} : tensor<?x8x8x8xf32>
  %4 = train.resize_bilinear %3 {size = array<i64: 4, 4>, align_corners = true} : tensor<?x8x8x8xf32>
  // CHECK: train.global_avg_pool %{{.*}} : tensor<?x8x4x4xf32>
  %5 = train.global_avg_pool %4 : tensor<?x8x4x4xf32>
  return %5 : tensor<?x8x1x1xf32>
}

// -----

// CHECK-LABEL: func.func @layer_norm
func.func @layer_norm(%x: tensor<?x16x32xf32>, %g: tensor<32xf32>) -> tensor<?x16x32xf32> {
  // CHECK: train.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 9.99999996E-13 : f32} : tensor<?x16x32xf32>, tensor<32xf32>, tensor<32xf32>
  %0 = train.layer_norm %x, %g, %g {epsilon = 1.0e-12 : f32} : tensor<?x16x32xf32>, tensor<32xf32>, tensor<32xf32>
  return %0 : tensor<?x16x32xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_linear
func.func @matmul_linear(%a: tensor<?x2x8x4xf32>, %b: tensor<4x8xf32>, %w: tensor<6x8xf32>) -> tensor<?x2x4x6xf32> {
  // CHECK: train.matmul %{{.*}}, %{{.*}} {transpose_lhs = true, transpose_rhs = true} : tensor<?x2x8x4xf32>, tensor<4x8xf32>
  %0 = train.matmul %a, %b {transpose_lhs = true, transpose_rhs = true} : tensor<?x2x8x4xf32>, tensor<4x8xf32>
  // CHECK: train.matmul %{{.*}}, %{{.*}} : tensor<?x2x4x4xf32>, tensor<4x8xf32>
  %1 = train.matmul %0, %b : tensor<?x2x4x4xf32>, tensor<4x8xf32>
  // CHECK: train.linear %{{.*}}, %{{.*}} : tensor<?x2x4x8xf32>, tensor<6x8xf32>
  %2 = train.linear %1, %w : tensor<?x2x4x8xf32>, tensor<6x8xf32>
  return %2 : tensor<?x2x4x6xf32>
}

// -----

// CHECK-LABEL: func.func @shapes
func.func @shapes(%x: tensor<?x4x6xf32>, %y: tensor<?x2x6xf32>) -> tensor<?x3x6xf32> {
  // CHECK: train.reshape %{{.*}} {shape = array<i64: -1, 2, 2, 6>} : tensor<?x4x6xf32>
  %0 = train.reshape %x {shape = array<i64: -1, 2, 2, 6>} : tensor<?x4x6xf32>
  // CHECK: train.transpose %{{.*}} {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x2x2x6xf32>
  %1 = train.transpose %0 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x2x2x6xf32>
  // CHECK: train.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : tensor<?x4x6xf32>, tensor<?x2x6xf32>
  %2 = train.concat %x, %y {axis = 1 : i64} : tensor<?x4x6xf32>, tensor<?x2x6xf32>
  // CHECK: train.slice %{{.*}} {axis = 1 : i64, end = 6 : i64, start = 0 : i64, step = 2 : i64} : tensor<?x6x6xf32>
  %3 = train.slice %2 {axis = 1 : i64, start = 0 : i64, end = 6 : i64, step = 2 : i64} : tensor<?x6x6xf32>
  return %3 : tensor<?x3x6xf32>
}

// -----

// CHECK-LABEL: func.func @expand
func.func @expand(%t: tensor<1x1x6xf32>, %x: tensor<?x4x6xf32>) -> tensor<?x1x6xf32> {
  // CHECK: train.expand %{{.*}}, %{{.*}} {shape = array<i64: -1, 1, 6>} : tensor<1x1x6xf32>, tensor<?x4x6xf32>
  %0 = train.expand %t, %x {shape = array<i64: -1, 1, 6>} : tensor<1x1x6xf32>, tensor<?x4x6xf32>
  return %0 : tensor<?x1x6xf32>
}

// -----

// CHECK-LABEL: func.func @attention
func.func @attention(%s: tensor<?x2x8x8xf32>, %m: tensor<?x1x1x8xf32>,
                     %table: tensor<100x8xf32>, %ids: tensor<?x8xi32>)
    -> (tensor<?x2x8x8xf32>, tensor<?x2x8x8xf32>, tensor<?x8x8xf32>) {
  // CHECK: train.softmax %{{.*}} {causal = true, scale = 1.250000e-01 : f32} : tensor<?x2x8x8xf32>
  %0 = train.softmax %s {causal = true, scale = 0.125 : f32} : tensor<?x2x8x8xf32>
  // CHECK: train.softmax %{{.*}} mask %{{.*}} : tensor<?x2x8x8xf32>, tensor<?x1x1x8xf32>
  %1 = train.softmax %s mask %m : tensor<?x2x8x8xf32>, tensor<?x1x1x8xf32>
  // CHECK: train.embedding %{{.*}}, %{{.*}} : tensor<100x8xf32>, tensor<?x8xi32>
  %2 = train.embedding %table, %ids : tensor<100x8xf32>, tensor<?x8xi32>
  return %0, %1, %2 : tensor<?x2x8x8xf32>, tensor<?x2x8x8xf32>, tensor<?x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @fused_attention
func.func @fused_attention(%q: tensor<?x2x6x4xf32>, %k: tensor<?x2x8x4xf32>,
                           %v: tensor<?x2x8x3xf32>, %m: tensor<?x1x1x8xf32>,
                           %hq: tensor<2x8x16xbf16>)
    -> (tensor<?x2x6x3xf32>, tensor<?x2x6xf32>, tensor<?x2x6x4xf32>, tensor<2x8xf32>) {
  // CHECK: %{{.*}}, %{{.*}} = train.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} {scale = 5.000000e-01 : f32} : tensor<?x2x6x4xf32>, tensor<?x2x8x4xf32>, tensor<?x2x8x3xf32>, tensor<?x1x1x8xf32>
  %o, %lse = train.attention %q, %k, %v mask %m {scale = 0.5 : f32}
      : tensor<?x2x6x4xf32>, tensor<?x2x8x4xf32>, tensor<?x2x8x3xf32>, tensor<?x1x1x8xf32>
  // CHECK: train.attention %{{.*}}, %{{.*}}, %{{.*}} {causal = true, dropout_rate = 1.000000e-01 : f32, seed = 7 : i64} : tensor<2x8x16xbf16>, tensor<2x8x16xbf16>, tensor<2x8x16xbf16>
  %ho, %hlse = train.attention %hq, %hq, %hq {causal = true, dropout_rate = 0.1 : f32, seed = 7 : i64}
      : tensor<2x8x16xbf16>, tensor<2x8x16xbf16>, tensor<2x8x16xbf16>
  // CHECK: = train.attention_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} {scale = 5.000000e-01 : f32}
  %dq, %dk, %dv = train.attention_backward %q, %k, %v, %o, %o, %lse mask %m {scale = 0.5 : f32}
      : tensor<?x2x6x4xf32>, tensor<?x2x8x4xf32>, tensor<?x2x8x3xf32>, tensor<?x2x6x3xf32>,
        tensor<?x2x6x3xf32>, tensor<?x2x6xf32>, tensor<?x1x1x8xf32>
  return %o, %lse, %dq, %hlse : tensor<?x2x6x3xf32>, tensor<?x2x6xf32>, tensor<?x2x6x4xf32>, tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func.func @losses_and_reductions
func.func @losses_and_reductions(%logits: tensor<?x5x4x4xf16>, %labels: tensor<?x4x4xi64>)
    -> (tensor<f32>, tensor<?x5xf16>, tensor<?x1x4x4xf16>, tensor<5xf16>) {
  // CHECK: train.softmax_cross_entropy %{{.*}}, %{{.*}} {ignore_index = 255 : i64} : tensor<?x5x4x4xf16>, tensor<?x4x4xi64>
  %0 = train.softmax_cross_entropy %logits, %labels {ignore_index = 255 : i64} : tensor<?x5x4x4xf16>, tensor<?x4x4xi64>
  // CHECK: train.reduce_sum %{{.*}} {axes = array<i64: 2, 3>} : tensor<?x5x4x4xf16>
  %1 = train.reduce_sum %logits {axes = array<i64: 2, 3>} : tensor<?x5x4x4xf16>
  // CHECK: train.reduce_max %{{.*}} {axes = array<i64: 1>, keep_dims = true} : tensor<?x5x4x4xf16>
  %2 = train.reduce_max %logits {axes = array<i64: 1>, keep_dims = true} : tensor<?x5x4x4xf16>
  // CHECK: train.reduce_mean %{{.*}} {axes = array<i64: 0, -2, -1>} : tensor<?x5x4x4xf16>
  %3 = train.reduce_mean %logits {axes = array<i64: 0, -2, -1>} : tensor<?x5x4x4xf16>
  return %0, %1, %2, %3 : tensor<f32>, tensor<?x5xf16>, tensor<?x1x4x4xf16>, tensor<5xf16>
}

// -----

// Declarations carry the model-file attributes too.
// CHECK-LABEL: func.func private @declaration
// CHECK-SAME: (tensor<?x4xf32> {train.input}, tensor<2xf32> {train.param = {init = "zeros"}})
func.func private @declaration(tensor<?x4xf32> {train.input}, tensor<2xf32> {train.param = {init = "zeros"}})

// -----

// A fused group with an exported intermediate.
// CHECK-LABEL: func.func @fused_group
// CHECK: %{{.+}}:2 = train.fused "elewise_act"(%arg0, %arg1) {strategy = "paddle"} : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK: ^bb0(%{{.+}}: tensor<4x8xf32>, %{{.+}}: tensor<8xf32>):
// CHECK: train.yield %{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<4x8xf32>
func.func @fused_group(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %r:2 = train.fused "elewise_act" (%x, %b) {strategy = "paddle"} : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%a: tensor<4x8xf32>, %c: tensor<8xf32>):
    %s = train.add %a, %c : tensor<4x8xf32>, tensor<8xf32>
    %t = train.relu %s : tensor<4x8xf32>
    train.yield %t, %s : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Loss scaling: the status of the scaled gradients, updates that unscale
// with it, and the scale's own update.
// CHECK-LABEL: func.func @loss_scaling
// CHECK: %[[ST:.+]] = train.loss_scale_status %arg0, %arg2, %arg4 : tensor<f32>, tensor<4xf16>, tensor<4xf32>
// CHECK: train.sgd_update %arg1, %arg2, %arg4 unscale(%[[ST]] : tensor<2xf32>) {lr = 1.000000e-01 : f32} : tensor<4xf16>, tensor<4xf16>, tensor<4xf32>
// CHECK: train.adamw_update %arg3, %arg4, %arg3, %arg3 unscale(%[[ST]] : tensor<2xf32>) {lr = 1.000000e-03 : f32} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
// CHECK: train.update_loss_scale %arg0, %arg5, %[[ST]] {backoff_factor = 2.500000e-01 : f32, growth_interval = 100 : i64} : tensor<f32>, tensor<f32>, tensor<2xf32>
// CHECK: train.constant {train.seed_gradient} dense<1.000000e+00> : tensor<f32>
func.func @loss_scaling(%s: tensor<f32>, %p: tensor<4xf16>, %g: tensor<4xf16>, %q: tensor<4xf32>, %h: tensor<4xf32>, %n: tensor<f32>) {
  %st = train.loss_scale_status %s, %g, %h : tensor<f32>, tensor<4xf16>, tensor<4xf32>
  %0:2 = train.sgd_update %p, %g, %h unscale(%st : tensor<2xf32>) {lr = 0.1 : f32} : tensor<4xf16>, tensor<4xf16>, tensor<4xf32>
  %1:3 = train.adamw_update %q, %h, %q, %q unscale(%st : tensor<2xf32>) {lr = 0.001 : f32} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  %2:2 = train.update_loss_scale %s, %n, %st {growth_interval = 100 : i64, backoff_factor = 0.25 : f32} : tensor<f32>, tensor<f32>, tensor<2xf32>
  %3 = train.constant {train.seed_gradient} dense<1.0> : tensor<f32>
  return
}

// -----

// Data parallelism: one bucket of gradients of mixed shapes and types,
// averaged over the ranks; the results have the operands' types.
// CHECK-LABEL: func.func @all_reduce
// CHECK: %[[R:.+]]:2 = train.all_reduce %arg0, %arg1 {bucket = 3 : i64, ranks = 8 : i64} : tensor<4x8xf16>, tensor<4xf32>
// CHECK: return %[[R]]#0, %[[R]]#1 : tensor<4x8xf16>, tensor<4xf32>
func.func @all_reduce(%g: tensor<4x8xf16>, %h: tensor<4xf32>) -> (tensor<4x8xf16>, tensor<4xf32>) {
  %r:2 = train.all_reduce %g, %h {ranks = 8 : i64, bucket = 3 : i64} : tensor<4x8xf16>, tensor<4xf32>
  return %r#0, %r#1 : tensor<4x8xf16>, tensor<4xf32>
}
