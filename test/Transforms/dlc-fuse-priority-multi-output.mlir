// RUN: dlc-opt %s --dlc-fuse-priority="explain=true" --split-input-file --verify-diagnostics | FileCheck %s

// After priority fusion, XLA's producer-consumer multi-output fusion: the
// sigmoid cannot be recomputed in the linear (a contraction), so priority
// fusion leaves it; the relu's group then takes it and writes it out for
// the linear, one launch and one read of it fewer.
// CHECK-LABEL: func.func @multi_output
// CHECK: %[[F:.+]]:2 = train.fused "loop"(%arg0) {strategy = "xla-priority"}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.sigmoid
// CHECK-NEXT: train.relu
// CHECK-NEXT: train.yield %{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK: train.linear %[[F]]#0, %arg1
func.func @multi_output(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = train.sigmoid %x : tensor<4x8xf32>
  // expected-remark @below {{not fused (xla-priority): its result is returned}}
  %b = train.relu %a : tensor<4x8xf32>
  %l = train.linear %a, %w : tensor<4x8xf32>, tensor<8x8xf32>
  return %b, %l : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Not when a reader of the producer comes before the consumer and feeds it:
// the group would read the linear's result and the linear the group's
// (canFormGroup).
// CHECK-LABEL: func.func @cycle
// CHECK-NOT: train.fused
func.func @cycle(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  // expected-remark @below {{not fused (xla-priority): the consumer 'train.linear' is not fusible (op class contraction)}}
  %a = train.sigmoid %x : tensor<4x8xf32>
  %l = train.linear %a, %w : tensor<4x8xf32>, tensor<8x8xf32>
  // expected-remark @below {{not fused (xla-priority): its result is returned}}
  %s = train.add %a, %l : tensor<4x8xf32>, tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}
