// RUN: dlc-opt %s --dlc-specialize-batch=batch-size=8 --split-input-file --verify-diagnostics | FileCheck %s

// Every shape downstream of the batch becomes static, the signature too.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: %{{.*}}: tensor<8x3x8x8xf32> {train.input, train.name = "x"}
// CHECK-SAME: %{{.*}}: tensor<8xi64> {train.label, train.name = "y"}
// CHECK-SAME: -> tensor<f32>
func.func @forward(%x: tensor<?x3x8x8xf32> {train.input, train.name = "x"},
                   %y: tensor<?xi64> {train.label, train.name = "y"},
                   %w: tensor<4x3x3x3xf32> {train.name = "w", train.param = {init = "kaiming_normal"}},
                   %fc: tensor<10x64xf32> {train.name = "fc", train.param = {init = "kaiming_uniform"}})
    -> tensor<f32> {
  // CHECK: train.conv2d %{{.*}}, %{{.*}} {stride = array<i64: 2, 2>} : tensor<8x3x8x8xf32>, tensor<4x3x3x3xf32>
  %c = train.conv2d %x, %w {stride = array<i64: 2, 2>} : tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>
  // CHECK: train.relu %{{.*}} : tensor<8x4x3x3xf32>
  %r = train.relu %c : tensor<?x4x3x3xf32>
  // CHECK: train.reshape %{{.*}} {shape = array<i64: -1, 36>} : tensor<8x4x3x3xf32>
  // CHECK: train.slice %{{.*}} : tensor<8x36xf32>
  %f = train.reshape %r {shape = array<i64: -1, 36>} : tensor<?x4x3x3xf32>
  %s = train.slice %f {axis = 1 : i64, start = 0 : i64, end = 10 : i64} : tensor<?x36xf32>
  // CHECK: train.softmax_cross_entropy %{{.*}}, %{{.*}} : tensor<8x10xf32>, tensor<8xi64>
  %l = train.softmax_cross_entropy %s, %y : tensor<?x10xf32>, tensor<?xi64>
  return %l : tensor<f32>
}

// -----

// train.expand takes the batch of its second operand; once that is static
// it is a train.broadcast_to.
// CHECK-LABEL: func.func @expand
// CHECK-NOT: train.expand
// CHECK: train.broadcast_to %{{.*}} {shape = array<i64: 8, 1, 6>} : tensor<1x1x6xf32>
// CHECK: train.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : tensor<8x1x6xf32>, tensor<8x4x6xf32>
func.func @expand(%x: tensor<?x4x6xf32> {train.input}, %t: tensor<1x1x6xf32>) -> tensor<?x5x6xf32> {
  %0 = train.expand %t, %x {shape = array<i64: -1, 1, 6>} : tensor<1x1x6xf32>, tensor<?x4x6xf32>
  %1 = train.concat %0, %x {axis = 1 : i64} : tensor<?x1x6xf32>, tensor<?x4x6xf32>
  return %1 : tensor<?x5x6xf32>
}

// -----

// A batch that the model's reshapes cannot regroup is reported on the op.
func.func @bad_reshape(%x: tensor<?x6xf32> {train.input}) -> tensor<?x5xf32> {
  // expected-error @+2 {{'train.reshape' op cannot reshape [8, 6] (48 elements) to [-1, 5]}}
  // expected-remark @+1 {{while specializing the batch size to 8}}
  %0 = train.reshape %x {shape = array<i64: -1, 5>} : tensor<?x6xf32>
  return %0 : tensor<?x5xf32>
}

// -----

// Only the batch dimension may be dynamic.
// expected-error @+1 {{'func.func' op argument #0 has a dynamic dimension other than the batch (0): 'tensor<?x?xf32>'}}
func.func @two_dynamic(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = train.relu %x : tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
