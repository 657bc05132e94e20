// RUN: dlc-opt %s --split-input-file --dlc-autodiff --dlc-data-parallel=ranks=4 | FileCheck %s
// RUN: dlc-opt %s --split-input-file --dlc-autodiff --dlc-data-parallel="ranks=8 bucket-mb=0.0001" | FileCheck %s --check-prefix=SMALL
// RUN: dlc-opt %s --split-input-file --dlc-autodiff --dlc-data-parallel="ranks=2 bucket-mb=1 first-bucket-mb=0.0001" | FileCheck %s --check-prefix=FIRST
// RUN: dlc-opt %s --split-input-file --dlc-autodiff --dlc-data-parallel="ranks=2 reduce-dtype=bf16" | FileCheck %s --check-prefix=COMPRESS
// RUN: not dlc-opt %s --split-input-file --dlc-autodiff --dlc-data-parallel="ranks=2 reduce-dtype=f8" 2>&1 | FileCheck %s --check-prefix=BADTYPE
// RUN: dlc-opt %s --split-input-file --dlc-autodiff --dlc-loss-scaling --dlc-data-parallel=ranks=2 | FileCheck %s --check-prefix=SCALED
// RUN: dlc-opt %models/small_convnet.mlir --dlc-specialize-batch=batch-size=2 --dlc-auto-mixed-precision --dlc-autodiff --dlc-loss-scaling --dlc-data-parallel=ranks=2 | FileCheck %s --check-prefix=AMP
// RUN: dlc-opt %models/small_convnet.mlir --dlc-specialize-batch=batch-size=2 --dlc-auto-mixed-precision --dlc-autodiff --dlc-loss-scaling --dlc-data-parallel="ranks=2 reduce-dtype=f16" | FileCheck %s --check-prefix=AMP16
// RUN: dlc-opt %models/small_convnet.mlir --dlc-specialize-batch=batch-size=2 --dlc-auto-mixed-precision --dlc-autodiff --dlc-loss-scaling --dlc-data-parallel="ranks=2 bucket-mb=0.001 first-bucket-mb=0.001" | FileCheck %s --check-prefix=AMPEARLY
// RUN: not dlc-opt %s --split-input-file --dlc-autodiff --dlc-data-parallel=ranks=1 2>&1 | FileCheck %s --check-prefix=ONE
// RUN: not dlc-opt %s --split-input-file --dlc-autodiff --dlc-data-parallel --dlc-data-parallel 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not dlc-opt %s --split-input-file --dlc-autodiff --dlc-fuse-optimizer-updates --dlc-data-parallel 2>&1 | FileCheck %s --check-prefix=FUSED

// One bucket (25 MiB holds both gradients), placed after the last gradient
// the backward pass computes; both updates read the averages.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[GW:.+]] = train.matmul
// CHECK: %[[GB:.+]] = train.sum_to_shape
// CHECK-NEXT: %[[R:.+]]:2 = train.all_reduce %[[GW]], %[[GB]] {ranks = 4 : i64} : tensor<4x8xf32>, tensor<4xf32>
// CHECK-NOT: train.all_reduce
// CHECK: train.sgd_update %{{.+}}, %[[R]]#0,
// CHECK: train.sgd_update %{{.+}}, %[[R]]#1,

// A bucket of 104 bytes takes the 128-byte weight gradient alone and
// then the bias gradient: two all-reduces, numbered in order.
// SMALL: %[[GW:.+]] = train.matmul
// SMALL-NEXT: %[[RW:.+]] = train.all_reduce %[[GW]] {ranks = 8 : i64} : tensor<4x8xf32>
// SMALL: %[[GB:.+]] = train.sum_to_shape
// SMALL-NEXT: %[[RB:.+]] = train.all_reduce %[[GB]] {bucket = 1 : i64, ranks = 8 : i64} : tensor<4xf32>
// SMALL: train.sgd_update %{{.+}}, %[[RW]],
// SMALL: train.sgd_update %{{.+}}, %[[RB]],

// DDP's small first bucket: at 104 bytes it takes the weight gradient,
// which the backward pass finishes first, alone; the 1 MiB buckets after it
// take the rest.
// FIRST: %[[GW:.+]] = train.matmul
// FIRST-NEXT: train.all_reduce %[[GW]] {ranks = 2 : i64} : tensor<4x8xf32>
// FIRST: %[[GB:.+]] = train.sum_to_shape
// FIRST-NEXT: train.all_reduce %[[GB]] {bucket = 1 : i64, ranks = 2 : i64} : tensor<4xf32>
// FIRST-NOT: train.all_reduce

// DDP's compression hooks: float32 gradients are sent as bf16 and their
// means read back as float32.
// COMPRESS: %[[GW:.+]] = train.matmul
// COMPRESS: %[[GB:.+]] = train.sum_to_shape
// COMPRESS-NEXT: %[[CW:.+]] = train.cast %[[GW]] to bf16 : tensor<4x8xf32>
// COMPRESS-NEXT: %[[CB:.+]] = train.cast %[[GB]] to bf16 : tensor<4xf32>
// COMPRESS-NEXT: %[[R:.+]]:2 = train.all_reduce %[[CW]], %[[CB]] {ranks = 2 : i64} : tensor<4x8xbf16>, tensor<4xbf16>
// Each mean is cast back just before its update reads it, not right after
// the all-reduce, where it would be the first op to touch the bucket and a
// runtime would wait for the all-reduce there.
// COMPRESS-NEXT: %[[MW:.+]] = train.cast %[[R]]#0 to f32 : tensor<4x8xbf16>
// COMPRESS-NEXT: train.sgd_update %{{.+}}, %[[MW]],
// COMPRESS-NEXT: %[[MB:.+]] = train.cast %[[R]]#1 to f32 : tensor<4xbf16>
// COMPRESS-NEXT: train.sgd_update %{{.+}}, %[[MB]],
// BADTYPE: error: dlc-data-parallel: reduce-dtype must be f16 or bf16 (or empty, to send gradients as they are), got 'f8'

// Under loss scaling the overflow check reads the averaged gradients, so
// every rank skips the same steps.
// SCALED: %[[R:.+]]:2 = train.all_reduce
// SCALED-NEXT: train.loss_scale_status %{{.+}}, %[[R]]#0, %[[R]]#1 :

// Under AMP the overflow check reads the half-precision gradients the
// updates' float32 copies are widened from: it reads the means instead, so
// every rank agrees on an overflow (GradScaler checks the all-reduced
// gradients). Every operand after the scale is a result of the all-reduce.
// AMP: %[[R:.+]]:14 = train.all_reduce
// AMP: train.loss_scale_status %arg{{[0-9]+}}{{(, %[0-9]+#[0-9]+)+}} :
// With fp16 compression the half-precision gradients are sent as computed
// (AMP's widening and a cast back down would be the identity), and the
// check reads the f16 means, leaving each cast back up one reader, its
// update. The batch-norm gradients, computed in float32, are cast down.
// AMP16: %[[R:.+]]:14 = train.all_reduce {{.*}} : tensor<10x32xf16>, tensor<10xf16>, tensor<32xf16>,
// AMP16: train.loss_scale_status %arg{{[0-9]+}}{{(, %[0-9]+#[0-9]+)+}} : tensor<f32>, tensor<16x3x3x3xf16>,
// AMP's float32 copies of the gradients sit by the updates, after the
// whole backward pass; the pass moves each up to its gradient, so that the
// buckets fill, and their all-reduces start, as the backward pass goes (the
// classifier's first, then each stage's, between the stages' backward ops).
// AMPEARLY: train.all_reduce {{.*}} : tensor<10x32xf32>
// AMPEARLY: train.batch_norm_backward
// AMPEARLY: train.all_reduce {{.*}}bucket = 1
// AMPEARLY: train.conv2d_backward_filter
// AMPEARLY: train.all_reduce {{.*}}bucket = 2
// AMPEARLY: train.batch_norm_backward
// ONE: error: dlc-data-parallel expects ranks >= 2 (one rank averages nothing), bucket-mb > 0 and first-bucket-mb >= 0, got ranks=1, bucket-mb=2.5{{.*}} and first-bucket-mb=0
// TWICE: error: 'train.all_reduce' op is already in @train_step: dlc-data-parallel runs once
// FUSED: error: 'train.sgd_update' op is inside a fused group: run dlc-data-parallel before the fusion passes
func.func @forward(%x: tensor<2x8xf32> {train.input}, %y: tensor<2xi64> {train.label},
                   %w: tensor<4x8xf32> {train.name = "w", train.param = {init = "zeros"}},
                   %b: tensor<4xf32> {train.name = "b", train.param = {init = "zeros"}}) -> tensor<f32>
    attributes {train.optimizer = {kind = "sgd", lr = 0.1 : f64}} {
  %h = train.linear %x, %w, %b : tensor<2x8xf32>, tensor<4x8xf32>, tensor<4xf32>
  %l = train.softmax_cross_entropy %h, %y : tensor<2x4xf32>, tensor<2xi64>
  return %l : tensor<f32>
}
