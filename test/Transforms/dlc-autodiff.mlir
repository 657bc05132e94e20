// RUN: dlc-opt %s --dlc-autodiff --split-input-file --verify-diagnostics | FileCheck %s

// A residual join: %h feeds both the add and the relu, so its gradient is
// the sum of two contributions. SGD adds one momentum buffer per parameter.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x8xf32> {train.input, train.name = "x"}
// CHECK-SAME: %[[W:[^:]+]]: tensor<8x8xf32> {train.name = "w", train.param
// CHECK-SAME: %[[BUF:[^:]+]]: tensor<8x8xf32> {train.name = "w.momentum_buffer", train.optimizer_state = {init = "zeros"}}
// CHECK-SAME: -> (tensor<f32>, tensor<8x8xf32> {train.update_of = 2 : i64}, tensor<8x8xf32> {train.update_of = 3 : i64})
// CHECK: %[[H:.+]] = train.linear %[[X]], %[[W]]
// CHECK: %[[R:.+]] = train.relu %[[H]]
// CHECK: %[[ONE:.+]] = train.constant {train.seed_gradient} dense<1.000000e+00> : tensor<f32>
// CHECK: %[[DL:.+]] = train.softmax_cross_entropy_backward %[[ONE]]
// CHECK: %[[DR:.+]] = train.relu_backward %[[DL]], %[[R]]
// CHECK: %[[DH:.+]] = train.add %[[DL]], %[[DR]]
// CHECK: %[[DW:.+]] = train.matmul %{{.+}}, %{{.+}} {transpose_lhs = true}
// CHECK: %[[P:.+]], %[[B:.+]] = train.sgd_update %[[W]], %[[DW]], %[[BUF]] {lr = 5.000000e-01 : f32, momentum = 0.899999976 : f32}
// CHECK: return %{{.+}}, %[[P]], %[[B]]
func.func @forward(%x: tensor<4x8xf32> {train.input, train.name = "x"},
                   %y: tensor<4xi64> {train.label, train.name = "y"},
                   %w: tensor<8x8xf32> {train.name = "w", train.param = {init = "zeros"}})
    -> tensor<f32> attributes {train.optimizer = {kind = "sgd", lr = 0.5 : f64, momentum = 0.9 : f64}} {
  %h = train.linear %x, %w : tensor<4x8xf32>, tensor<8x8xf32>
  %r = train.relu %h : tensor<4x8xf32>
  %s = train.add %h, %r : tensor<4x8xf32>, tensor<4x8xf32>
  %l = train.softmax_cross_entropy %s, %y : tensor<4x8xf32>, tensor<4xi64>
  return %l : tensor<f32>
}

// -----

// Batch norm: its backward op gives the scale and bias gradients, and the
// running statistics come back as the buffers' next values.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: tensor<2xf32> {train.update_of = 4 : i64}, tensor<2xf32> {train.update_of = 5 : i64})
// CHECK: %[[Y:.+]], %[[RM:.+]], %[[RV:.+]] = train.batch_norm
// CHECK: train.batch_norm_backward
// CHECK: train.conv2d_backward_filter
// CHECK-NOT: train.conv2d_backward_data
// CHECK: return {{.*}}, %[[RM]], %[[RV]] :
func.func @forward(%x: tensor<2x1x4x4xf32> {train.input},
                   %y: tensor<2xi64> {train.label},
                   %w: tensor<2x1x3x3xf32> {train.param = {init = "kaiming_normal"}},
                   %g: tensor<2xf32> {train.param = {init = "ones"}},
                   %rm: tensor<2xf32> {train.buffer = {init = "zeros"}},
                   %rv: tensor<2xf32> {train.buffer = {init = "ones"}},
                   %b: tensor<2xf32> {train.param = {init = "zeros"}})
    -> tensor<f32> attributes {train.optimizer = {kind = "sgd", lr = 0.1 : f64}} {
  %c = train.conv2d %x, %w : tensor<2x1x4x4xf32>, tensor<2x1x3x3xf32>
  %n, %nrm, %nrv = train.batch_norm %c, %g, %b, %rm, %rv : tensor<2x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
  %p = train.global_avg_pool %n : tensor<2x2x2x2xf32>
  %f = train.reshape %p {shape = array<i64: 2, 2>} : tensor<2x2x1x1xf32>
  %l = train.softmax_cross_entropy %f, %y : tensor<2x2xf32>, tensor<2xi64>
  return %l : tensor<f32>
}

// -----

// Tied embeddings (GPT-2): the table is gathered and used as the output
// projection; both gradients are summed. AdamW adds two moments.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: {train.name = "wte.exp_avg", train.optimizer_state = {init = "zeros"}}
// CHECK-SAME: {train.name = "wte.exp_avg_sq", train.optimizer_state = {init = "zeros"}}
// CHECK-DAG: %[[GATHER:.+]] = train.embedding_backward
// CHECK-DAG: %[[PROJ:.+]] = train.matmul %{{.+}}, %{{.+}} {transpose_lhs = true} : tensor<8x16xf32>, tensor<8x4xf32>
// CHECK: %[[SUM:.+]] = train.add
// CHECK: train.adamw_update %{{.+}}, %[[SUM]], %{{.+}}, %{{.+}} {lr = 2.000000e-03 : f32}
func.func @forward(%ids: tensor<2x4xi64> {train.input},
                   %y: tensor<2x4xi64> {train.label},
                   %wte: tensor<16x4xf32> {train.name = "wte", train.param = {init = "normal", std = 0.02 : f64}})
    -> tensor<f32> attributes {train.optimizer = {kind = "adamw", lr = 2.0e-3 : f64, weight_decay = 0.01 : f64}} {
  %e = train.embedding %wte, %ids : tensor<16x4xf32>, tensor<2x4xi64>
  %logits = train.linear %e, %wte : tensor<2x4x4xf32>, tensor<16x4xf32>
  %l = train.softmax_cross_entropy %logits, %y {class_axis = 2 : i64} : tensor<2x4x16xf32>, tensor<2x4xi64>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{argument #0 has dynamic shape 'tensor<?x4xf32>'; dlc-autodiff needs static shapes (run dlc-specialize-batch first)}}
func.func @forward(%x: tensor<?x4xf32> {train.input}, %w: tensor<4x4xf32> {train.param = {init = "zeros"}}) -> tensor<f32>
    attributes {train.optimizer = {kind = "sgd", lr = 0.1 : f64}} {
  %c = train.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}

// -----

// expected-error @+1 {{names no optimizer (train.optimizer) and none was given (optimizer=sgd|adamw)}}
func.func @forward(%x: tensor<2x4xf32> {train.input}) -> tensor<f32> {
  %c = train.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}

// -----

func.func @forward(%x: tensor<2x4xf32> {train.input}, %w: tensor<4xf32> {train.param = {init = "ones"}}) -> tensor<f32>
    attributes {train.optimizer = {kind = "sgd", lr = 0.1 : f64}} {
  %m = train.mul %x, %w : tensor<2x4xf32>, tensor<4xf32>
  // expected-error @+1 {{'train.reduce_max' op has no gradient rule yet}}
  %r = train.reduce_max %m {axes = array<i64: 0, 1>} : tensor<2x4xf32>
  return %r : tensor<f32>
}

// -----

// Stochastic depth as dlc-import writes it: a dropout of constant ones per
// sample, multiplied in. The mask is computed from constants alone, so it
// gets no gradient: the backward pass applies it (the mul's gradient) but
// neither differentiates nor redraws it.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[MASK:.+]] = train.dropout %{{.+}} {rate = 2.000000e-01 : f32, seed = 1 : i64} : tensor<4x1xf32>
// CHECK-NOT: train.dropout
// CHECK: train.mul %{{.+}}, %[[MASK]]
// CHECK-NOT: train.dropout
// CHECK: train.sgd_update
func.func @forward(%x: tensor<4x8xf32> {train.input, train.name = "x"},
                   %y: tensor<4xi64> {train.label, train.name = "y"},
                   %w: tensor<8x8xf32> {train.name = "w", train.param = {init = "zeros"}})
    -> tensor<f32> attributes {train.optimizer = {kind = "sgd", lr = 0.5 : f64}} {
  %h = train.linear %x, %w : tensor<4x8xf32>, tensor<8x8xf32>
  %one = train.constant dense<1.0> : tensor<1x1xf32>
  %ones = train.broadcast_to %one {shape = array<i64: 4, 1>} : tensor<1x1xf32>
  %mask = train.dropout %ones {rate = 0.2 : f32, seed = 1 : i64} : tensor<4x1xf32>
  %s = train.mul %h, %mask : tensor<4x8xf32>, tensor<4x1xf32>
  %l = train.softmax_cross_entropy %s, %y : tensor<4x8xf32>, tensor<4xi64>
  return %l : tensor<f32>
}
