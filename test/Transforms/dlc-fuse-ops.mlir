// RUN: dlc-opt %s --dlc-fuse-ops=explain=true --split-input-file --verify-diagnostics | FileCheck %s
// RUN: dlc-opt %s --dlc-fuse-ops=max-depth=1 --split-input-file | FileCheck %s --check-prefix=OFF

// max-depth=1 turns fusion off.
// OFF-NOT: train.fused

// Phase 0: a convolution takes its element-wise epilogue (the bias add's
// edge from the convolution is element-wise, the add itself broadcasts),
// up to its post-dominator. The reduction is reached through a comm-reduce
// edge, so the contraction's group stops before it.
// CHECK-LABEL: func.func @conv_epilogue
// CHECK: %[[F:.+]] = train.fused "output"(%arg0, %arg1, %arg2) {strategy = "tvm"}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.conv2d
// CHECK-NEXT: train.add
// CHECK-NEXT: train.relu
// CHECK-NEXT: train.yield
// CHECK: train.reduce_sum %[[F]]
func.func @conv_epilogue(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<1x4x1x1xf32>) -> tensor<2x6x6xf32> {
  %c = train.conv2d %x, %w : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>
  %a = train.add %c, %b : tensor<2x4x6x6xf32>, tensor<1x4x1x1xf32>
  // expected-remark @below {{not fused into its post-dominator (tvm fuse-ops): 'train.reduce_sum': the contraction reaches its post-dominator through comm-reduce edges, not element-wise ones}}
  %r = train.relu %a : tensor<2x4x6x6xf32>
  %s = train.reduce_sum %r {axes = array<i64: 1>} : tensor<2x4x6x6xf32>
  return %s : tensor<2x6x6xf32>
}

// -----

// A contraction fuses its epilogue only along an element-wise path: a
// transpose (injective) after the GEMM stops it. The transpose itself waits
// for phase 1 and then fuses with the tanh after it.
// CHECK-LABEL: func.func @gemm_then_transpose
// CHECK: %[[L:.+]] = train.linear
// CHECK: train.fused "loop"(%[[L]]) {strategy = "tvm"}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.transpose
// CHECK-NEXT: train.tanh
func.func @gemm_then_transpose(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<16x4xf32> {
  // expected-remark @below {{not fused into its post-dominator (tvm fuse-ops): 'train.transpose': the contraction reaches its post-dominator through injective edges, not element-wise ones}}
  %l = train.linear %x, %w : tensor<4x8xf32>, tensor<16x8xf32>
  %t = train.transpose %l {permutation = array<i64: 1, 0>} : tensor<4x16xf32>
  %h = train.tanh %t : tensor<16x4xf32>
  return %h : tensor<16x4xf32>
}

// -----

// Element-wise producers fuse into a reduction; a reduction fuses into
// nothing, so two reductions never share a group.
// CHECK-LABEL: func.func @two_reductions
// CHECK: %[[F:.+]] = train.fused "input"(%arg0) {strategy = "tvm"}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.sigmoid
// CHECK-NEXT: train.reduce_sum
// CHECK-NEXT: train.yield
// CHECK: train.reduce_sum %[[F]]
func.func @two_reductions(%x: tensor<4x8x2xf32>) -> tensor<4xf32> {
  %e = train.sigmoid %x : tensor<4x8x2xf32>
  // expected-remark @below {{not fused into its post-dominator (tvm fuse-ops): 'train.reduce_sum': a reduction only ends a group: producers fuse into it, it fuses into nothing}}
  %r = train.reduce_sum %e {axes = array<i64: 2>} : tensor<4x8x2xf32>
  %s = train.reduce_sum %r {axes = array<i64: 1>} : tensor<4x8xf32>
  return %s : tensor<4xf32>
}

// -----

// Training: an activation read by the next layer and again by the backward
// pass has no post-dominator short of the step's results, so it fuses into
// nothing, where inference would fuse it.
// CHECK-LABEL: func.func @read_again
// CHECK-NOT: train.fused
func.func @read_again(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %dy: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // expected-remark @below {{not fused into its post-dominator (tvm fuse-ops): its readers have no common post-dominator}}
  %r = train.relu %x : tensor<4x8xf32>
  %l = train.linear %r, %w : tensor<4x8xf32>, tensor<8x8xf32>
  %g = train.relu_backward %dy, %r : tensor<4x8xf32>, tensor<4x8xf32>
  return %l, %g : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Opaque ops (softmax, as Relay registers nn.softmax) fuse with nothing:
// the element-wise op before it stays alone.
// CHECK-LABEL: func.func @opaque
// CHECK-NOT: train.fused
func.func @opaque(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-remark @below {{not fused into its post-dominator (tvm fuse-ops): 'train.softmax': the post-dominator is reached through opaque edges, not injective or reduction ones}}
  %e = train.tanh %x : tensor<4x8xf32>
  %s = train.softmax %e {axis = 1 : i64} : tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}
