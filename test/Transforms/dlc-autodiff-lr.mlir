// The lr option: absent, the model's rate applies; any rate given, 0
// included, replaces it; a negative or infinite one is refused.
// RUN: dlc-opt %s --dlc-autodiff | FileCheck %s --check-prefix=MODEL
// RUN: dlc-opt %s --dlc-autodiff=lr=0 | FileCheck %s --check-prefix=ZERO
// RUN: not dlc-opt %s --dlc-autodiff=lr=-1 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not dlc-opt %s --dlc-autodiff=lr=inf 2>&1 | FileCheck %s --check-prefix=INFINITE

// MODEL: train.sgd_update {{.*}} {lr = 5.000000e-01 : f32}
// ZERO: train.sgd_update {{.*}} {lr = 0.000000e+00 : f32}
// NEGATIVE: error: 'func.func' op expects a finite learning rate >= 0, got -1.000000e+00
// INFINITE: error: 'func.func' op expects a finite learning rate >= 0, got INF
func.func @forward(%x: tensor<4x8xf32> {train.input, train.name = "x"},
                   %y: tensor<4xi64> {train.label, train.name = "y"},
                   %w: tensor<8x8xf32> {train.name = "w", train.param = {init = "zeros"}})
    -> tensor<f32> attributes {train.optimizer = {kind = "sgd", lr = 0.5 : f64}} {
  %h = train.linear %x, %w : tensor<4x8xf32>, tensor<8x8xf32>
  %l = train.softmax_cross_entropy %h, %y : tensor<4x8xf32>, tensor<4xi64>
  return %l : tensor<f32>
}
