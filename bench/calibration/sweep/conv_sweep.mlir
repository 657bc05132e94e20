// The device sweep's convolutions: cuDNN's forward, data-gradient and
// filter-gradient kernels on shapes of neither ResNet-50 nor any other seed
// model (channels 32-384 in steps of 1.5x-4x, 1x1 and 3x3 windows, strides
// 1 and 2, 64x64 to 16x16 pixels), with nothing between them but relu, so
// that a profile's conv2d, conv2d_backward_data and conv2d_backward_filter
// kinds are almost the whole step. `dlc-bench calibrate` fits the cost
// model's per-pass convolution ceilings from it, as device data beside any
// model's profiles (docs/CostModel.md). The first convolution reads the
// input: it has no data gradient. Run at batch 128.
module {
  func.func @forward(
      %x: tensor<?x32x64x64xf32> {train.name = "x", train.input},
      %labels: tensor<?xi64> {train.name = "labels", train.label},
      %w1: tensor<96x32x3x3xf32> {train.name = "w1", train.param = {init = "kaiming_normal", mode = "fan_out", nonlinearity = "relu"}},
      %w2: tensor<48x96x1x1xf32> {train.name = "w2", train.param = {init = "kaiming_normal", mode = "fan_out", nonlinearity = "relu"}},
      %w3: tensor<192x48x3x3xf32> {train.name = "w3", train.param = {init = "kaiming_normal", mode = "fan_out", nonlinearity = "relu"}},
      %w4: tensor<384x192x1x1xf32> {train.name = "w4", train.param = {init = "kaiming_normal", mode = "fan_out", nonlinearity = "relu"}},
      %w5: tensor<384x384x3x3xf32> {train.name = "w5", train.param = {init = "kaiming_normal", mode = "fan_out", nonlinearity = "relu"}},
      %fc_w: tensor<16x384xf32> {train.name = "fc_w", train.param = {init = "kaiming_uniform", a = 2.2360679774997898 : f64}},
      %fc_b: tensor<16xf32> {train.name = "fc_b", train.param = {init = "zeros"}})
      -> tensor<f32>
      attributes {train.optimizer = {kind = "sgd", lr = 0.01 : f64, momentum = 0.9 : f64, weight_decay = 0.0 : f64}} {
    %c1 = train.conv2d %x, %w1 {padding = array<i64: 1, 1>} : tensor<?x32x64x64xf32>, tensor<96x32x3x3xf32>
    %a1 = train.relu %c1 : tensor<?x96x64x64xf32>
    %c2 = train.conv2d %a1, %w2 : tensor<?x96x64x64xf32>, tensor<48x96x1x1xf32>
    %a2 = train.relu %c2 : tensor<?x48x64x64xf32>
    %c3 = train.conv2d %a2, %w3 {padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<?x48x64x64xf32>, tensor<192x48x3x3xf32>
    %a3 = train.relu %c3 : tensor<?x192x32x32xf32>
    %c4 = train.conv2d %a3, %w4 : tensor<?x192x32x32xf32>, tensor<384x192x1x1xf32>
    %a4 = train.relu %c4 : tensor<?x384x32x32xf32>
    %c5 = train.conv2d %a4, %w5 {padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<?x384x32x32xf32>, tensor<384x384x3x3xf32>
    %a5 = train.relu %c5 : tensor<?x384x16x16xf32>
    %g = train.global_avg_pool %a5 : tensor<?x384x16x16xf32>
    %f = train.reshape %g {shape = array<i64: -1, 384>} : tensor<?x384x1x1xf32>
    %logits = train.linear %f, %fc_w, %fc_b : tensor<?x384xf32>, tensor<16x384xf32>, tensor<16xf32>
    %loss = train.softmax_cross_entropy %logits, %labels : tensor<?x16xf32>, tensor<?xi64>
    return %loss : tensor<f32>
  }
}
