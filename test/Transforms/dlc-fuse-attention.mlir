// RUN: dlc-opt %s --dlc-fuse-attention=explain=true --split-input-file --verify-diagnostics | FileCheck %s

// GPT-2's causal attention with dropout: one train.attention with the
// softmax's scale and causality and the dropout's rate and seed.
// CHECK-LABEL: func.func @causal_dropout
// CHECK-NEXT: %[[O:.+]], %{{.+}} = train.attention %arg0, %arg1, %arg2 {causal = true, dropout_rate = 1.000000e-01 : f32, scale = 1.250000e-01 : f32, seed = 2 : i64} : tensor<2x3x10x8xf32>, tensor<2x3x10x8xf32>, tensor<2x3x10x4xf32>
// CHECK-NEXT: return %[[O]]
func.func @causal_dropout(%q: tensor<2x3x10x8xf32>, %k: tensor<2x3x10x8xf32>, %v: tensor<2x3x10x4xf32>) -> tensor<2x3x10x4xf32> {
  %s = train.matmul %q, %k {transpose_rhs = true} : tensor<2x3x10x8xf32>, tensor<2x3x10x8xf32>
  %p = train.softmax %s {causal = true, scale = 0.125 : f32} : tensor<2x3x10x10xf32>
  %d = train.dropout %p {rate = 0.1 : f32, seed = 2 : i64} : tensor<2x3x10x10xf32>
  %o = train.matmul %d, %v : tensor<2x3x10x10xf32>, tensor<2x3x10x4xf32>
  return %o : tensor<2x3x10x4xf32>
}

// -----

// BERT's padding mask, broadcast over heads and queries; no dropout.
// CHECK-LABEL: func.func @masked
// CHECK-NEXT: %[[O:.+]], %{{.+}} = train.attention %arg0, %arg1, %arg2 mask %arg3 {scale = 1.250000e-01 : f32} : tensor<?x2x6x8xf32>, tensor<?x2x6x8xf32>, tensor<?x2x6x8xf32>, tensor<?x1x1x6xf32>
func.func @masked(%q: tensor<?x2x6x8xf32>, %k: tensor<?x2x6x8xf32>, %v: tensor<?x2x6x8xf32>, %m: tensor<?x1x1x6xf32>) -> tensor<?x2x6x8xf32> {
  %s = train.matmul %q, %k {transpose_rhs = true} : tensor<?x2x6x8xf32>, tensor<?x2x6x8xf32>
  %p = train.softmax %s mask %m {scale = 0.125 : f32} : tensor<?x2x6x6xf32>, tensor<?x1x1x6xf32>
  %o = train.matmul %p, %v : tensor<?x2x6x6xf32>, tensor<?x2x6x8xf32>
  return %o : tensor<?x2x6x8xf32>
}

// -----

// AMP: the softmax runs in f32 between casts; the dropout after the cast
// back is taken too. The op computes in f32 and rounds once to f16.
// CHECK-LABEL: func.func @amp_casts
// CHECK-NEXT: %[[O:.+]], %{{.+}} = train.attention %arg0, %arg1, %arg2 mask %arg3 {dropout_rate = 1.000000e-01 : f32, scale = 1.250000e-01 : f32, seed = 5 : i64} : tensor<2x2x6x8xf16>
// CHECK-NOT: train.cast
// CHECK: return %[[O]]
func.func @amp_casts(%q: tensor<2x2x6x8xf16>, %k: tensor<2x2x6x8xf16>, %v: tensor<2x2x6x8xf16>, %m: tensor<2x1x1x6xf32>) -> tensor<2x2x6x8xf16> {
  %s = train.matmul %q, %k {transpose_rhs = true} : tensor<2x2x6x8xf16>, tensor<2x2x6x8xf16>
  %s32 = train.cast %s to f32 : tensor<2x2x6x6xf16>
  %p = train.softmax %s32 mask %m {scale = 0.125 : f32} : tensor<2x2x6x6xf32>, tensor<2x1x1x6xf32>
  %p16 = train.cast %p to f16 : tensor<2x2x6x6xf32>
  %d = train.dropout %p16 {rate = 0.1 : f32, seed = 5 : i64} : tensor<2x2x6x6xf16>
  %o = train.matmul %d, %v : tensor<2x2x6x6xf16>, tensor<2x2x6x8xf16>
  return %o : tensor<2x2x6x8xf16>
}

// -----

// The probabilities are returned as well (an attention-weights output):
// the fused kernel does not write them, so the pattern stays.
// CHECK-LABEL: func.func @probabilities_read
// CHECK-NOT: train.attention
func.func @probabilities_read(%q: tensor<2x6x8xf32>, %v: tensor<2x6x8xf32>) -> (tensor<2x6x8xf32>, tensor<2x6x6xf32>) {
  %s = train.matmul %q, %q {transpose_rhs = true} : tensor<2x6x8xf32>, tensor<2x6x8xf32>
  // expected-remark @below {{not fused (attention): the probabilities have another reader (func.return): the fused kernel does not write them out}}
  %p = train.softmax %s : tensor<2x6x6xf32>
  %o = train.matmul %p, %v : tensor<2x6x6xf32>, tensor<2x6x8xf32>
  return %o, %p : tensor<2x6x8xf32>, tensor<2x6x6xf32>
}

// -----

// CHECK-LABEL: func.func @scores_read
// CHECK-NOT: train.attention
func.func @scores_read(%q: tensor<2x6x8xf32>, %v: tensor<2x6x8xf32>) -> (tensor<2x6x8xf32>, tensor<2x6x6xf32>) {
  %s = train.matmul %q, %q {transpose_rhs = true} : tensor<2x6x8xf32>, tensor<2x6x8xf32>
  // expected-remark @below {{not fused (attention): the scores have another reader (func.return): the fused kernel does not write them out}}
  %p = train.softmax %s : tensor<2x6x6xf32>
  %o = train.matmul %p, %v : tensor<2x6x6xf32>, tensor<2x6x8xf32>
  return %o, %s : tensor<2x6x8xf32>, tensor<2x6x6xf32>
}

// -----

// CHECK-LABEL: func.func @not_transposed
// CHECK-NOT: train.attention
func.func @not_transposed(%q: tensor<2x6x8xf32>, %k: tensor<2x8x6xf32>, %v: tensor<2x6x8xf32>) -> tensor<2x6x8xf32> {
  %s = train.matmul %q, %k : tensor<2x6x8xf32>, tensor<2x8x6xf32>
  // expected-remark @below {{not fused (attention): the scores are not matmul(q, k, transpose_rhs)}}
  %p = train.softmax %s : tensor<2x6x6xf32>
  %o = train.matmul %p, %v : tensor<2x6x6xf32>, tensor<2x6x8xf32>
  return %o : tensor<2x6x8xf32>
}

// -----

// CHECK-LABEL: func.func @softmax_over_queries
// CHECK-NOT: train.attention
func.func @softmax_over_queries(%q: tensor<2x6x8xf32>, %v: tensor<2x6x8xf32>) -> tensor<2x6x8xf32> {
  %s = train.matmul %q, %q {transpose_rhs = true} : tensor<2x6x8xf32>, tensor<2x6x8xf32>
  // expected-remark @below {{not fused (attention): the softmax is not over the last axis (the keys)}}
  %p = train.softmax %s {axis = 1 : i64} : tensor<2x6x6xf32>
  %o = train.matmul %p, %v : tensor<2x6x6xf32>, tensor<2x6x8xf32>
  return %o : tensor<2x6x8xf32>
}

// -----

// CHECK-LABEL: func.func @other_consumer
// CHECK-NOT: train.attention
func.func @other_consumer(%q: tensor<2x6x8xf32>) -> tensor<2x6x6xf32> {
  %s = train.matmul %q, %q {transpose_rhs = true} : tensor<2x6x8xf32>, tensor<2x6x8xf32>
  // expected-remark @below {{not fused (attention): the probabilities go to train.relu, not to the left of a matmul}}
  %p = train.softmax %s : tensor<2x6x6xf32>
  %r = train.relu %p : tensor<2x6x6xf32>
  return %r : tensor<2x6x6xf32>
}

// -----

// CHECK-LABEL: func.func @product_transposed
// CHECK-NOT: train.attention
func.func @product_transposed(%q: tensor<2x6x8xf32>, %v: tensor<2x8x6xf32>) -> tensor<2x6x8xf32> {
  %s = train.matmul %q, %q {transpose_rhs = true} : tensor<2x6x8xf32>, tensor<2x6x8xf32>
  // expected-remark @below {{not fused (attention): the product p v transposes an operand}}
  %p = train.softmax %s : tensor<2x6x6xf32>
  %o = train.matmul %p, %v {transpose_rhs = true} : tensor<2x6x6xf32>, tensor<2x8x6xf32>
  return %o : tensor<2x6x8xf32>
}

// -----

// Keys shared across heads by a broadcast matmul.
// CHECK-LABEL: func.func @broadcast_keys
// CHECK-NOT: train.attention
func.func @broadcast_keys(%q: tensor<2x3x6x8xf32>, %k: tensor<2x1x6x8xf32>, %v: tensor<2x3x6x8xf32>) -> tensor<2x3x6x8xf32> {
  %s = train.matmul %q, %k {transpose_rhs = true} : tensor<2x3x6x8xf32>, tensor<2x1x6x8xf32>
  // expected-remark @below {{not fused (attention): q, k and v differ in batch dimensions (a broadcast matmul)}}
  %p = train.softmax %s : tensor<2x3x6x6xf32>
  %o = train.matmul %p, %v : tensor<2x3x6x6xf32>, tensor<2x3x6x8xf32>
  return %o : tensor<2x3x6x8xf32>
}

// -----

// A softmax that is no attention (a classifier's) gets no remark.
// CHECK-LABEL: func.func @plain_softmax
func.func @plain_softmax(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %p = train.softmax %x : tensor<4x10xf32>
  return %p : tensor<4x10xf32>
}
