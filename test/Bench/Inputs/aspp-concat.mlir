// DeepLabV3+'s ASPP head in small (tests for issue 34's zero splits): three
// branches of conv3x3(8) bn relu on the input, concatenated, then a 1x1
// projection conv bn relu. xla puts the branches' relus and the concat in
// the loop that holds the last branch's batch norm; the relus leave it too
// (the backward reads them), stored from the concat's loop at their slices.
//   a, b, c: conv3x3(8) bn relu of x; p: conv1x1(8) bn relu of concat(a, b, c)
//   global_avg_pool, linear(10)
module {
  func.func @forward(
      %x: tensor<?x8x32x32xf32> {train.name = "x", train.input},
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
      %p_w: tensor<8x24x1x1xf32> {train.name = "p_w", train.param = {init = "kaiming_normal", mode = "fan_out", nonlinearity = "relu"}},
      %p_g: tensor<8xf32> {train.name = "p_g", train.param = {init = "ones"}},
      %p_b: tensor<8xf32> {train.name = "p_b", train.param = {init = "zeros"}},
      %p_rm: tensor<8xf32> {train.name = "p_rm", train.buffer = {init = "zeros"}},
      %p_rv: tensor<8xf32> {train.name = "p_rv", train.buffer = {init = "ones"}},
      %fc_w: tensor<10x8xf32> {train.name = "fc_w", train.param = {init = "kaiming_uniform", a = 2.2360679774997898 : f64}},
      %fc_b: tensor<10xf32> {train.name = "fc_b", train.param = {init = "uniform", low = -0.35 : f64, high = 0.35 : f64}})
      -> tensor<f32>
      attributes {train.optimizer = {kind = "sgd", lr = 0.1 : f64, momentum = 0.9 : f64}} {
    %a0 = train.conv2d %x, %a_w {padding = array<i64: 1, 1>} : tensor<?x8x32x32xf32>, tensor<8x8x3x3xf32>
    %a1, %a1_rm, %a1_rv = train.batch_norm %a0, %a_g, %a_b, %a_rm, %a_rv : tensor<?x8x32x32xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
    %a2 = train.relu %a1 : tensor<?x8x32x32xf32>
    %b0 = train.conv2d %x, %b_w {padding = array<i64: 1, 1>} : tensor<?x8x32x32xf32>, tensor<8x8x3x3xf32>
    %b1, %b1_rm, %b1_rv = train.batch_norm %b0, %b_g, %b_b, %b_rm, %b_rv : tensor<?x8x32x32xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
    %b2 = train.relu %b1 : tensor<?x8x32x32xf32>
    %c0 = train.conv2d %x, %c_w {padding = array<i64: 1, 1>} : tensor<?x8x32x32xf32>, tensor<8x8x3x3xf32>
    %c1, %c1_rm, %c1_rv = train.batch_norm %c0, %c_g, %c_b, %c_rm, %c_rv : tensor<?x8x32x32xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
    %c2 = train.relu %c1 : tensor<?x8x32x32xf32>
    %cat = train.concat %a2, %b2, %c2 {axis = 1 : i64} : tensor<?x8x32x32xf32>, tensor<?x8x32x32xf32>, tensor<?x8x32x32xf32>
    %p0 = train.conv2d %cat, %p_w {padding = array<i64: 0, 0>} : tensor<?x24x32x32xf32>, tensor<8x24x1x1xf32>
    %p1, %p1_rm, %p1_rv = train.batch_norm %p0, %p_g, %p_b, %p_rm, %p_rv : tensor<?x8x32x32xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
    %p2 = train.relu %p1 : tensor<?x8x32x32xf32>
    %g = train.global_avg_pool %p2 : tensor<?x8x32x32xf32>
    %f = train.reshape %g {shape = array<i64: -1, 8>} : tensor<?x8x1x1xf32>
    %logits = train.linear %f, %fc_w, %fc_b : tensor<?x8xf32>, tensor<10x8xf32>, tensor<10xf32>
    %loss = train.softmax_cross_entropy %logits, %labels : tensor<?x10xf32>, tensor<?xi64>
    return %loss : tensor<f32>
  }
}
