// RUN: dlc-opt %s --dlc-fuse-elementwise-activation=explain=true --split-input-file --verify-diagnostics | FileCheck %s

// act(add(x, y)): one group; the add's result has no other reader.
// CHECK-LABEL: func.func @act_of_add
// CHECK: %[[F:.+]] = train.fused "elewise_act"(%arg0, %arg1) {strategy = "paddle"} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<4x8xf32>, %[[B:.+]]: tensor<8xf32>):
// CHECK-NEXT:   %[[S:.+]] = train.add %[[A]], %[[B]]
// CHECK-NEXT:   %[[R:.+]] = train.gelu %[[S]] {approximate = "tanh"}
// CHECK-NEXT:   train.yield %[[R]] : tensor<4x8xf32>
// CHECK: return %[[F]]
func.func @act_of_add(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %s = train.add %x, %b : tensor<4x8xf32>, tensor<8xf32>
  %r = train.gelu %s {approximate = "tanh"} : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// add(x, act(y)) fuses too.
// CHECK-LABEL: func.func @add_of_act
// CHECK: train.fused "elewise_act"(%arg1, %arg0)
// CHECK: train.tanh
// CHECK: train.mul
func.func @add_of_act(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %t = train.tanh %y : tensor<4x8xf32>
  %m = train.mul %x, %t : tensor<4x8xf32>, tensor<4x8xf32>
  return %m : tensor<4x8xf32>
}

// -----

// The backward pair: an activation gradient fed by a gradient sum.
// CHECK-LABEL: func.func @backward_pair
// CHECK: train.fused "elewise_act"(%arg0, %arg1, %arg2)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.add
// CHECK-NEXT: train.relu_backward
func.func @backward_pair(%d1: tensor<4x8xf32>, %d2: tensor<4x8xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %d = train.add %d1, %d2 : tensor<4x8xf32>, tensor<4x8xf32>
  %dx = train.relu_backward %d, %x : tensor<4x8xf32>, tensor<4x8xf32>
  return %dx : tensor<4x8xf32>
}

// -----

// A reader of the sum after the activation: the group
// writes it out too (PaddlePaddle's save_intermediate_out), results in op order.
// CHECK-LABEL: func.func @saved_for_backward
// CHECK: %[[F:.+]]:2 = train.fused "elewise_act"
// CHECK: train.yield %{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK: train.relu_backward %arg2, %[[F]]#0
func.func @saved_for_backward(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %dy: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = train.add %x, %y : tensor<4x8xf32>, tensor<4x8xf32>
  %r = train.relu %s : tensor<4x8xf32>
  %dx = train.relu_backward %dy, %s : tensor<4x8xf32>, tensor<4x8xf32>
  return %r, %dx : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Refused: the sum is read before the activation, so a group placed at the
// activation could not serve that reader.
// CHECK-LABEL: func.func @read_before
// CHECK-NOT: train.fused
func.func @read_before(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x4xf32>) {
  %s = train.add %x, %y : tensor<4x8xf32>, tensor<4x8xf32>
  %e = train.matmul %s, %x {transpose_rhs = true} : tensor<4x8xf32>, tensor<4x8xf32>
  // expected-remark @+1 {{not fused with 'train.add' (elewise_act): the producer's result is read before the consumer, by 'train.matmul'}}
  %r = train.relu %s : tensor<4x8xf32>
  return %r, %e : tensor<4x8xf32>, tensor<4x4xf32>
}

// -----

// Refused: a relu already fused with the add before it is not fused again
// with the mul after it.
// CHECK-LABEL: func.func @chain
// CHECK-COUNT-1: train.fused
// CHECK: train.mul
func.func @chain(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = train.add %x, %y : tensor<4x8xf32>, tensor<4x8xf32>
  %r = train.relu %s : tensor<4x8xf32>
  // expected-remark @+1 {{not fused with 'train.relu' (elewise_act): the producer is already in another group}}
  %m = train.mul %r, %y : tensor<4x8xf32>, tensor<4x8xf32>
  return %m : tensor<4x8xf32>
}
