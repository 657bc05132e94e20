// RUN: dlc-opt %s --dlc-fuse-nodes=explain=true --split-input-file --verify-diagnostics | FileCheck %s
// RUN: dlc-opt %s --dlc-fuse-nodes=max-fusion-size=3 --split-input-file | FileCheck %s --check-prefix=SIZE

// Vertical fusion: pointwise producers into the reduction they feed, whose
// (numel, rnumel) = (4, 8) spans their 32 elements.
// CHECK-LABEL: func.func @pointwise_into_reduction
// CHECK: train.fused "input"(%arg0) {strategy = "inductor"}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.sigmoid
// CHECK-NEXT: train.tanh
// CHECK-NEXT: train.reduce_sum
func.func @pointwise_into_reduction(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %a = train.sigmoid %x : tensor<4x8xf32>
  %b = train.tanh %a : tensor<4x8xf32>
  %s = train.reduce_sum %b {axes = array<i64: 1>} : tensor<4x8xf32>
  return %s : tensor<4xf32>
}

// -----

// Two reductions of one buffer fuse horizontally only with equal (numel,
// rnumel): (4, 8) and (8, 4) do not.
// CHECK-LABEL: func.func @reductions_mismatch
// CHECK-NOT: train.fused
func.func @reductions_mismatch(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<8xf32>) {
  %r = train.reduce_sum %x {axes = array<i64: 1>} : tensor<4x8xf32>
  // expected-remark @below {{not fused with 'train.reduce_sum' (inductor scheduler): (numel, rnumel) mismatch (reductions)}}
  %c = train.reduce_sum %x {axes = array<i64: 0>} : tensor<4x8xf32>
  return %r, %c : tensor<4xf32>, tensor<8xf32>
}

// -----

// Horizontal fusion: two pointwise ops that read one buffer share a kernel
// and both write their results.
// CHECK-LABEL: func.func @horizontal
// CHECK: %[[F:.+]]:2 = train.fused "loop"(%arg0) {strategy = "inductor"}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.relu
// CHECK-NEXT: train.tanh
// CHECK: return %[[F]]#0, %[[F]]#1
func.func @horizontal(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = train.relu %x : tensor<4x8xf32>
  %b = train.tanh %x : tensor<4x8xf32>
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Ops that share no buffer are never a candidate pair.
// CHECK-LABEL: func.func @no_shared_buffer
// CHECK-NOT: train.fused
func.func @no_shared_buffer(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = train.relu %x : tensor<4x8xf32>
  %b = train.tanh %y : tensor<4x8xf32>
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Epilogue fusion: a pointwise consumer of the GEMM's output joins its
// template; a transpose reads the result at another index and stays out.
// CHECK-LABEL: func.func @epilogue
// CHECK: %[[F:.+]] = train.fused "output"(%arg0, %arg1) {strategy = "inductor"}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.linear
// CHECK-NEXT: train.relu
// CHECK-NEXT: train.yield
// CHECK: train.transpose %[[F]]
func.func @epilogue(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<16x4xf32> {
  %l = train.linear %x, %w : tensor<4x8xf32>, tensor<16x8xf32>
  %r = train.relu %l : tensor<4x16xf32>
  // expected-remark @below {{not fused with 'train.linear' (inductor scheduler): the consumer reads the producer's buffer at another index than it was written}}
  %t = train.transpose %r {permutation = array<i64: 1, 0>} : tensor<4x16xf32>
  return %t : tensor<16x4xf32>
}

// -----

// Two batch norms (two cuDNN calls) and the add of their outputs, as a
// residual block's two branches: the batch norms never share a group; the
// add and relu fuse as the epilogue of one of them.
// CHECK-LABEL: func.func @two_batch_norms
// CHECK: %[[N:.+]], %{{.+}}, %{{.+}} = train.batch_norm %arg0
// CHECK-NEXT: train.fused "input"(%arg1, %arg2, %arg3, %arg4, %arg5, %[[N]]) {strategy = "inductor"}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.batch_norm
// CHECK-NEXT: train.add
// CHECK-NEXT: train.relu
// CHECK-NEXT: train.yield
func.func @two_batch_norms(%x: tensor<2x3x4x4xf32>, %y: tensor<2x3x4x4xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3x4x4xf32> {
  %n1, %m1, %v1 = train.batch_norm %x, %g, %b, %m, %v : tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  // expected-remark @below {{not fused with 'train.batch_norm' (inductor scheduler): both nodes hold a library call (a batch norm or a contraction): each runs as its own call, as Inductor's extern kernels}}
  %n2, %m2, %v2 = train.batch_norm %y, %g, %b, %m, %v : tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  %s = train.add %n1, %n2 : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>
  %r = train.relu %s : tensor<2x3x4x4xf32>
  return %r : tensor<2x3x4x4xf32>
}

// -----

// max-fusion-size: a chain of five pointwise ops fuses into groups of at
// most that many (three, then two).
// SIZE-LABEL: func.func @chain
// SIZE: train.fused "loop"(%arg0) {strategy = "inductor"}
// SIZE-NEXT: ^bb0
// SIZE-NEXT: train.relu
// SIZE-NEXT: train.tanh
// SIZE-NEXT: train.sigmoid
// SIZE-NEXT: train.yield
// SIZE: train.fused "loop"
// SIZE-NEXT: ^bb0
// SIZE-NEXT: train.relu
// SIZE-NEXT: train.tanh
// SIZE-NEXT: train.yield
// CHECK-LABEL: func.func @chain
// CHECK: train.fused "loop"(%arg0) {strategy = "inductor"}
// CHECK-NEXT: ^bb0
// CHECK-COUNT-5: train.
// CHECK-NEXT: train.yield
func.func @chain(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = train.relu %x : tensor<4x8xf32>
  %b = train.tanh %a : tensor<4x8xf32>
  %c = train.sigmoid %b : tensor<4x8xf32>
  %d = train.relu %c : tensor<4x8xf32>
  %e = train.tanh %d : tensor<4x8xf32>
  return %e : tensor<4x8xf32>
}
