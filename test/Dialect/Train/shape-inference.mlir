// RUN: dlc-opt %s --split-input-file --mlir-print-op-generic | FileCheck %s
// Result types are never written in a model file; the generic form prints
// the inferred ones.

// ResNet-50's stem, at 224x224: 7x7/2 conv, 3x3/2 max pool.
// CHECK-LABEL: sym_name = "resnet_stem"
func.func @resnet_stem(%x: tensor<?x3x224x224xf32>, %w: tensor<64x3x7x7xf32>) -> tensor<?x64x56x56xf32> {
  // CHECK: "train.conv2d"{{.*}} -> tensor<?x64x112x112xf32>
  %0 = train.conv2d %x, %w {padding = array<i64: 3, 3>, stride = array<i64: 2, 2>} : tensor<?x3x224x224xf32>, tensor<64x3x7x7xf32>
  // CHECK: "train.max_pool2d"{{.*}} -> tensor<?x64x56x56xf32>
  %1 = train.max_pool2d %0 {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<?x64x112x112xf32>
  return %1 : tensor<?x64x56x56xf32>
}

// -----

// Ceil mode keeps a last partial window (PyTorch: 7 -> 4 with k=2, s=2).
// CHECK-LABEL: sym_name = "ceil_mode"
func.func @ceil_mode(%x: tensor<1x1x7x7xf32>) -> tensor<1x1x4x3xf32> {
  // CHECK: "train.max_pool2d"{{.*}} -> tensor<1x1x4x4xf32>
  %0 = train.max_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, ceil_mode = true} : tensor<1x1x7x7xf32>
  // CHECK: "train.avg_pool2d"{{.*}} -> tensor<1x1x3x3xf32>
  %1 = train.avg_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>} : tensor<1x1x7x7xf32>
  // CHECK: "train.slice"{{.*}} -> tensor<1x1x4x3xf32>
  %2 = train.slice %0 {axis = 3 : i64, start = 1 : i64, end = 4 : i64} : tensor<1x1x4x4xf32>
  return %2 : tensor<1x1x4x3xf32>
}

// -----

// BERT's attention shapes: heads split by reshape and transpose, scores by a
// transposed batched matmul.
// CHECK-LABEL: sym_name = "bert_attention"
func.func @bert_attention(%x: tensor<?x128x768xf32>, %w: tensor<768x768xf32>, %b: tensor<768xf32>) -> tensor<?x12x128x128xf32> {
  // CHECK: "train.linear"{{.*}} -> tensor<?x128x768xf32>
  %q = train.linear %x, %w, %b : tensor<?x128x768xf32>, tensor<768x768xf32>, tensor<768xf32>
  // CHECK: "train.reshape"{{.*}} -> tensor<?x128x12x64xf32>
  %h = train.reshape %q {shape = array<i64: -1, 128, 12, 64>} : tensor<?x128x768xf32>
  // CHECK: "train.transpose"{{.*}} -> tensor<?x12x128x64xf32>
  %t = train.transpose %h {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x128x12x64xf32>
  // CHECK: "train.matmul"{{.*}} -> tensor<?x12x128x128xf32>
  %s = train.matmul %t, %t {transpose_rhs = true} : tensor<?x12x128x64xf32>, tensor<?x12x128x64xf32>
  return %s : tensor<?x12x128x128xf32>
}

// -----

// Broadcasting aligns trailing dimensions; a 1 stretches.
// CHECK-LABEL: sym_name = "broadcast"
func.func @broadcast(%a: tensor<?x1x5xf32>, %b: tensor<3x1xf32>) -> tensor<?x3x5xf32> {
  // CHECK: "train.add"{{.*}} -> tensor<?x3x5xf32>
  %0 = train.add %a, %b : tensor<?x1x5xf32>, tensor<3x1xf32>
  return %0 : tensor<?x3x5xf32>
}

// -----

// Concatenation sums the axis; GPT-2 language-model loss over [N, T, V].
// CHECK-LABEL: sym_name = "concat_and_loss"
func.func @concat_and_loss(%a: tensor<?x256x32x64xf32>, %b: tensor<?x48x32x64xf32>,
                           %logits: tensor<?x1024x50257xf32>, %labels: tensor<?x1024xi64>) -> tensor<f32> {
  // CHECK: "train.concat"{{.*}} -> tensor<?x304x32x64xf32>
  %0 = train.concat %a, %b {axis = 1 : i64} : tensor<?x256x32x64xf32>, tensor<?x48x32x64xf32>
  // CHECK: "train.softmax_cross_entropy"{{.*}} -> tensor<f32>
  %1 = train.softmax_cross_entropy %logits, %labels {class_axis = 2 : i64} : tensor<?x1024x50257xf32>, tensor<?x1024xi64>
  return %1 : tensor<f32>
}

// -----

// Embedding appends the feature dimension to the index shape.
// CHECK-LABEL: sym_name = "embedding"
func.func @embedding(%t: tensor<30522x768xbf16>, %ids: tensor<?x128xi32>) -> tensor<?x128x768xbf16> {
  // CHECK: "train.embedding"{{.*}} -> tensor<?x128x768xbf16>
  %0 = train.embedding %t, %ids : tensor<30522x768xbf16>, tensor<?x128xi32>
  return %0 : tensor<?x128x768xbf16>
}

// -----

// The same stem channels-last: NHWC input, OHWI filter, NHWC result; batch
// norm normalizes the last dimension.
// CHECK-LABEL: sym_name = "nhwc_stem"
func.func @nhwc_stem(%x: tensor<?x224x224x3xf16>, %w: tensor<64x7x7x3xf16>, %s: tensor<64xf32>) {
  // CHECK: "train.conv2d"{{.*}}layout = "NHWC"{{.*}} -> tensor<?x112x112x64xf16>
  %0 = train.conv2d %x, %w {layout = "NHWC", padding = array<i64: 3, 3>, stride = array<i64: 2, 2>} : tensor<?x224x224x3xf16>, tensor<64x7x7x3xf16>
  // CHECK: "train.batch_norm"{{.*}} -> (tensor<?x112x112x64xf16>, tensor<64xf32>, tensor<64xf32>)
  %y, %m, %v = train.batch_norm %0, %s, %s, %s, %s {layout = "NHWC"} : tensor<?x112x112x64xf16>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
  // A channels-last resize keeps C last; `size` is [H, W] either way.
  // CHECK: "train.resize_bilinear"{{.*}}layout = "NHWC"{{.*}} -> tensor<?x224x200x64xf16>
  %r = train.resize_bilinear %y {layout = "NHWC", size = array<i64: 224, 200>} : tensor<?x112x112x64xf16>
  // So does pooling: ResNet's 3x3 / 2 max pool over [?, 112, 112, 64].
  // CHECK: "train.max_pool2d"{{.*}}layout = "NHWC"{{.*}} -> tensor<?x56x56x64xf16>
  %p = train.max_pool2d %y {kernel_size = array<i64: 3, 3>, layout = "NHWC", padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<?x112x112x64xf16>
  return
}
