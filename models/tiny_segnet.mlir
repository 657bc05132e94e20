// A small DeepLabV3+-style segmentation net: stride-2 encoder, a depthwise
// convolution with a squeeze-and-excitation gate, ASPP (1x1, dilated 3x3,
// image pooling), a decoder joining low-level features, bilinear upsampling
// in both align_corners modes and per-pixel cross-entropy with ignore index
// 255, on 32x64 images with 5 classes. It exercises the op families of
// DeepLabV3+ and HRNet-W18 at a size the CPU backend runs in milliseconds.
// Default benchmark setting: batch 4, SGD with momentum.
module {
  func.func @forward(
      %x: tensor<?x3x32x64xf32> {train.name = "x", train.input},
      %labels: tensor<?x32x64xi64> {train.name = "labels", train.label},
      %c1_w: tensor<16x3x3x3xf32> {train.name = "c1_w", train.param = {init = "kaiming_normal", mode = "fan_out", nonlinearity = "relu"}},
      %bn1_g: tensor<16xf32> {train.name = "bn1_g", train.param = {init = "ones"}},
      %bn1_b: tensor<16xf32> {train.name = "bn1_b", train.param = {init = "zeros"}},
      %bn1_rm: tensor<16xf32> {train.name = "bn1_rm", train.buffer = {init = "zeros"}},
      %bn1_rv: tensor<16xf32> {train.name = "bn1_rv", train.buffer = {init = "ones"}},
      %c2_w: tensor<32x16x3x3xf32> {train.name = "c2_w", train.param = {init = "kaiming_normal", mode = "fan_out", nonlinearity = "relu"}},
      %bn2_g: tensor<32xf32> {train.name = "bn2_g", train.param = {init = "ones"}},
      %bn2_b: tensor<32xf32> {train.name = "bn2_b", train.param = {init = "zeros"}},
      %bn2_rm: tensor<32xf32> {train.name = "bn2_rm", train.buffer = {init = "zeros"}},
      %bn2_rv: tensor<32xf32> {train.name = "bn2_rv", train.buffer = {init = "ones"}},
      %dw_w: tensor<32x1x3x3xf32> {train.name = "dw_w", train.param = {init = "kaiming_normal", mode = "fan_out", nonlinearity = "relu"}},
      %aspp1_w: tensor<16x32x1x1xf32> {train.name = "aspp1_w", train.param = {init = "kaiming_normal", mode = "fan_out", nonlinearity = "relu"}},
      %aspp2_w: tensor<16x32x3x3xf32> {train.name = "aspp2_w", train.param = {init = "kaiming_normal", mode = "fan_out", nonlinearity = "relu"}},
      %pool_w: tensor<16x32x1x1xf32> {train.name = "pool_w", train.param = {init = "kaiming_normal", mode = "fan_out", nonlinearity = "relu"}},
      %se_w: tensor<32x32x1x1xf32> {train.name = "se_w", train.param = {init = "kaiming_normal", mode = "fan_out", nonlinearity = "relu"}},
      %se_b: tensor<32xf32> {train.name = "se_b", train.param = {init = "zeros"}},
      %proj_w: tensor<16x48x1x1xf32> {train.name = "proj_w", train.param = {init = "kaiming_normal", mode = "fan_out", nonlinearity = "relu"}},
      %bn3_g: tensor<16xf32> {train.name = "bn3_g", train.param = {init = "ones"}},
      %bn3_b: tensor<16xf32> {train.name = "bn3_b", train.param = {init = "zeros"}},
      %bn3_rm: tensor<16xf32> {train.name = "bn3_rm", train.buffer = {init = "zeros"}},
      %bn3_rv: tensor<16xf32> {train.name = "bn3_rv", train.buffer = {init = "ones"}},
      %low_w: tensor<8x16x1x1xf32> {train.name = "low_w", train.param = {init = "kaiming_normal", mode = "fan_out", nonlinearity = "relu"}},
      %cls_w: tensor<5x24x3x3xf32> {train.name = "cls_w", train.param = {init = "normal", std = 0.01 : f64}},
      %cls_b: tensor<5xf32> {train.name = "cls_b", train.param = {init = "zeros"}})
      -> tensor<f32>
      attributes {train.optimizer = {kind = "sgd", lr = 0.01 : f64, momentum = 0.9 : f64, weight_decay = 1.0e-4 : f64}} {
    // Encoder: two stride-2 conv / batch-norm / relu stages.
    %e0 = train.conv2d %x, %c1_w {padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<?x3x32x64xf32>, tensor<16x3x3x3xf32>
    %e1, %e1_rm, %e1_rv = train.batch_norm %e0, %bn1_g, %bn1_b, %bn1_rm, %bn1_rv : tensor<?x16x16x32xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
    %low = train.relu %e1 : tensor<?x16x16x32xf32>
    %e2 = train.conv2d %low, %c2_w {padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<?x16x16x32xf32>, tensor<32x16x3x3xf32>
    %e3, %e3_rm, %e3_rv = train.batch_norm %e2, %bn2_g, %bn2_b, %bn2_rm, %bn2_rv : tensor<?x32x8x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>
    %e4 = train.relu %e3 : tensor<?x32x8x16xf32>
    // Depthwise 3x3 and a squeeze-and-excitation gate: sigmoid(conv1x1(pool(x))) * x.
    %dw = train.conv2d %e4, %dw_w {groups = 32 : i64, padding = array<i64: 1, 1>} : tensor<?x32x8x16xf32>, tensor<32x1x3x3xf32>
    %sq = train.global_avg_pool %dw : tensor<?x32x8x16xf32>
    %ex = train.conv2d %sq, %se_w, %se_b : tensor<?x32x1x1xf32>, tensor<32x32x1x1xf32>, tensor<32xf32>
    %gate = train.sigmoid %ex : tensor<?x32x1x1xf32>
    %feat = train.mul %dw, %gate : tensor<?x32x8x16xf32>, tensor<?x32x1x1xf32>
    // ASPP: 1x1, 3x3 at dilation 2, and image pooling upsampled back.
    %a1 = train.conv2d %feat, %aspp1_w : tensor<?x32x8x16xf32>, tensor<16x32x1x1xf32>
    %a2 = train.conv2d %feat, %aspp2_w {dilation = array<i64: 2, 2>, padding = array<i64: 2, 2>} : tensor<?x32x8x16xf32>, tensor<16x32x3x3xf32>
    %ip0 = train.global_avg_pool %feat : tensor<?x32x8x16xf32>
    %ip1 = train.conv2d %ip0, %pool_w : tensor<?x32x1x1xf32>, tensor<16x32x1x1xf32>
    %ip2 = train.relu %ip1 : tensor<?x16x1x1xf32>
    %ip = train.resize_bilinear %ip2 {size = array<i64: 8, 16>} : tensor<?x16x1x1xf32>
    %cat = train.concat %a1, %a2, %ip {axis = 1 : i64} : tensor<?x16x8x16xf32>, tensor<?x16x8x16xf32>, tensor<?x16x8x16xf32>
    %pr = train.conv2d %cat, %proj_w : tensor<?x48x8x16xf32>, tensor<16x48x1x1xf32>
    %pb, %pb_rm, %pb_rv = train.batch_norm %pr, %bn3_g, %bn3_b, %bn3_rm, %bn3_rv : tensor<?x16x8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
    %aspp = train.relu %pb : tensor<?x16x8x16xf32>
    // Decoder: upsample, join the low-level features, classify per pixel.
    %up = train.resize_bilinear %aspp {align_corners = true, size = array<i64: 16, 32>} : tensor<?x16x8x16xf32>
    %lowp = train.conv2d %low, %low_w : tensor<?x16x16x32xf32>, tensor<8x16x1x1xf32>
    %dec = train.concat %up, %lowp {axis = 1 : i64} : tensor<?x16x16x32xf32>, tensor<?x8x16x32xf32>
    %cls = train.conv2d %dec, %cls_w, %cls_b {padding = array<i64: 1, 1>} : tensor<?x24x16x32xf32>, tensor<5x24x3x3xf32>, tensor<5xf32>
    %logits = train.resize_bilinear %cls {size = array<i64: 32, 64>} : tensor<?x5x16x32xf32>
    %loss = train.softmax_cross_entropy %logits, %labels {ignore_index = 255 : i64} : tensor<?x5x32x64xf32>, tensor<?x32x64xi64>
    return %loss : tensor<f32>
  }
}
