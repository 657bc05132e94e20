// RUN: dlc-opt %s --dlc-auto-mixed-precision=mode=amp-fp16 --split-input-file | FileCheck %s --check-prefix=AMP
// RUN: dlc-opt %s --dlc-auto-mixed-precision=mode=amp-bf16 --split-input-file | FileCheck %s --check-prefix=BF16
// RUN: dlc-opt %s --dlc-auto-mixed-precision=mode=fp16 --split-input-file | FileCheck %s --check-prefix=PURE
// RUN: not dlc-opt %s --dlc-auto-mixed-precision=mode=fp8 --split-input-file 2>&1 | FileCheck %s --check-prefix=MODE

// The allow list (linear) runs in half precision on cast operands; the
// deny list (cross-entropy) in float32; relu infers half from its input.
// The master parameters stay float32 in the AMP modes.
// AMP-LABEL: func.func @forward
// AMP-SAME: %[[W:[^:]+]]: tensor<4x8xf32> {train.name = "w"
// AMP-DAG: %[[WH:.+]] = train.cast %[[W]] to f16 : tensor<4x8xf32>
// AMP-DAG: %[[XH:.+]] = train.cast %arg0 to f16 : tensor<2x8xf32>
// AMP: %[[H:.+]] = train.linear %[[XH]], %[[WH]] : tensor<2x8xf16>, tensor<4x8xf16>
// AMP: %[[R:.+]] = train.relu %[[H]] : tensor<2x4xf16>
// AMP: %[[RF:.+]] = train.cast %[[R]] to f32 : tensor<2x4xf16>
// AMP: train.softmax_cross_entropy %[[RF]], %arg1 : tensor<2x4xf32>, tensor<2xi64>
// BF16: train.linear %{{.+}}, %{{.+}} : tensor<2x8xbf16>, tensor<4x8xbf16>
// Pure fp16 stores the parameter itself in fp16: no cast of it.
// PURE-LABEL: func.func @forward
// PURE-SAME: %[[W:[^:]+]]: tensor<4x8xf16> {train.name = "w"
// PURE-NOT: train.cast %[[W]]
// PURE: train.linear %{{.+}}, %[[W]] : tensor<2x8xf16>, tensor<4x8xf16>
// MODE: dlc-auto-mixed-precision: unknown mode 'fp8' (amp-fp16, amp-bf16, fp16)
func.func @forward(%x: tensor<2x8xf32> {train.input}, %y: tensor<2xi64> {train.label},
                   %w: tensor<4x8xf32> {train.name = "w", train.param = {init = "zeros"}}) -> tensor<f32> {
  %h = train.linear %x, %w : tensor<2x8xf32>, tensor<4x8xf32>
  %r = train.relu %h : tensor<2x4xf32>
  %l = train.softmax_cross_entropy %r, %y : tensor<2x4xf32>, tensor<2xi64>
  return %l : tensor<f32>
}

// -----

// Batch norm keeps its half input and float32 statistics and parameters,
// which pure fp16 leaves in float32 since only the normalization reads them.
// An add of a half and a float32 value computes in float32.
// AMP-LABEL: func.func @forward
// AMP: %[[C:.+]] = train.conv2d %{{.+}}, %{{.+}} : tensor<2x3x4x4xf16>, tensor<3x3x1x1xf16>
// AMP: %[[Y:.+]], %{{.+}}, %{{.+}} = train.batch_norm %[[C]], %arg2, %arg3, %arg4, %arg5 {{.*}}: tensor<2x3x4x4xf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
// AMP: %[[YF:.+]] = train.cast %[[Y]] to f32
// AMP: train.add %[[YF]], %arg0 : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>
// PURE-LABEL: func.func @forward
// PURE-SAME: tensor<3x3x1x1xf16> {train.name = "conv"
// PURE-SAME: tensor<3xf32> {train.name = "bn.weight"
func.func @forward(%x: tensor<2x3x4x4xf32> {train.input}, %w: tensor<3x3x1x1xf32> {train.name = "conv", train.param = {init = "zeros"}},
                   %g: tensor<3xf32> {train.name = "bn.weight", train.param = {init = "ones"}}, %b: tensor<3xf32> {train.name = "bn.bias", train.param = {init = "zeros"}},
                   %m: tensor<3xf32> {train.name = "bn.running_mean", train.buffer = {init = "zeros"}}, %v: tensor<3xf32> {train.name = "bn.running_var", train.buffer = {init = "ones"}}) -> tensor<f32> {
  %c = train.conv2d %x, %w : tensor<2x3x4x4xf32>, tensor<3x3x1x1xf32>
  %y, %m2, %v2 = train.batch_norm %c, %g, %b, %m, %v : tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  %s = train.add %y, %x : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>
  %l = train.reduce_mean %s {axes = array<i64: 0, 1, 2, 3>} : tensor<2x3x4x4xf32>
  return %l : tensor<f32>
}
