// RUN: dlc-opt %s --dlc-fuse-parameter-casts=explain=true --split-input-file --verify-diagnostics | FileCheck %s

// The casts of two parameters become one kernel; the cast of a computed
// value is not a parameter cast.
// CHECK-LABEL: func.func @casts
// CHECK: %[[F:.+]]:2 = train.fused "cast_horizontal"(%arg0, %arg1) {strategy = "xla"}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: train.cast
// CHECK-NEXT: train.cast
// CHECK-NEXT: train.yield
// CHECK: train.linear %arg2, %[[F]]#0
// CHECK: train.cast %{{.+}} to f32
func.func @casts(%w: tensor<16x8xf32>, %v: tensor<4x16xf32>, %x: tensor<2x8xf16>) -> tensor<2x4xf32> {
  %wh = train.cast %w to f16 : tensor<16x8xf32>
  %vh = train.cast %v to f16 : tensor<4x16xf32>
  %h = train.linear %x, %wh : tensor<2x8xf16>, tensor<16x8xf16>
  %o = train.linear %h, %vh : tensor<2x16xf16>, tensor<4x16xf16>
  %of = train.cast %o to f32 : tensor<2x4xf16>
  return %of : tensor<2x4xf32>
}

// -----

// A reader between the casts would run before the group: no group.
// CHECK-LABEL: func.func @reader_between
// CHECK-NOT: train.fused
func.func @reader_between(%w: tensor<16x8xf32>, %v: tensor<4x16xf32>, %x: tensor<2x8xf16>) -> tensor<2x4xf16> {
  %wh = train.cast %w to f16 : tensor<16x8xf32>
  %h = train.linear %x, %wh : tensor<2x8xf16>, tensor<16x8xf16>
  // expected-remark @below {{parameter casts not fused (cast_horizontal): 'train.linear' reads a result of the group before the group would run}}
  %vh = train.cast %v to f16 : tensor<4x16xf32>
  %o = train.linear %h, %vh : tensor<2x16xf16>, tensor<4x16xf16>
  return %o : tensor<2x4xf16>
}
