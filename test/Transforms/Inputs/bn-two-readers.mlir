func.func @two_readers(%x: tensor<2x4x3x3xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>)
    -> (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) {
  %y, %m, %v = train.batch_norm %x, %g, %b, %rm, %rv : tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  %r = train.relu %y : tensor<2x4x3x3xf32>
  %t = train.tanh %y : tensor<2x4x3x3xf32>
  return %r, %t : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>
}
