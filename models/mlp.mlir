// A two-layer perceptron on 784 features (28x28 images), 10 classes.
// The smallest model of the test suite: linear, relu, cross-entropy.
// Default benchmark setting: batch 64, SGD with momentum.
module {
  func.func @forward(
      %x: tensor<?x784xf32> {train.name = "x", train.input},
      %labels: tensor<?xi64> {train.name = "labels", train.label},
      %w1: tensor<256x784xf32> {train.name = "w1", train.param = {init = "kaiming_uniform", a = 2.2360679774997898 : f64}},
      %b1: tensor<256xf32> {train.name = "b1", train.param = {init = "uniform", low = -0.0357142857 : f64, high = 0.0357142857 : f64}},
      %w2: tensor<10x256xf32> {train.name = "w2", train.param = {init = "kaiming_uniform", a = 2.2360679774997898 : f64}},
      %b2: tensor<10xf32> {train.name = "b2", train.param = {init = "uniform", low = -0.0625 : f64, high = 0.0625 : f64}})
      -> tensor<f32>
      attributes {train.optimizer = {kind = "sgd", lr = 0.1 : f64, momentum = 0.9 : f64, weight_decay = 0.0 : f64}} {
    %h = train.linear %x, %w1, %b1 : tensor<?x784xf32>, tensor<256x784xf32>, tensor<256xf32>
    %a = train.relu %h : tensor<?x256xf32>
    %logits = train.linear %a, %w2, %b2 : tensor<?x256xf32>, tensor<10x256xf32>, tensor<10xf32>
    %loss = train.softmax_cross_entropy %logits, %labels : tensor<?x10xf32>, tensor<?xi64>
    return %loss : tensor<f32>
  }
}
