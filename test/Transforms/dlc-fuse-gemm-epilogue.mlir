// RUN: dlc-opt %s --dlc-fuse-gemm-epilogue=explain=true --split-input-file --verify-diagnostics | FileCheck %s

// linear + gelu: one cuBLASLt call (GELU_AUX_BIAS); gelu's gradient reads the
// pre-activation, so the group writes it out as the AUX output.
// CHECK-LABEL: func.func @linear_gelu
// CHECK: %[[F:.+]]:2 = train.fused "gemm_bias_act"(%arg0, %arg1, %arg2) {strategy = "xla"}
// CHECK-NEXT: ^bb0
// CHECK-NEXT:   %[[H:.+]] = train.linear
// CHECK-NEXT:   %[[A:.+]] = train.gelu %[[H]]
// CHECK-NEXT:   train.yield %[[H]], %[[A]]
// CHECK: train.gelu_backward %arg3, %[[F]]#0
func.func @linear_gelu(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>, %dy: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %h = train.linear %x, %w, %b : tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>
  %a = train.gelu %h : tensor<4x16xf32>
  %dh = train.gelu_backward %dy, %h : tensor<4x16xf32>, tensor<4x16xf32>
  return %a, %dh : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// A convolution with bias and relu: cuDNN's fused convolution-bias-activation.
// CHECK-LABEL: func.func @conv_bias_relu
// CHECK: train.fused "conv_bias_act"(%arg0, %arg1, %arg2) {strategy = "xla"}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.conv2d
// CHECK-NEXT: train.relu
func.func @conv_bias_relu(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<2x4x6x6xf32> {
  %c = train.conv2d %x, %w, %b : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>
  %r = train.relu %c : tensor<2x4x6x6xf32>
  return %r : tensor<2x4x6x6xf32>
}

// -----

// cuDNN's fused convolution has no auxiliary output: a convolution whose
// result is read elsewhere is left alone, and explain says why.
// CHECK-LABEL: func.func @conv_read_twice
// CHECK-NOT: train.fused
func.func @conv_read_twice(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> (tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>) {
  %c = train.conv2d %x, %w, %b : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>
  // expected-remark @below {{not fused (conv_bias_act): the producer's result has another user, 'func.return'}}
  %r = train.relu %c : tensor<2x4x6x6xf32>
  return %r, %c : tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>
}

// -----

// Backward: the activation gradient of a GEMM's output, with the bias
// gradient (DGELU_BGRAD). The bias gradient is scheduled right after the
// activation gradient so the group runs before the gradient's other reader.
// CHECK-LABEL: func.func @dgelu_bgrad
// CHECK: %[[F:.+]]:2 = train.fused "gemm_dact_bgrad"(%arg0, %arg1, %arg2) {strategy = "xla"}
// CHECK-NEXT: ^bb0
// CHECK-NEXT:   %[[M:.+]] = train.matmul
// CHECK-NEXT:   %[[D:.+]] = train.gelu_backward %[[M]]
// CHECK-NEXT:   %[[S:.+]] = train.sum_to_shape %[[D]]
// CHECK-NEXT:   train.yield %[[D]], %[[S]]
// CHECK: train.matmul %[[F]]#0, %arg1
func.func @dgelu_bgrad(%dy: tensor<4x16xf32>, %w: tensor<16x16xf32>, %h: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<16xf32>) {
  %m = train.matmul %dy, %w : tensor<4x16xf32>, tensor<16x16xf32>
  %d = train.gelu_backward %m, %h : tensor<4x16xf32>, tensor<4x16xf32>
  %dx = train.matmul %d, %w : tensor<4x16xf32>, tensor<16x16xf32>
  %db = train.sum_to_shape %d {shape = array<i64: 16>} : tensor<4x16xf32>
  return %dx, %db : tensor<4x16xf32>, tensor<16xf32>
}

// -----

// A GEMM output read twice cannot have its epilogue applied in place.
// CHECK-LABEL: func.func @gemm_read_twice
// CHECK-NOT: train.fused
func.func @gemm_read_twice(%dy: tensor<4x16xf32>, %w: tensor<16x16xf32>, %h: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %m = train.matmul %dy, %w : tensor<4x16xf32>, tensor<16x16xf32>
  // expected-remark @below {{not fused (gemm_dact_bgrad): the producer's result has another user, 'func.return'}}
  %d = train.relu_backward %m, %h : tensor<4x16xf32>, tensor<4x16xf32>
  return %d, %m : tensor<4x16xf32>, tensor<4x16xf32>
}
