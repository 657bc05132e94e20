// RUN: dlc-opt %s --dlc-fuse-producer-consumer=explain=true --split-input-file --verify-diagnostics | FileCheck %s

// A chain of element-wise ops with broadcasting becomes one loop.
// CHECK-LABEL: func.func @loop
// CHECK: %[[F:.+]] = train.fused "loop"(%arg0, %arg1) {strategy = "xla"}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.add
// CHECK-NEXT: train.tanh
// CHECK-NEXT: train.mul
// CHECK-NEXT: train.yield
// CHECK: return %[[F]]
func.func @loop(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %s = train.add %x, %b : tensor<4x8xf32>, tensor<8xf32>
  %t = train.tanh %s : tensor<4x8xf32>
  %m = train.mul %t, %t : tensor<4x8xf32>, tensor<4x8xf32>
  return %m : tensor<4x8xf32>
}

// -----

// Reduction input fusion: the producers of a layer norm run in its loop.
// CHECK-LABEL: func.func @input
// CHECK: train.fused "input"(%arg0, %arg1, %arg2) {strategy = "xla"}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.dropout
// CHECK-NEXT: train.add
// CHECK-NEXT: train.layer_norm
func.func @input(%x: tensor<4x8xf32>, %r: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  %d = train.dropout %x {rate = 0.1 : f32, seed = 3 : i64} : tensor<4x8xf32>
  %s = train.add %d, %r : tensor<4x8xf32>, tensor<4x8xf32>
  %n = train.layer_norm %s, %g, %g {epsilon = 1.0e-5 : f32} : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
  return %n : tensor<4x8xf32>
}

// -----

// Multi-output fusion: a producer read outside the group stays fused and is
// written out. Here the bias-gradient reduction cannot take the sigmoid (the
// relu reads it first, so a group at the reduction would run too late); the
// relu's loop takes it and writes it out for the reduction.
// CHECK-LABEL: func.func @multi_output
// CHECK: %[[F:.+]]:2 = train.fused "loop"(%arg0) {strategy = "xla"}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.sigmoid
// CHECK-NEXT: train.relu
// CHECK: train.yield %{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK: train.linear %[[F]]#1, %arg1
// CHECK: train.sum_to_shape %[[F]]#0
func.func @multi_output(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>) {
  %a = train.sigmoid %x : tensor<4x8xf32>
  %b = train.relu %a : tensor<4x8xf32>
  %l = train.linear %b, %w : tensor<4x8xf32>, tensor<8x8xf32>
  // expected-remark @below {{not fused with 'train.sigmoid' (xla producer-consumer): 'train.relu' reads a result of the group before the group would run}}
  %s = train.sum_to_shape %a {shape = array<i64: 8>} : tensor<4x8xf32>
  return %l, %s : tensor<4x8xf32>, tensor<8xf32>
}

// -----

// A reduction only ends a group: its result does not fuse into a consumer.
// CHECK-LABEL: func.func @refusals
// CHECK: train.reduce_sum
// CHECK: train.fused "loop"
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.relu
// CHECK-NEXT: train.tanh
func.func @refusals(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %r = train.reduce_sum %x {axes = array<i64: 1>} : tensor<4x8xf32>
  // expected-remark @below {{not fused with 'train.reduce_sum' (xla producer-consumer): a reduction only ends a group: its result does not fuse into consumers}}
  %e = train.relu %r : tensor<4xf32>
  %t = train.tanh %e : tensor<4xf32>
  return %t : tensor<4xf32>
}

// -----

// Once dlc-autodiff has made @train_step, fusion rewrites it alone: @forward
// stays the model as written (nothing runs it), and a refusal is not said
// twice, once for each function.
// CHECK-LABEL: func.func @forward
// CHECK-NOT: train.fused
// CHECK: train.add
// CHECK-LABEL: func.func @train_step
// CHECK: train.fused "loop"
func.func @forward(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = train.add %x, %x : tensor<4x8xf32>, tensor<4x8xf32>
  %t = train.tanh %s : tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}
func.func @train_step(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = train.add %x, %x : tensor<4x8xf32>, tensor<4x8xf32>
  %t = train.tanh %s : tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}
