// A small residual convolutional net for 32x32 RGB images, 10 classes: the
// conv / batch-norm / relu / pooling / residual-add pattern of ResNet at a
// size the CPU backend runs in milliseconds.
//   stem: conv3x3(16) bn relu
//   block: conv3x3(16) bn relu conv3x3(16) bn + shortcut, relu
//   max_pool 2x2, conv3x3(32, stride 2) bn relu, avg_pool 2x2,
//   global_avg_pool, linear(10)
// Default benchmark setting: batch 32, SGD with momentum and weight decay.
module {
  func.func @forward(
      %x: tensor<?x3x32x32xf32> {train.name = "x", train.input},
      %labels: tensor<?xi64> {train.name = "labels", train.label},
      %stem_w: tensor<16x3x3x3xf32> {train.name = "stem_w", train.param = {init = "kaiming_normal", mode = "fan_out", nonlinearity = "relu"}},
      %stem_g: tensor<16xf32> {train.name = "stem_g", train.param = {init = "ones"}},
      %stem_b: tensor<16xf32> {train.name = "stem_b", train.param = {init = "zeros"}},
      %stem_rm: tensor<16xf32> {train.name = "stem_rm", train.buffer = {init = "zeros"}},
      %stem_rv: tensor<16xf32> {train.name = "stem_rv", train.buffer = {init = "ones"}},
      %c1_w: tensor<16x16x3x3xf32> {train.name = "c1_w", train.param = {init = "kaiming_normal", mode = "fan_out", nonlinearity = "relu"}},
      %c1_g: tensor<16xf32> {train.name = "c1_g", train.param = {init = "ones"}},
      %c1_b: tensor<16xf32> {train.name = "c1_b", train.param = {init = "zeros"}},
      %c1_rm: tensor<16xf32> {train.name = "c1_rm", train.buffer = {init = "zeros"}},
      %c1_rv: tensor<16xf32> {train.name = "c1_rv", train.buffer = {init = "ones"}},
      %c2_w: tensor<16x16x3x3xf32> {train.name = "c2_w", train.param = {init = "kaiming_normal", mode = "fan_out", nonlinearity = "relu"}},
      %c2_g: tensor<16xf32> {train.name = "c2_g", train.param = {init = "ones"}},
      %c2_b: tensor<16xf32> {train.name = "c2_b", train.param = {init = "zeros"}},
      %c2_rm: tensor<16xf32> {train.name = "c2_rm", train.buffer = {init = "zeros"}},
      %c2_rv: tensor<16xf32> {train.name = "c2_rv", train.buffer = {init = "ones"}},
      %c3_w: tensor<32x16x3x3xf32> {train.name = "c3_w", train.param = {init = "kaiming_normal", mode = "fan_out", nonlinearity = "relu"}},
      %c3_g: tensor<32xf32> {train.name = "c3_g", train.param = {init = "ones"}},
      %c3_b: tensor<32xf32> {train.name = "c3_b", train.param = {init = "zeros"}},
      %c3_rm: tensor<32xf32> {train.name = "c3_rm", train.buffer = {init = "zeros"}},
      %c3_rv: tensor<32xf32> {train.name = "c3_rv", train.buffer = {init = "ones"}},
      %fc_w: tensor<10x32xf32> {train.name = "fc_w", train.param = {init = "kaiming_uniform", a = 2.2360679774997898 : f64}},
      %fc_b: tensor<10xf32> {train.name = "fc_b", train.param = {init = "uniform", low = -0.1767766953 : f64, high = 0.1767766953 : f64}})
      -> tensor<f32>
      attributes {train.optimizer = {kind = "sgd", lr = 0.1 : f64, momentum = 0.9 : f64, weight_decay = 1.0e-4 : f64}} {
    // Stem.
    %s0 = train.conv2d %x, %stem_w {padding = array<i64: 1, 1>} : tensor<?x3x32x32xf32>, tensor<16x3x3x3xf32>
    %s1, %s1_rm, %s1_rv = train.batch_norm %s0, %stem_g, %stem_b, %stem_rm, %stem_rv : tensor<?x16x32x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
    %s2 = train.relu %s1 : tensor<?x16x32x32xf32>
    // Residual block.
    %r0 = train.conv2d %s2, %c1_w {padding = array<i64: 1, 1>} : tensor<?x16x32x32xf32>, tensor<16x16x3x3xf32>
    %r1, %r1_rm, %r1_rv = train.batch_norm %r0, %c1_g, %c1_b, %c1_rm, %c1_rv : tensor<?x16x32x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
    %r2 = train.relu %r1 : tensor<?x16x32x32xf32>
    %r3 = train.conv2d %r2, %c2_w {padding = array<i64: 1, 1>} : tensor<?x16x32x32xf32>, tensor<16x16x3x3xf32>
    %r4, %r4_rm, %r4_rv = train.batch_norm %r3, %c2_g, %c2_b, %c2_rm, %c2_rv : tensor<?x16x32x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
    %r5 = train.add %r4, %s2 : tensor<?x16x32x32xf32>, tensor<?x16x32x32xf32>
    %r6 = train.relu %r5 : tensor<?x16x32x32xf32>
    // Downsampling.
    %p0 = train.max_pool2d %r6 {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>} : tensor<?x16x32x32xf32>
    %d0 = train.conv2d %p0, %c3_w {padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<?x16x16x16xf32>, tensor<32x16x3x3xf32>
    %d1, %d1_rm, %d1_rv = train.batch_norm %d0, %c3_g, %c3_b, %c3_rm, %c3_rv : tensor<?x32x8x8xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>
    %d2 = train.relu %d1 : tensor<?x32x8x8xf32>
    %p1 = train.avg_pool2d %d2 {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>} : tensor<?x32x8x8xf32>
    // Classifier.
    %g = train.global_avg_pool %p1 : tensor<?x32x4x4xf32>
    %f = train.reshape %g {shape = array<i64: -1, 32>} : tensor<?x32x1x1xf32>
    %logits = train.linear %f, %fc_w, %fc_b : tensor<?x32xf32>, tensor<10x32xf32>, tensor<10xf32>
    %loss = train.softmax_cross_entropy %logits, %labels : tensor<?x10xf32>, tensor<?xi64>
    return %loss : tensor<f32>
  }
}
