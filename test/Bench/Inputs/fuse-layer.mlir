// HRNet's fuse layer in small (tests for issue 34's "call + kernel"): the
// sum of three branches' batch norms and the block's input, then relu. The
// fusion strategies put the first add, the third batch norm and the rest in
// one input fusion, the add ahead of the batch norm it does not feed.
//   a, b, c: conv3x3(8) bn of the input; relu(bn_a + bn_b + bn_c + x)
//   global_avg_pool, linear(10)
module {
  func.func @forward(
      %x: tensor<?x8x64x64xf32> {train.name = "x", train.input},
      %labels: tensor<?xi64> {train.name = "labels", train.label},
      %a_w: tensor<8x8x3x3xf32> {train.name = "a_w", train.param = {init = "kaiming_normal", mode = "fan_out", nonlinearity = "relu"}},
      %a_g: tensor<8xf32> {train.name = "a_g", train.param = {init = "ones"}},
      %a_b: tensor<8xf32> {train.name = "a_b", train.param = {init = "zeros"}},
      %a_rm: tensor<8xf32> {train.name = "a_rm", train.buffer = {init = "zeros"}},
      %a_rv: tensor<8xf32> {train.name = "a_rv", train.buffer = {init = "ones"}},
      %b_w: tensor<8x8x3x3xf32> {train.name = "b_w", train.param = {init = "kaiming_normal", mode = "fan_out", nonlinearity = "relu"}},
      %b_g: tensor<8xf32> {train.name = "b_g", train.param = {init = "ones"}},
      %b_b: tensor<8xf32> {train.name = "b_b", train.param = {init = "zeros"}},
      %b_rm: tensor<8xf32> {train.name = "b_rm", train.buffer = {init = "zeros"}},
      %b_rv: tensor<8xf32> {train.name = "b_rv", train.buffer = {init = "ones"}},
      %c_w: tensor<8x8x3x3xf32> {train.name = "c_w", train.param = {init = "kaiming_normal", mode = "fan_out", nonlinearity = "relu"}},
      %c_g: tensor<8xf32> {train.name = "c_g", train.param = {init = "ones"}},
      %c_b: tensor<8xf32> {train.name = "c_b", train.param = {init = "zeros"}},
      %c_rm: tensor<8xf32> {train.name = "c_rm", train.buffer = {init = "zeros"}},
      %c_rv: tensor<8xf32> {train.name = "c_rv", train.buffer = {init = "ones"}},
      %fc_w: tensor<10x8xf32> {train.name = "fc_w", train.param = {init = "kaiming_uniform", a = 2.2360679774997898 : f64}},
      %fc_b: tensor<10xf32> {train.name = "fc_b", train.param = {init = "uniform", low = -0.35 : f64, high = 0.35 : f64}})
      -> tensor<f32>
      attributes {train.optimizer = {kind = "sgd", lr = 0.1 : f64, momentum = 0.9 : f64}} {
    %a0 = train.conv2d %x, %a_w {padding = array<i64: 1, 1>} : tensor<?x8x64x64xf32>, tensor<8x8x3x3xf32>
    %a1, %a1_rm, %a1_rv = train.batch_norm %a0, %a_g, %a_b, %a_rm, %a_rv : tensor<?x8x64x64xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
    %b0 = train.conv2d %x, %b_w {padding = array<i64: 1, 1>} : tensor<?x8x64x64xf32>, tensor<8x8x3x3xf32>
    %b1, %b1_rm, %b1_rv = train.batch_norm %b0, %b_g, %b_b, %b_rm, %b_rv : tensor<?x8x64x64xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
    %s = train.add %a1, %b1 : tensor<?x8x64x64xf32>, tensor<?x8x64x64xf32>
    %c0 = train.conv2d %x, %c_w {padding = array<i64: 1, 1>} : tensor<?x8x64x64xf32>, tensor<8x8x3x3xf32>
    %c1, %c1_rm, %c1_rv = train.batch_norm %c0, %c_g, %c_b, %c_rm, %c_rv : tensor<?x8x64x64xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
    %t = train.add %s, %c1 : tensor<?x8x64x64xf32>, tensor<?x8x64x64xf32>
    %u = train.add %t, %x : tensor<?x8x64x64xf32>, tensor<?x8x64x64xf32>
    %r = train.relu %u : tensor<?x8x64x64xf32>
    %g = train.global_avg_pool %r : tensor<?x8x64x64xf32>
    %f = train.reshape %g {shape = array<i64: -1, 8>} : tensor<?x8x1x1xf32>
    %logits = train.linear %f, %fc_w, %fc_b : tensor<?x8xf32>, tensor<10x8xf32>, tensor<10xf32>
    %loss = train.softmax_cross_entropy %logits, %labels : tensor<?x10xf32>, tensor<?xi64>
    return %loss : tensor<f32>
  }
}
