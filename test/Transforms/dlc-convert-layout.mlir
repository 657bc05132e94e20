// RUN: dlc-opt %s --dlc-convert-layout --split-input-file | FileCheck %s
// Converting to NHWC and back to NCHW must leave no transpose at all: every
// one the first pass inserted cancels against its inverse.
// RUN: dlc-opt %s --dlc-convert-layout --dlc-convert-layout=layout=NCHW --split-input-file | FileCheck %s --check-prefix=BACK
// RUN: not dlc-opt %s --dlc-convert-layout=layout=CHWN --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: dlc-convert-layout: unknown layout 'CHWN' (NHWC or NCHW)
// BACK-NOT: train.transpose
// BACK-NOT: "NHWC"

// conv -> batch norm -> relu -> conv: the activations stay NHWC from one
// convolution to the next; transposes only at the edges (the image, the
// 3x3 filter, the result).
// CHECK-LABEL: func.func @chain
// CHECK: %[[X:.+]] = train.transpose %arg0 {permutation = array<i64: 0, 2, 3, 1>} : tensor<2x3x8x8xf16>
// CHECK: %[[W:.+]] = train.transpose %arg1 {permutation = array<i64: 0, 2, 3, 1>} : tensor<4x3x3x3xf16>
// CHECK: %[[C:.+]] = train.conv2d %[[X]], %[[W]] {layout = "NHWC", padding = array<i64: 1, 1>} : tensor<2x8x8x3xf16>, tensor<4x3x3x3xf16>
// CHECK: %[[Y:.+]], %{{.+}}, %{{.+}} = train.batch_norm %[[C]], {{.*}} {layout = "NHWC"} : tensor<2x8x8x4xf16>
// CHECK: %[[R:.+]] = train.relu %[[Y]] : tensor<2x8x8x4xf16>
// A 1x1 filter's OIHW -> OHWI moves no data: a reshape (a view, no kernel).
// CHECK: %[[W2:.+]] = train.reshape %arg6 {shape = array<i64: 4, 1, 1, 4>} : tensor<4x4x1x1xf16>
// CHECK: %[[Z:.+]] = train.conv2d %[[R]], %[[W2]] {layout = "NHWC"}
// CHECK: %[[OUT:.+]] = train.transpose %[[Z]] {permutation = array<i64: 0, 3, 1, 2>} : tensor<2x8x8x4xf16>
// CHECK: return %[[OUT]]
// CHECK-NOT: train.transpose
func.func @chain(%x: tensor<2x3x8x8xf16>, %w: tensor<4x3x3x3xf16>, %g: tensor<4xf32>, %b: tensor<4xf32>,
                 %rm: tensor<4xf32>, %rv: tensor<4xf32>, %w2: tensor<4x4x1x1xf16>) -> tensor<2x4x8x8xf16> {
  %c = train.conv2d %x, %w {padding = array<i64: 1, 1>} : tensor<2x3x8x8xf16>, tensor<4x3x3x3xf16>
  %y, %m, %v = train.batch_norm %c, %g, %b, %rm, %rv : tensor<2x4x8x8xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  %r = train.relu %y : tensor<2x4x8x8xf16>
  %z = train.conv2d %r, %w2 : tensor<2x4x8x8xf16>, tensor<4x4x1x1xf16>
  return %z : tensor<2x4x8x8xf16>
}

// -----

// The residual join of two NHWC values is NHWC too.
// CHECK-LABEL: func.func @residual
// CHECK: %[[A:.+]] = train.conv2d {{.*}}layout = "NHWC"
// CHECK: %[[B:.+]] = train.conv2d {{.*}}layout = "NHWC"
// CHECK: %[[S:.+]] = train.add %[[A]], %[[B]] : tensor<2x8x8x4xf16>, tensor<2x8x8x4xf16>
// CHECK: %[[R:.+]] = train.relu %[[S]] : tensor<2x8x8x4xf16>
// CHECK: train.transpose %[[R]] {permutation = array<i64: 0, 3, 1, 2>}
func.func @residual(%x: tensor<2x4x8x8xf16>, %w: tensor<4x4x1x1xf16>, %w2: tensor<4x4x3x3xf16>) -> tensor<2x4x8x8xf16> {
  %a = train.conv2d %x, %w : tensor<2x4x8x8xf16>, tensor<4x4x1x1xf16>
  %b = train.conv2d %x, %w2 {padding = array<i64: 1, 1>} : tensor<2x4x8x8xf16>, tensor<4x4x3x3xf16>
  %s = train.add %a, %b : tensor<2x4x8x8xf16>, tensor<2x4x8x8xf16>
  %r = train.relu %s : tensor<2x4x8x8xf16>
  return %r : tensor<2x4x8x8xf16>
}

// -----

// What a transpose does not cross: a widening cast (it would move twice the
// bytes), a broadcasting operand, dropout (its mask is indexed by element),
// an op without a layout (global average pooling). Max pooling has one: it
// runs NHWC.
// CHECK-LABEL: func.func @edges
// CHECK: %[[C:.+]] = train.conv2d {{.*}}layout = "NHWC"
// CHECK: %[[T:.+]] = train.transpose %[[C]] {permutation = array<i64: 0, 3, 1, 2>}
// CHECK: train.cast %[[T]] to f32 : tensor<2x4x8x8xf16>
// CHECK: train.add %[[T]], %arg2 : tensor<2x4x8x8xf16>, tensor<4x1x1xf16>
// CHECK: train.dropout %[[T]]
// CHECK: train.global_avg_pool %[[T]]
// CHECK: %[[P:.+]] = train.max_pool2d %[[C]] {kernel_size = array<i64: 2, 2>, layout = "NHWC", stride = array<i64: 2, 2>} : tensor<2x8x8x4xf16>
// CHECK: train.transpose %[[P]] {permutation = array<i64: 0, 3, 1, 2>} : tensor<2x4x4x4xf16>
func.func @edges(%x: tensor<2x4x8x8xf16>, %w: tensor<4x4x1x1xf16>, %bias: tensor<4x1x1xf16>)
    -> (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf16>, tensor<2x4x8x8xf16>, tensor<2x4x4x4xf16>, tensor<2x4x1x1xf16>) {
  %c = train.conv2d %x, %w : tensor<2x4x8x8xf16>, tensor<4x4x1x1xf16>
  %f = train.cast %c to f32 : tensor<2x4x8x8xf16>
  %a = train.add %c, %bias : tensor<2x4x8x8xf16>, tensor<4x1x1xf16>
  %d = train.dropout %c {rate = 0.1 : f32, seed = 7 : i64} : tensor<2x4x8x8xf16>
  %g = train.global_avg_pool %c : tensor<2x4x8x8xf16>
  %p = train.max_pool2d %c {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>} : tensor<2x4x8x8xf16>
  return %f, %a, %d, %p, %g : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf16>, tensor<2x4x8x8xf16>, tensor<2x4x4x4xf16>, tensor<2x4x1x1xf16>
}

// -----

// The gradients: shape attributes in the layout's order, the filter
// gradient transposed back to OIHW for the optimizer, one transpose of the
// filter for the forward and the data gradient.
// CHECK-LABEL: func.func @backward
// CHECK-COUNT-1: train.transpose %arg1 {permutation = array<i64: 0, 2, 3, 1>}
// CHECK: train.conv2d_backward_data {{.*}} {input_shape = array<i64: 2, 8, 8, 3>, layout = "NHWC", padding = array<i64: 1, 1>}
// CHECK: %[[DW:.+]] = train.conv2d_backward_filter {{.*}} {filter_shape = array<i64: 4, 3, 3, 3>, layout = "NHWC", padding = array<i64: 1, 1>}
// CHECK: train.transpose %[[DW]] {permutation = array<i64: 0, 3, 1, 2>} : tensor<4x3x3x3xf16>
// CHECK: train.batch_norm_backward {{.*}} {layout = "NHWC"} : tensor<2x8x8x4xf16>
func.func @backward(%x: tensor<2x3x8x8xf16>, %w: tensor<4x3x3x3xf16>, %dy: tensor<2x4x8x8xf16>, %g: tensor<4xf32>)
    -> (tensor<2x4x8x8xf16>, tensor<2x3x8x8xf16>, tensor<4x3x3x3xf16>, tensor<2x4x8x8xf16>) {
  %y = train.conv2d %x, %w {padding = array<i64: 1, 1>} : tensor<2x3x8x8xf16>, tensor<4x3x3x3xf16>
  %dx = train.conv2d_backward_data %dy, %w {input_shape = array<i64: 2, 3, 8, 8>, padding = array<i64: 1, 1>} : tensor<2x4x8x8xf16>, tensor<4x3x3x3xf16>
  %dw = train.conv2d_backward_filter %dy, %x {filter_shape = array<i64: 4, 3, 3, 3>, padding = array<i64: 1, 1>} : tensor<2x4x8x8xf16>, tensor<2x3x8x8xf16>
  %di, %dg, %db = train.batch_norm_backward %dy, %y, %g : tensor<2x4x8x8xf16>, tensor<2x4x8x8xf16>, tensor<4xf32>
  return %y, %dx, %dw, %di : tensor<2x4x8x8xf16>, tensor<2x3x8x8xf16>, tensor<4x3x3x3xf16>, tensor<2x4x8x8xf16>
}

// -----

// Batch norm over [N, C] has no spatial layout and is left alone.
// CHECK-LABEL: func.func @bn_2d
// CHECK-NOT: train.transpose
// CHECK-NOT: layout = "NHWC"
func.func @bn_2d(%x: tensor<8x4xf32>, %s: tensor<4xf32>) -> tensor<8x4xf32> {
  %y, %m, %v = train.batch_norm %x, %s, %s, %s, %s : tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// An op that crosses keeps its attributes.
// CHECK-LABEL: func.func @attributes
// CHECK: %[[C:.+]] = train.conv2d {{.*}}layout = "NHWC"
// CHECK: train.scale %[[C]] {scale = 5.000000e-01 : f32} : tensor<2x4x4x3xf16>
func.func @attributes(%x: tensor<2x3x4x4xf16>, %w: tensor<3x3x1x1xf16>) -> tensor<2x3x4x4xf16> {
  %c = train.conv2d %x, %w : tensor<2x3x4x4xf16>, tensor<3x3x1x1xf16>
  %s = train.scale %c {scale = 0.5 : f32} : tensor<2x3x4x4xf16>
  %d = train.conv2d %s, %w : tensor<2x3x4x4xf16>, tensor<3x3x1x1xf16>
  return %d : tensor<2x3x4x4xf16>
}

// -----

// Ops with an axis cross once the axis is renamed: a channel concat of two
// NHWC convolutions is a concat along dimension 3.
// CHECK-LABEL: func.func @concat
// CHECK: %[[A:.+]] = train.conv2d {{.*}}layout = "NHWC"
// CHECK: %[[B:.+]] = train.conv2d {{.*}}layout = "NHWC"
// CHECK: %[[J:.+]] = train.concat %[[A]], %[[B]] {axis = 3 : i64} : tensor<2x8x8x4xf16>, tensor<2x8x8x4xf16>
// CHECK: train.transpose %[[J]] {permutation = array<i64: 0, 3, 1, 2>} : tensor<2x8x8x8xf16>
func.func @concat(%x: tensor<2x4x8x8xf16>, %w: tensor<4x4x1x1xf16>, %w2: tensor<4x4x1x1xf16>) -> tensor<2x8x8x8xf16> {
  %a = train.conv2d %x, %w : tensor<2x4x8x8xf16>, tensor<4x4x1x1xf16>
  %b = train.conv2d %x, %w2 : tensor<2x4x8x8xf16>, tensor<4x4x1x1xf16>
  %j = train.concat %a, %b {axis = 1 : i64} : tensor<2x4x8x8xf16>, tensor<2x4x8x8xf16>
  return %j : tensor<2x8x8x8xf16>
}

// -----

// A slice, its gradient (a negative axis counts from the end), and a bias
// gradient (sum over N, H, W), which sums dimensions 0, 1, 2 and needs no
// transpose after it: the channel is the one dimension kept.
// CHECK-LABEL: func.func @slices
// CHECK: %[[A:.+]] = train.conv2d {{.*}}layout = "NHWC"
// CHECK: %[[S:.+]] = train.slice %[[A]] {axis = 3 : i64, end = 3 : i64, start = 1 : i64} : tensor<2x8x8x4xf16>
// CHECK: train.transpose %[[S]] {permutation = array<i64: 0, 3, 1, 2>} : tensor<2x8x8x2xf16>
// CHECK-LABEL: func.func @slice_backward
// CHECK: %[[B:.+]] = train.conv2d {{.*}}layout = "NHWC"
// CHECK: %[[G:.+]] = train.slice_backward %[[B]] {axis = 3 : i64, end = 4 : i64, input_shape = array<i64: 2, 8, 8, 8>, start = 0 : i64} : tensor<2x8x8x4xf16>
// CHECK: train.transpose %[[G]] {permutation = array<i64: 0, 3, 1, 2>} : tensor<2x8x8x8xf16>
// CHECK-LABEL: func.func @bias_gradient
// CHECK: %[[C:.+]] = train.conv2d {{.*}}layout = "NHWC"
// CHECK: %[[R:.+]] = train.reduce_sum %[[C]] {axes = array<i64: 0, 1, 2>} : tensor<2x8x8x4xf16>
// CHECK-NEXT: return %[[R]]
func.func @slices(%x: tensor<2x4x8x8xf16>, %w: tensor<4x4x1x1xf16>) -> tensor<2x2x8x8xf16> {
  %a = train.conv2d %x, %w : tensor<2x4x8x8xf16>, tensor<4x4x1x1xf16>
  %s = train.slice %a {axis = 1 : i64, start = 1 : i64, end = 3 : i64} : tensor<2x4x8x8xf16>
  return %s : tensor<2x2x8x8xf16>
}
func.func @slice_backward(%x: tensor<2x4x8x8xf16>, %w: tensor<4x4x1x1xf16>) -> tensor<2x8x8x8xf16> {
  %a = train.conv2d %x, %w : tensor<2x4x8x8xf16>, tensor<4x4x1x1xf16>
  %g = train.slice_backward %a {input_shape = array<i64: 2, 8, 8, 8>, axis = -3 : i64, start = 0 : i64, end = 4 : i64} : tensor<2x4x8x8xf16>
  return %g : tensor<2x8x8x8xf16>
}
func.func @bias_gradient(%x: tensor<2x4x8x8xf16>, %w: tensor<4x4x1x1xf16>) -> tensor<4xf16> {
  %a = train.conv2d %x, %w : tensor<2x4x8x8xf16>, tensor<4x4x1x1xf16>
  %r = train.reduce_sum %a {axes = array<i64: 0, 2, 3>} : tensor<2x4x8x8xf16>
  return %r : tensor<4xf16>
}

// -----

// Reductions whose kept dimensions come out in another order: with
// keep_dims, [N, 1, 1, C] -> [N, C, 1, 1] moves no data (a view); summing
// N and W of NHWC leaves [H, C], and [C, H] is a transpose of that.
// CHECK-LABEL: func.func @keep_dims
// CHECK: %[[K:.+]] = train.reduce_sum %{{.+}} {axes = array<i64: 1, 2>, keep_dims = true} : tensor<2x8x8x4xf16>
// CHECK: train.reshape %[[K]] {shape = array<i64: 2, 4, 1, 1>} : tensor<2x1x1x4xf16>
// CHECK-LABEL: func.func @reordered
// CHECK: %[[W:.+]] = train.reduce_sum %{{.+}} {axes = array<i64: 0, 2>} : tensor<2x8x8x4xf16>
// CHECK: train.transpose %[[W]] {permutation = array<i64: 1, 0>} : tensor<8x4xf16>
func.func @keep_dims(%x: tensor<2x4x8x8xf16>, %w: tensor<4x4x1x1xf16>) -> tensor<2x4x1x1xf16> {
  %a = train.conv2d %x, %w : tensor<2x4x8x8xf16>, tensor<4x4x1x1xf16>
  %k = train.reduce_sum %a {axes = array<i64: 2, 3>, keep_dims = true} : tensor<2x4x8x8xf16>
  return %k : tensor<2x4x1x1xf16>
}
func.func @reordered(%x: tensor<2x4x8x8xf16>, %w: tensor<4x4x1x1xf16>) -> tensor<4x8xf16> {
  %a = train.conv2d %x, %w : tensor<2x4x8x8xf16>, tensor<4x4x1x1xf16>
  %r = train.reduce_sum %a {axes = array<i64: 0, -1>} : tensor<2x4x8x8xf16>
  return %r : tensor<4x8xf16>
}

// -----

// A move never adds transposes: one transpose read by two slices stays
// before them rather than become two after them.
// CHECK-LABEL: func.func @shared
// CHECK: %[[A:.+]] = train.conv2d {{.*}}layout = "NHWC"
// CHECK: %[[T:.+]] = train.transpose %[[A]] {permutation = array<i64: 0, 3, 1, 2>}
// CHECK: train.slice %[[T]] {axis = 1 : i64, end = 2 : i64, start = 0 : i64} : tensor<2x4x8x8xf16>
// CHECK: train.slice %[[T]] {axis = 1 : i64, end = 4 : i64, start = 2 : i64} : tensor<2x4x8x8xf16>
// CHECK-NOT: train.transpose
func.func @shared(%x: tensor<2x4x8x8xf16>, %w: tensor<4x4x1x1xf16>) -> (tensor<2x2x8x8xf16>, tensor<2x2x8x8xf16>) {
  %a = train.conv2d %x, %w : tensor<2x4x8x8xf16>, tensor<4x4x1x1xf16>
  %s = train.slice %a {axis = 1 : i64, start = 0 : i64, end = 2 : i64} : tensor<2x4x8x8xf16>
  %t = train.slice %a {axis = 1 : i64, start = 2 : i64, end = 4 : i64} : tensor<2x4x8x8xf16>
  return %s, %t : tensor<2x2x8x8xf16>, tensor<2x2x8x8xf16>
}

// -----

// A segmentation head: bilinear upsampling runs NHWC too, and the
// per-pixel loss reads the NHWC logits along class axis 3 (the labels
// index N, H, W in the same order), through AMP's widening cast of the
// logits. Forward and backward, the only transposes left are the image's,
// the filter's and the returned gradient's.
// CHECK-LABEL: func.func @segmentation_head
// CHECK: %[[C:.+]] = train.conv2d {{.*}}layout = "NHWC"
// CHECK: %[[R:.+]] = train.resize_bilinear %[[C]] {layout = "NHWC", size = array<i64: 16, 16>} : tensor<2x8x8x5xf16>
// CHECK: %[[F:.+]] = train.cast %[[R]] to f32 : tensor<2x16x16x5xf16>
// CHECK: train.softmax_cross_entropy %[[F]], %arg2 {class_axis = 3 : i64} : tensor<2x16x16x5xf32>, tensor<2x16x16xi64>
// CHECK: %[[G:.+]] = train.softmax_cross_entropy_backward %arg3, %[[F]], %arg2 {class_axis = 3 : i64}
// CHECK: %[[H:.+]] = train.cast %[[G]] to f16 : tensor<2x16x16x5xf32>
// CHECK: %[[D:.+]] = train.resize_bilinear_backward %[[H]] {input_shape = array<i64: 2, 8, 8, 5>, layout = "NHWC"}
// CHECK-NEXT: %[[DT:.+]] = train.transpose %[[D]] {permutation = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT: return %{{.+}}, %[[DT]]
func.func @segmentation_head(%x: tensor<2x4x8x8xf16>, %w: tensor<5x4x3x3xf16>, %labels: tensor<2x16x16xi64>, %seed: tensor<f32>)
    -> (tensor<f32>, tensor<2x5x8x8xf16>) {
  %c = train.conv2d %x, %w {padding = array<i64: 1, 1>} : tensor<2x4x8x8xf16>, tensor<5x4x3x3xf16>
  %r = train.resize_bilinear %c {size = array<i64: 16, 16>} : tensor<2x5x8x8xf16>
  %f = train.cast %r to f32 : tensor<2x5x16x16xf16>
  %loss = train.softmax_cross_entropy %f, %labels : tensor<2x5x16x16xf32>, tensor<2x16x16xi64>
  %g = train.softmax_cross_entropy_backward %seed, %f, %labels : tensor<f32>, tensor<2x5x16x16xf32>, tensor<2x16x16xi64>
  %h = train.cast %g to f16 : tensor<2x5x16x16xf32>
  %dc = train.resize_bilinear_backward %h {input_shape = array<i64: 2, 5, 8, 8>} : tensor<2x5x16x16xf16>
  %dx = train.conv2d_backward_data %dc, %w {input_shape = array<i64: 2, 4, 8, 8>, padding = array<i64: 1, 1>} : tensor<2x5x8x8xf16>, tensor<5x4x3x3xf16>
  return %loss, %dc : tensor<f32>, tensor<2x5x8x8xf16>
}
