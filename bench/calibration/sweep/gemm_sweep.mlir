// The device sweep's GEMMs: cuBLASLt's forward linear layers and their
// gradients (as matmuls) on widths of no seed model (1536 and 4608
// features), at a batch of tokens (run at 8192 rows) like a transformer's,
// with nothing between them but relu. `dlc-bench calibrate` fits the cost
// model's GEMM ceilings and contraction latency from it, as device data
// beside any model's profiles (docs/CostModel.md).
module {
  func.func @forward(
      %x: tensor<?x1536xf32> {train.name = "x", train.input},
      %labels: tensor<?xi64> {train.name = "labels", train.label},
      %w1: tensor<4608x1536xf32> {train.name = "w1", train.param = {init = "kaiming_uniform", a = 2.2360679774997898 : f64}},
      %b1: tensor<4608xf32> {train.name = "b1", train.param = {init = "zeros"}},
      %w2: tensor<1536x4608xf32> {train.name = "w2", train.param = {init = "kaiming_uniform", a = 2.2360679774997898 : f64}},
      %b2: tensor<1536xf32> {train.name = "b2", train.param = {init = "zeros"}},
      %w3: tensor<1536x1536xf32> {train.name = "w3", train.param = {init = "kaiming_uniform", a = 2.2360679774997898 : f64}},
      %b3: tensor<1536xf32> {train.name = "b3", train.param = {init = "zeros"}},
      %w4: tensor<64x1536xf32> {train.name = "w4", train.param = {init = "kaiming_uniform", a = 2.2360679774997898 : f64}},
      %b4: tensor<64xf32> {train.name = "b4", train.param = {init = "zeros"}})
      -> tensor<f32>
      attributes {train.optimizer = {kind = "sgd", lr = 0.01 : f64, momentum = 0.9 : f64, weight_decay = 0.0 : f64}} {
    %h1 = train.linear %x, %w1, %b1 : tensor<?x1536xf32>, tensor<4608x1536xf32>, tensor<4608xf32>
    %a1 = train.relu %h1 : tensor<?x4608xf32>
    %h2 = train.linear %a1, %w2, %b2 : tensor<?x4608xf32>, tensor<1536x4608xf32>, tensor<1536xf32>
    %a2 = train.relu %h2 : tensor<?x1536xf32>
    %h3 = train.linear %a2, %w3, %b3 : tensor<?x1536xf32>, tensor<1536x1536xf32>, tensor<1536xf32>
    %a3 = train.relu %h3 : tensor<?x1536xf32>
    %logits = train.linear %a3, %w4, %b4 : tensor<?x1536xf32>, tensor<64x1536xf32>, tensor<64xf32>
    %loss = train.softmax_cross_entropy %logits, %labels : tensor<?x64xf32>, tensor<?xi64>
    return %loss : tensor<f32>
  }
}
