// RUN: dlc-opt %s --dlc-fuse-batch-norm-activation=explain=true --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=GATE
// RUN: dlc-opt %s --dlc-fuse-batch-norm-activation=relax-gate=true --split-input-file | FileCheck %s
// RUN: dlc-opt %S/Inputs/bn-two-readers.mlir --dlc-fuse-batch-norm-activation="relax-gate=true explain=true" 2>&1 >/dev/null | FileCheck %s --check-prefix=WHY
// WHY: remark: not fused (bn_act): the batch-norm output has another reader, 'train.tanh'
// WHY-NOT: remark

// relu(batch_norm): PaddlePaddle's gate refuses f32 NCHW; relaxed, one group
// that also writes the running statistics out.
// GATE-LABEL: func.func @bn_relu
// GATE-NOT: train.fused
// CHECK-LABEL: func.func @bn_relu
// CHECK: %[[F:.+]]:3 = train.fused "bn_act"(%arg0, %arg1, %arg2, %arg3, %arg4) {strategy = "paddle"}
// CHECK: train.batch_norm
// CHECK-NEXT: train.relu
// CHECK: return %[[F]]#2, %[[F]]#0, %[[F]]#1
func.func @bn_relu(%x: tensor<2x4x3x3xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>)
    -> (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>) {
  %y, %m, %v = train.batch_norm %x, %g, %b, %rm, %rv : tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  // expected-remark @+1 {{not fused (bn_act): PaddlePaddle fuses batch norm with an activation only in FP16 NHWC training; this one is f32 NCHW (relax-gate=true lifts the gate)}}
  %r = train.relu %y : tensor<2x4x3x3xf32>
  return %r, %m, %v : tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// The residual join: relu(batch_norm(x) + shortcut).
// CHECK-LABEL: func.func @bn_add_relu
// CHECK: train.fused "bn_add_act"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5)
// CHECK: train.batch_norm
// CHECK-NEXT: train.add
// CHECK-NEXT: train.relu
func.func @bn_add_relu(%x: tensor<2x4x3x3xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>,
                       %z: tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32> {
  %y, %m, %v = train.batch_norm %x, %g, %b, %rm, %rv : tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  %s = train.add %y, %z : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>
  // expected-remark @+1 {{not fused (bn_add_act): PaddlePaddle fuses batch norm}}
  %r = train.relu %s : tensor<2x4x3x3xf32>
  return %r : tensor<2x4x3x3xf32>
}

// -----

// A batch-norm output with two readers is not fused, gate or not.
// CHECK-LABEL: func.func @two_readers
// CHECK-NOT: train.fused
func.func @two_readers(%x: tensor<2x4x3x3xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>)
    -> (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) {
  %y, %m, %v = train.batch_norm %x, %g, %b, %rm, %rv : tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  // expected-remark @+1 {{not fused (bn_act): }}
  %r = train.relu %y : tensor<2x4x3x3xf32>
  %t = train.tanh %y : tensor<2x4x3x3xf32>
  return %r, %t : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>
}

// -----

// Backward: the relu gradient feeding the batch-norm gradient; when it also
// flows to a shortcut the group writes it out (bn_add_act_grad).
// CHECK-LABEL: func.func @backward
// CHECK: %[[G:.+]]:4 = train.fused "bn_add_act_grad"(%arg0, %arg1, %arg2, %arg3)
// CHECK: train.relu_backward
// CHECK-NEXT: train.batch_norm_backward
// CHECK: return %[[G]]#1, %[[G]]#2, %[[G]]#3, %[[G]]#0
func.func @backward(%dy: tensor<2x4x3x3xf32>, %y: tensor<2x4x3x3xf32>, %x: tensor<2x4x3x3xf32>, %g: tensor<4xf32>)
    -> (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x4x3x3xf32>) {
  %d = train.relu_backward %dy, %y : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>
  // expected-remark @+1 {{not fused (bn_add_act_grad): PaddlePaddle fuses batch norm}}
  %dx, %dg, %db = train.batch_norm_backward %d, %x, %g : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>, tensor<4xf32>
  return %dx, %dg, %db, %d : tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x4x3x3xf32>
}

// -----

// FP16 NHWC (what dlc-convert-layout gives under AMP) passes PaddlePaddle's
// gate without relaxing it.
// GATE-LABEL: func.func @bn_relu_f16_nhwc
// GATE: train.fused "bn_act"
// GATE: train.batch_norm {{.*}}layout = "NHWC"
func.func @bn_relu_f16_nhwc(%x: tensor<2x3x3x4xf16>, %g: tensor<4xf32>, %b: tensor<4xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>)
    -> (tensor<2x3x3x4xf16>, tensor<4xf32>, tensor<4xf32>) {
  %y, %m, %v = train.batch_norm %x, %g, %b, %rm, %rv {layout = "NHWC"} : tensor<2x3x3x4xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  %r = train.relu %y : tensor<2x3x3x4xf16>
  return %r, %m, %v : tensor<2x3x3x4xf16>, tensor<4xf32>, tensor<4xf32>
}
