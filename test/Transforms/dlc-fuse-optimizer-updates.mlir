// RUN: dlc-opt %s --dlc-fuse-optimizer-updates --split-input-file | FileCheck %s

// Every update of the block becomes one group where the last one was.
// CHECK-LABEL: func.func @two_updates
// CHECK: %[[F:.+]]:4 = train.fused "optimizer_horizontal"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5) {strategy = "xla"}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.sgd_update
// CHECK-NEXT: train.sgd_update
// CHECK-NEXT: train.yield
// CHECK: return %[[F]]#0, %[[F]]#1, %[[F]]#2, %[[F]]#3
func.func @two_updates(%p: tensor<4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>,
                       %q: tensor<2x3xf32>, %h: tensor<2x3xf32>, %c: tensor<2x3xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %p2, %b2 = train.sgd_update %p, %g, %b {lr = 0.1 : f32, momentum = 0.9 : f32} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  %q2, %c2 = train.sgd_update %q, %h, %c {lr = 0.1 : f32, momentum = 0.9 : f32} : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
  return %p2, %b2, %q2, %c2 : tensor<4xf32>, tensor<4xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// A single update is left alone: there is nothing to fuse it with.
// CHECK-LABEL: func.func @one_update
// CHECK-NOT: train.fused
// CHECK: train.adamw_update
func.func @one_update(%p: tensor<4xf32>, %g: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %p2, %m2, %v2 = train.adamw_update %p, %g, %m, %v {lr = 1.0e-3 : f32} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return %p2, %m2, %v2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Mixed precision: each half-precision gradient's cast to its float32
// master's type runs inside the update group (XLA fuses the convert into
// its consumer).
// CHECK-LABEL: func.func @gradient_casts
// CHECK: train.fused "optimizer_horizontal"(%arg0, %arg2, %arg4, %arg1, %arg3, %arg5) {strategy = "xla"}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.cast
// CHECK-NEXT: train.sgd_update
// CHECK-NEXT: train.cast
// CHECK-NEXT: train.sgd_update
func.func @gradient_casts(%g: tensor<4xf16>, %h: tensor<8xf16>, %p: tensor<4xf32>, %q: tensor<8xf32>, %b: tensor<4xf32>, %c: tensor<8xf32>) -> (tensor<4xf32>, tensor<8xf32>) {
  %gf = train.cast %g to f32 : tensor<4xf16>
  %p2, %b2 = train.sgd_update %p, %gf, %b {lr = 0.1 : f32} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  %hf = train.cast %h to f32 : tensor<8xf16>
  %q2, %c2 = train.sgd_update %q, %hf, %c {lr = 0.1 : f32} : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  return %p2, %q2 : tensor<4xf32>, tensor<8xf32>
}
