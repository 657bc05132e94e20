// RUN: dlc-opt %s --dlc-autodiff --dlc-loss-scaling=init-scale=1024 --split-input-file | FileCheck %s
// RUN: not dlc-opt %s --dlc-autodiff --dlc-loss-scaling --dlc-loss-scaling --split-input-file 2>&1 | FileCheck %s --check-prefix=TWICE

// The backward pass is seeded with the scale (a persistent argument); one
// status checks every gradient; each update unscales with it and skips on
// overflow; the scale and its good-step count are updated in place.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[S:[^:]+]]: tensor<f32> {train.buffer = {init = "constant", value = 1.024000e+03 : f64}, train.name = "loss_scale"}
// CHECK-SAME: %[[N:[^:]+]]: tensor<f32> {train.buffer = {init = "zeros"}, train.name = "loss_scale.good_steps"}
// CHECK-SAME: tensor<f32> {train.update_of = [[SI:[0-9]+]] : i64}, tensor<f32> {train.update_of = [[NI:[0-9]+]] : i64})
// CHECK-NOT: train.seed_gradient
// CHECK: train.softmax_cross_entropy_backward %[[S]],
// CHECK: %[[ST:.+]] = train.loss_scale_status %[[S]], %{{.+}}, %{{.+}} : tensor<f32>, tensor<4x8xf32>, tensor<4xf32>
// CHECK: train.sgd_update %{{.+}}, %{{.+}}, %{{.+}} unscale(%[[ST]] : tensor<2xf32>)
// CHECK: train.sgd_update %{{.+}}, %{{.+}}, %{{.+}} unscale(%[[ST]] : tensor<2xf32>)
// CHECK: %[[S2:.+]], %[[N2:.+]] = train.update_loss_scale %[[S]], %[[N]], %[[ST]] :
// CHECK: return {{.*}}, %[[S2]], %[[N2]]
// TWICE: error: 'func.func' op has no seed gradient (a train.constant marked 'train.seed_gradient'): was it made by dlc-autodiff, and loss scaling applied already?
func.func @forward(%x: tensor<2x8xf32> {train.input}, %y: tensor<2xi64> {train.label},
                   %w: tensor<4x8xf32> {train.name = "w", train.param = {init = "zeros"}},
                   %b: tensor<4xf32> {train.name = "b", train.param = {init = "zeros"}}) -> tensor<f32>
    attributes {train.optimizer = {kind = "sgd", lr = 0.1 : f64}} {
  %h = train.linear %x, %w, %b : tensor<2x8xf32>, tensor<4x8xf32>, tensor<4xf32>
  %l = train.softmax_cross_entropy %h, %y : tensor<2x4xf32>, tensor<2xi64>
  return %l : tensor<f32>
}
