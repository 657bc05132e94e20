// A one-layer GPT-style decoder: token and position embeddings, pre-norm
// causal self-attention (2 heads of 16), a GELU (tanh) MLP, a final
// layer_norm and a language-model head. Vocabulary 64, context 16, hidden 32.
// It exercises every op family of BERT-base and GPT-2 at a size the CPU
// backend runs in milliseconds.
// Default benchmark setting: batch 8, AdamW.
module {
  func.func @forward(
      %tokens: tensor<?x16xi64> {train.name = "tokens", train.input},
      %labels: tensor<?x16xi64> {train.name = "labels", train.label},
      %wte: tensor<64x32xf32> {train.name = "wte", train.param = {init = "normal", std = 0.02 : f64}},
      %wpe: tensor<16x32xf32> {train.name = "wpe", train.param = {init = "normal", std = 0.01 : f64}},
      %ln1_g: tensor<32xf32> {train.name = "ln1.weight", train.param = {init = "ones"}},
      %ln1_b: tensor<32xf32> {train.name = "ln1.bias", train.param = {init = "zeros"}},
      %wq: tensor<32x32xf32> {train.name = "attn.q.weight", train.param = {init = "normal", std = 0.02 : f64}},
      %bq: tensor<32xf32> {train.name = "attn.q.bias", train.param = {init = "zeros"}},
      %wk: tensor<32x32xf32> {train.name = "attn.k.weight", train.param = {init = "normal", std = 0.02 : f64}},
      %bk: tensor<32xf32> {train.name = "attn.k.bias", train.param = {init = "zeros"}},
      %wv: tensor<32x32xf32> {train.name = "attn.v.weight", train.param = {init = "normal", std = 0.02 : f64}},
      %bv: tensor<32xf32> {train.name = "attn.v.bias", train.param = {init = "zeros"}},
      %wo: tensor<32x32xf32> {train.name = "attn.proj.weight", train.param = {init = "normal", std = 0.02 : f64}},
      %bo: tensor<32xf32> {train.name = "attn.proj.bias", train.param = {init = "zeros"}},
      %ln2_g: tensor<32xf32> {train.name = "ln2.weight", train.param = {init = "ones"}},
      %ln2_b: tensor<32xf32> {train.name = "ln2.bias", train.param = {init = "zeros"}},
      %w_fc: tensor<128x32xf32> {train.name = "mlp.fc.weight", train.param = {init = "normal", std = 0.02 : f64}},
      %b_fc: tensor<128xf32> {train.name = "mlp.fc.bias", train.param = {init = "zeros"}},
      %w_proj: tensor<32x128xf32> {train.name = "mlp.proj.weight", train.param = {init = "normal", std = 0.02 : f64}},
      %b_proj: tensor<32xf32> {train.name = "mlp.proj.bias", train.param = {init = "zeros"}},
      %lnf_g: tensor<32xf32> {train.name = "ln_f.weight", train.param = {init = "ones"}},
      %lnf_b: tensor<32xf32> {train.name = "ln_f.bias", train.param = {init = "zeros"}},
      %w_head: tensor<64x32xf32> {train.name = "lm_head.weight", train.param = {init = "normal", std = 0.02 : f64}})
      -> tensor<f32>
      attributes {train.optimizer = {kind = "adamw", lr = 1.0e-3 : f64, beta1 = 0.9 : f64, beta2 = 0.999 : f64, epsilon = 1.0e-8 : f64, weight_decay = 0.01 : f64}} {
    // Embeddings: tokens plus positions 0..15, broadcast over the batch.
    %positions = train.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : tensor<16xi64>
    %tok = train.embedding %wte, %tokens : tensor<64x32xf32>, tensor<?x16xi64>
    %pos = train.embedding %wpe, %positions : tensor<16x32xf32>, tensor<16xi64>
    %h0 = train.add %tok, %pos : tensor<?x16x32xf32>, tensor<16x32xf32>
    %e = train.dropout %h0 {rate = 0.1 : f32, seed = 1 : i64} : tensor<?x16x32xf32>

    // Causal self-attention, 2 heads of 16.
    %n1 = train.layer_norm %e, %ln1_g, %ln1_b : tensor<?x16x32xf32>, tensor<32xf32>, tensor<32xf32>
    %q0 = train.linear %n1, %wq, %bq : tensor<?x16x32xf32>, tensor<32x32xf32>, tensor<32xf32>
    %k0 = train.linear %n1, %wk, %bk : tensor<?x16x32xf32>, tensor<32x32xf32>, tensor<32xf32>
    %v0 = train.linear %n1, %wv, %bv : tensor<?x16x32xf32>, tensor<32x32xf32>, tensor<32xf32>
    %q1 = train.reshape %q0 {shape = array<i64: -1, 16, 2, 16>} : tensor<?x16x32xf32>
    %k1 = train.reshape %k0 {shape = array<i64: -1, 16, 2, 16>} : tensor<?x16x32xf32>
    %v1 = train.reshape %v0 {shape = array<i64: -1, 16, 2, 16>} : tensor<?x16x32xf32>
    %q = train.transpose %q1 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x16x2x16xf32>
    %k = train.transpose %k1 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x16x2x16xf32>
    %v = train.transpose %v1 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x16x2x16xf32>
    %scores = train.matmul %q, %k {transpose_rhs = true} : tensor<?x2x16x16xf32>, tensor<?x2x16x16xf32>
    %p0 = train.softmax %scores {causal = true, scale = 0.25 : f32} : tensor<?x2x16x16xf32>
    %p = train.dropout %p0 {rate = 0.1 : f32, seed = 2 : i64} : tensor<?x2x16x16xf32>
    %ctx0 = train.matmul %p, %v : tensor<?x2x16x16xf32>, tensor<?x2x16x16xf32>
    %ctx1 = train.transpose %ctx0 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x2x16x16xf32>
    %ctx = train.reshape %ctx1 {shape = array<i64: -1, 16, 32>} : tensor<?x16x2x16xf32>
    %a0 = train.linear %ctx, %wo, %bo : tensor<?x16x32xf32>, tensor<32x32xf32>, tensor<32xf32>
    %a = train.dropout %a0 {rate = 0.1 : f32, seed = 3 : i64} : tensor<?x16x32xf32>
    %h1 = train.add %e, %a : tensor<?x16x32xf32>, tensor<?x16x32xf32>

    // MLP.
    %n2 = train.layer_norm %h1, %ln2_g, %ln2_b : tensor<?x16x32xf32>, tensor<32xf32>, tensor<32xf32>
    %f0 = train.linear %n2, %w_fc, %b_fc : tensor<?x16x32xf32>, tensor<128x32xf32>, tensor<128xf32>
    %f1 = train.gelu %f0 {approximate = "tanh"} : tensor<?x16x128xf32>
    %f2 = train.linear %f1, %w_proj, %b_proj : tensor<?x16x128xf32>, tensor<32x128xf32>, tensor<32xf32>
    %f = train.dropout %f2 {rate = 0.1 : f32, seed = 4 : i64} : tensor<?x16x32xf32>
    %h2 = train.add %h1, %f : tensor<?x16x32xf32>, tensor<?x16x32xf32>

    // Language-model head: next-token cross-entropy over the vocabulary.
    %nf = train.layer_norm %h2, %lnf_g, %lnf_b : tensor<?x16x32xf32>, tensor<32xf32>, tensor<32xf32>
    %logits = train.linear %nf, %w_head : tensor<?x16x32xf32>, tensor<64x32xf32>
    %loss = train.softmax_cross_entropy %logits, %labels {class_axis = 2 : i64} : tensor<?x16x64xf32>, tensor<?x16xi64>
    return %loss : tensor<f32>
  }
}
