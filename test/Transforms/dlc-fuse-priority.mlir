// RUN: dlc-opt %s --dlc-fuse-priority="explain=true max-operands=4 multi-output=false" --split-input-file --verify-diagnostics | FileCheck %s

// Priority fusion alone (multi-output=false); the multi-output fusion that
// follows it: dlc-fuse-priority-multi-output.mlir.

// A cheap producer fuses into ALL its consumers, recomputed in each: the
// launch it saves outweighs the second read of its inputs. The consumers
// themselves are returned: a group never fuses into the function's output.
// CHECK-LABEL: func.func @cheap_producer
// CHECK: %[[A:.+]] = train.fused "loop"(%arg0, %arg1) {strategy = "xla-priority"}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.add
// CHECK-NEXT: train.relu
// CHECK-NEXT: train.yield
// CHECK: %[[B:.+]] = train.fused "loop"(%arg0, %arg1) {strategy = "xla-priority"}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.add
// CHECK-NEXT: train.tanh
// CHECK-NEXT: train.yield
// CHECK-NOT: train.add
// CHECK: return %[[A]], %[[B]]
func.func @cheap_producer(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %s = train.add %x, %y : tensor<4x8xf32>, tensor<4x8xf32>
  // expected-remark @below {{not fused (xla-priority): its result is returned: not fusing into the output of the function}}
  %a = train.relu %s : tensor<4x8xf32>
  // expected-remark @below {{not fused (xla-priority): its result is returned: not fusing into the output of the function}}
  %b = train.tanh %s : tensor<4x8xf32>
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// An expensive producer with many consumers stays a kernel of its own: the
// add + mul group reads three 4 MiB tensors and writes one; recomputed in
// its three consumers it would read nine, more time on the H100 than the
// two launches and the 4 MiB round trip it saves. (The add fused into the
// mul first: one consumer, nothing read twice.)
// CHECK-LABEL: func.func @expensive_producer
// CHECK: %[[M:.+]] = train.fused "loop"(%arg0, %arg1, %arg2) {strategy = "xla-priority"}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.add
// CHECK-NEXT: train.mul
// CHECK-NEXT: train.yield
// CHECK: train.relu %[[M]]
// CHECK: train.tanh %[[M]]
// CHECK: train.sigmoid %[[M]]
func.func @expensive_producer(%x: tensor<1024x1024xf32>, %y: tensor<1024x1024xf32>, %z: tensor<1024x1024xf32>)
    -> (tensor<1024x1024xf32>, tensor<1024x1024xf32>, tensor<1024x1024xf32>) {
  %s = train.add %x, %y : tensor<1024x1024xf32>, tensor<1024x1024xf32>
  // expected-remark @below {{not fused (xla-priority): fusing it into all its consumers is slower by the cost model on H100-SXM}}
  %m = train.mul %s, %z : tensor<1024x1024xf32>, tensor<1024x1024xf32>
  // expected-remark @below {{not fused (xla-priority): its result is returned}}
  %a = train.relu %m : tensor<1024x1024xf32>
  // expected-remark @below {{not fused (xla-priority): its result is returned}}
  %b = train.tanh %m : tensor<1024x1024xf32>
  // expected-remark @below {{not fused (xla-priority): its result is returned}}
  %c = train.sigmoid %m : tensor<1024x1024xf32>
  return %a, %b, %c : tensor<1024x1024xf32>, tensor<1024x1024xf32>, tensor<1024x1024xf32>
}

// -----

// Never a reduction into a reduction: the softmax takes its element-wise
// producer (input fusion), and the group then stays out of the sum.
// CHECK-LABEL: func.func @reduction_into_reduction
// CHECK: %[[S:.+]] = train.fused "input"(%arg0) {strategy = "xla-priority"}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.add
// CHECK-NEXT: train.softmax
// CHECK-NEXT: train.yield
// CHECK: train.reduce_sum %[[S]]
func.func @reduction_into_reduction(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %d = train.add %x, %x : tensor<4x8xf32>, tensor<4x8xf32>
  // expected-remark @below {{not fused (xla-priority): both the producer and the consumer contain a reduction}}
  %s = train.softmax %d : tensor<4x8xf32>
  // expected-remark @below {{not fused (xla-priority): its result is returned}}
  %r = train.reduce_sum %s {axes = array<i64: 1>} : tensor<4x8xf32>
  return %r : tensor<4xf32>
}

// -----

// Nothing fuses into a reduction's output (it would become a loop fusion),
// and nothing into a contraction (a library call).
// CHECK-LABEL: func.func @not_fusible
// CHECK-NOT: train.fused
func.func @not_fusible(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  // expected-remark @below {{not fused (xla-priority): fusion into the output of a reduction would make it a loop fusion}}
  %r = train.reduce_sum %x {axes = array<i64: 1>} : tensor<4x8xf32>
  // expected-remark @below {{not fused (xla-priority): its result is returned}}
  %e = train.relu %r : tensor<4xf32>
  // expected-remark @below {{not fused (xla-priority): the consumer 'train.linear' is not fusible (op class contraction)}}
  %t = train.tanh %x : tensor<4x8xf32>
  %l = train.linear %t, %w : tensor<4x8xf32>, tensor<8x8xf32>
  return %e, %l : tensor<4xf32>, tensor<4x8xf32>
}

// -----

// Highest priority first, whatever the block order: either producer alone
// fits the add's budget (max-operands=4: inputs and outputs), both do not.
// The large mul saves a 4 MiB round trip, the small one a launch: the
// large one is fused and the small one then refused by the budget, whether
// it comes before the large one (here) or after it (next function).
// CHECK-LABEL: func.func @priority_order
// CHECK: train.mul %arg2, %arg3 : tensor<1024xf32>
// CHECK: train.fused "loop"(%arg0, %arg1, %{{.+}}) {strategy = "xla-priority"}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.mul %{{.+}}, %{{.+}} : tensor<1024x1024xf32>
// CHECK-NEXT: train.add
func.func @priority_order(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>,
                          %c: tensor<1024xf32>, %d: tensor<1024xf32>) -> tensor<1024x1024xf32> {
  // expected-remark @below {{not fused (xla-priority): the fusion would have more than 4 operands and outputs}}
  %small = train.mul %c, %d : tensor<1024xf32>, tensor<1024xf32>
  %large = train.mul %a, %b : tensor<1024x1024xf32>, tensor<1024x1024xf32>
  // expected-remark @below {{not fused (xla-priority): its result is returned}}
  %s = train.add %large, %small : tensor<1024x1024xf32>, tensor<1024xf32>
  return %s : tensor<1024x1024xf32>
}

// -----

// CHECK-LABEL: func.func @priority_order_reversed
// CHECK: train.mul %arg2, %arg3 : tensor<1024xf32>
// CHECK: train.fused "loop"(%arg0, %arg1, %{{.+}}) {strategy = "xla-priority"}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.mul %{{.+}}, %{{.+}} : tensor<1024x1024xf32>
// CHECK-NEXT: train.add
func.func @priority_order_reversed(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>,
                                   %c: tensor<1024xf32>, %d: tensor<1024xf32>) -> tensor<1024x1024xf32> {
  %large = train.mul %a, %b : tensor<1024x1024xf32>, tensor<1024x1024xf32>
  // expected-remark @below {{not fused (xla-priority): the fusion would have more than 4 operands and outputs}}
  %small = train.mul %c, %d : tensor<1024xf32>, tensor<1024xf32>
  // expected-remark @below {{not fused (xla-priority): its result is returned}}
  %s = train.add %large, %small : tensor<1024x1024xf32>, tensor<1024xf32>
  return %s : tensor<1024x1024xf32>
}

// -----

// A random op is not recomputed in several consumers (XLA: an rng with more
// than one user is not fusible).
// CHECK-LABEL: func.func @random
// CHECK: %[[D:.+]] = train.dropout
// CHECK: train.relu %[[D]]
// CHECK: train.tanh %[[D]]
func.func @random(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // expected-remark @below {{not fused (xla-priority): a random op ('train.dropout') is not recomputed in several consumers}}
  %d = train.dropout %x {rate = 0.1 : f32, seed = 3 : i64} : tensor<4x8xf32>
  // expected-remark @below {{not fused (xla-priority): its result is returned}}
  %a = train.relu %d : tensor<4x8xf32>
  // expected-remark @below {{not fused (xla-priority): its result is returned}}
  %b = train.tanh %d : tensor<4x8xf32>
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Once dlc-autodiff has made @train_step, fusion rewrites it alone.
// CHECK-LABEL: func.func @forward
// CHECK-NOT: train.fused
// CHECK-LABEL: func.func @train_step
// CHECK: train.fused "loop"
func.func @forward(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = train.add %x, %x : tensor<4x8xf32>, tensor<4x8xf32>
  %t = train.tanh %s : tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}
func.func @train_step(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = train.add %x, %x : tensor<4x8xf32>, tensor<4x8xf32>
  // expected-remark @below {{not fused (xla-priority): its result is returned}}
  %t = train.tanh %s : tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}
