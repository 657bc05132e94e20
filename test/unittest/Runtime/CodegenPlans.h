//===- CodegenPlans.h - hand-built plans of every generated form -*- C++ -*-===//
//
// Plans whose launches cover every kernel form the generator writes, shared
// by CodegenTest (each kernel against the CPU reference) and HostKernelsTest
// (the CPU backend's fast mode against its reference mode).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TEST_UNITTEST_RUNTIME_CODEGENPLANS_H
#define DLC_TEST_UNITTEST_RUNTIME_CODEGENPLANS_H

#include "TestPlan.h"

#include "dlc/runtime/Plan.h"

#include <string>
#include <vector>

namespace dlc_test {

using namespace dlc::rt;

/// Builds plans by hand: buffers at distinct 256-byte-aligned offsets, kernels
/// in fused groups by number.
struct GroupPlanBuilder {
  Plan plan;
  int32_t buffer(const std::string &name, std::vector<int64_t> shape,
                 BufferRole role = BufferRole::kTemporary, DType dtype = DType::kF32) {
    return dlc_test::appendBuffer(plan, name, dtype, std::move(shape), role);
  }
  PlanKernel &kernel(const std::string &op, std::vector<int32_t> in, std::vector<int32_t> out,
                     int64_t group = -1, PlanAttrs attrs = {}) {
    PlanKernel k = dlc_test::makeKernel(op, std::move(in), std::move(out), std::move(attrs));
    if (group >= 0) {
      k.attrs["fusion.group"] = group;
      k.fusionKind = FusionKind::kLoop;
      k.attrs["fusion.strategy"] = std::string("test");
    }
    plan.kernels.push_back(std::move(k));
    return plan.kernels.back();
  }
};

constexpr BufferRole kIn = BufferRole::kInput, kOut = BufferRole::kGradient;

/// A launch of every kernel form the generator writes, in one plan.
inline Plan formsPlan() {
  GroupPlanBuilder p;
  p.plan.model = "codegen_test";
  // Loop: broadcast add, relu, mul, with a scalar tail (105 elements).
  int32_t x = p.buffer("x", {3, 5, 7}, kIn), b = p.buffer("b", {5, 1}, kIn),
          y = p.buffer("y", {3, 5, 7}, kIn);
  int32_t t0 = p.buffer("t0", {3, 5, 7}), t1 = p.buffer("t1", {3, 5, 7});
  int32_t o0 = p.buffer("o0", {3, 5, 7}, kOut);
  p.kernel("add", {x, b}, {t0}, 0);
  p.kernel("relu", {t0}, {t1}, 0);
  p.kernel("mul", {t1, y}, {o0}, 0);
  // Element-wise ops and their gradients, chained.
  int32_t t2 = p.buffer("t2", {3, 5, 7}), t3 = p.buffer("t3", {3, 5, 7}),
          t4 = p.buffer("t4", {3, 5, 7}), t5 = p.buffer("t5", {3, 5, 7}),
          t6 = p.buffer("t6", {3, 5, 7}), t7 = p.buffer("t7", {3, 5, 7}),
          t8 = p.buffer("t8", {3, 5, 7}), t9 = p.buffer("t9", {3, 5, 7});
  int32_t o1 = p.buffer("o1", {3, 5, 7}, kOut);
  p.kernel("tanh", {x}, {t2}, 1);
  p.kernel("sigmoid", {y}, {t3}, 1);
  p.kernel("scale", {t2}, {t4}, 1, {{"scale", 0.5}, {"bias", -0.25}});
  p.kernel("tanh_backward", {t4, t2}, {t5}, 1);
  p.kernel("sigmoid_backward", {t5, t3}, {t6}, 1);
  p.kernel("gelu", {t6}, {t7}, 1, {{"approximate", std::string("tanh")}});
  p.kernel("sub", {t7, x}, {t8}, 1);
  p.kernel("gelu_backward", {t8, y}, {t9}, 1);
  p.kernel("div", {t9, t3}, {o1}, 1);
  p.kernel("relu_backward", {o1, x}, {p.buffer("o2", {3, 5, 7}, kOut)});
  // Data movement, single ops outside groups.
  int32_t a = p.buffer("a", {2, 3, 4, 5}, kIn);
  p.kernel("transpose", {a}, {p.buffer("o3", {2, 4, 5, 3}, kOut)}, -1,
           {{"permutation", std::vector<int64_t>{0, 2, 3, 1}}});
  int32_t s = p.buffer("s", {2, 2, 4, 5}, kOut);
  p.kernel("slice", {a}, {s}, -1, {{"axis", int64_t(1)}, {"start", int64_t(0)},
                                  {"end", int64_t(3)}, {"step", int64_t(2)}});
  p.kernel("slice_backward", {s}, {p.buffer("o4", {2, 3, 4, 5}, kOut)}, -1,
           {{"axis", int64_t(1)}, {"start", int64_t(1)}, {"end", int64_t(3)},
            {"step", int64_t(1)}, {"input_shape", std::vector<int64_t>{2, 3, 4, 5}}});
  int32_t c = p.buffer("c", {2, 4, 4, 5}, kIn);
  p.kernel("concat", {a, c, a}, {p.buffer("o5", {2, 10, 4, 5}, kOut)}, -1,
           {{"axis", int64_t(1)}});
  p.kernel("broadcast_to", {b}, {p.buffer("o6", {2, 5, 6}, kOut)}, -1,
           {{"shape", std::vector<int64_t>{2, 5, 6}}});
  // Multi-output loop: a [2,3,1,1] value and its broadcast use.
  int32_t g = p.buffer("g", {2, 3, 1, 1}, kIn), h = p.buffer("h", {2, 3, 4, 4}, kIn);
  int32_t sg = p.buffer("sg", {2, 3, 1, 1}, kOut);
  p.kernel("sigmoid", {g}, {sg}, 2);
  p.kernel("mul", {h, sg}, {p.buffer("o7", {2, 3, 4, 4}, kOut)}, 2);
  // Reductions: a column reduction with a prologue, a row reduction, one
  // with kept dimensions on both sides, and an epilogue.
  int32_t dy = p.buffer("dy", {6, 33}, kIn), z = p.buffer("z", {6, 33}, kIn);
  int32_t gb = p.buffer("gb", {6, 33});
  p.kernel("gelu_backward", {dy, z}, {gb}, 3);
  p.kernel("sum_to_shape", {gb}, {p.buffer("o8", {1, 33}, kOut)}, 3,
           {{"shape", std::vector<int64_t>{1, 33}}});
  p.kernel("global_avg_pool", {h}, {p.buffer("o9", {2, 3, 1, 1}, kOut)});
  int32_t m = p.buffer("m", {4, 70, 5}, kIn);
  p.kernel("reduce_max", {m}, {p.buffer("o10", {4, 5}, kOut)}, -1,
           {{"axes", std::vector<int64_t>{1}}});
  int32_t rm = p.buffer("rm", {4, 70, 1}), rs = p.buffer("rs", {4, 70, 1}, kOut);
  int32_t mr = p.buffer("mr", {4, 70, 5});
  p.kernel("relu", {m}, {mr}, 4);
  p.kernel("reduce_mean", {mr}, {rm}, 4,
           {{"axes", std::vector<int64_t>{-1}}, {"keep_dims", int64_t(1)}});
  p.kernel("scale", {rm}, {rs}, 4, {{"scale", 3.0}, {"bias", 1.0}});
  return p.plan;
}

/// An SGD update (momentum, weight decay, nesterov) of a 37-element
/// parameter and an AdamW update of a 3x11 one, both in group 0 and both
/// reading mixed precision's loss-scale status ({gradient multiplier,
/// skip}), whose buffer id it returns: the optimizer table's cases.
template <typename Builder> int32_t addSgdAndAdamwUpdates(Builder &p) {
  int32_t w = p.buffer("w", {37}, BufferRole::kParam), gw = p.buffer("gw", {37}),
          mw = p.buffer("mw", {37}, BufferRole::kOptimizerState);
  int32_t v = p.buffer("v", {3, 11}, BufferRole::kParam), gv = p.buffer("gv", {3, 11}),
          m1 = p.buffer("m1", {3, 11}, BufferRole::kOptimizerState),
          m2 = p.buffer("m2", {3, 11}, BufferRole::kOptimizerState);
  int32_t status = p.buffer("status", {2});
  p.kernel("sgd_update", {w, gw, mw, status},
           {p.buffer("w'", {37}, BufferRole::kUpdate), p.buffer("mw'", {37}, BufferRole::kUpdate)},
           0, {{"lr", 0.1}, {"momentum", 0.9}, {"weight_decay", 1e-4}, {"nesterov", int64_t(1)}});
  p.kernel("adamw_update", {v, gv, m1, m2, status},
           {p.buffer("v'", {3, 11}, BufferRole::kUpdate),
            p.buffer("m1'", {3, 11}, BufferRole::kUpdate),
            p.buffer("m2'", {3, 11}, BufferRole::kUpdate)},
           0, {{"lr", 1e-3}, {"weight_decay", 0.01}});
  return status;
}

/// Mixed precision's weight casts as FuseParameterCasts groups them:
/// independent casts of parameters of different shapes into one launch,
/// each result read by a later kernel. Sizes below, at and above a vector
/// (8 halves, 4 floats), most not a multiple of it; to f16 and bf16, and a
/// few other directions.
struct CastCase {
  std::vector<int64_t> shape;
  DType from, to;
};
inline const std::vector<CastCase> &castCases() {
  static const std::vector<CastCase> cases = {
      {{37}, DType::kF32, DType::kF16},         {{3, 11}, DType::kF32, DType::kBF16},
      {{64, 24}, DType::kF32, DType::kF16},     {{5}, DType::kF32, DType::kBF16},
      {{1}, DType::kF32, DType::kF16},          {{2, 3, 5, 7}, DType::kF32, DType::kF16},
      {{1000}, DType::kF32, DType::kBF16},      {{8}, DType::kF32, DType::kF16},
      {{4, 4}, DType::kF32, DType::kF32},       {{19}, DType::kF16, DType::kF32},
      {{23}, DType::kBF16, DType::kF32},        {{9, 2}, DType::kF16, DType::kBF16},
      {{17}, DType::kBF16, DType::kF16},        {{40}, DType::kF16, DType::kF16}};
  return cases;
}

inline Plan castsPlan() {
  GroupPlanBuilder p;
  p.plan.model = "codegen_casts";
  std::vector<int32_t> results;
  for (size_t i = 0; i < castCases().size(); ++i) {
    const CastCase &c = castCases()[i];
    int32_t in = p.buffer("w" + std::to_string(i), c.shape, BufferRole::kParam, c.from);
    int32_t out = p.buffer("w" + std::to_string(i) + ".cast", c.shape, BufferRole::kTemporary,
                           c.to);
    p.kernel("cast", {in}, {out}, 0, {{"to", std::string(dtypeName(c.to))}})
        .fusionKind = FusionKind::kCastHorizontal;
    results.push_back(out);
  }
  for (int32_t id : results)
    p.kernel("scale", {id}, {p.buffer(p.plan.buffers[id].name + ".read",
                                      p.plan.buffers[id].shape, kOut, p.plan.buffers[id].dtype)});
  return p.plan;
}

/// Marks every kernel of `p` added from `first` on as one xla input group.
inline void inputGroup(GroupPlanBuilder &p, size_t first, int64_t group) {
  for (size_t k = first; k < p.plan.kernels.size(); ++k) {
    p.plan.kernels[k].attrs["fusion.group"] = group;
    p.plan.kernels[k].fusionKind = FusionKind::kInput;
  }
}

/// The row groups of xla's transformers, with row lengths below, above and
/// at no multiple of a warp and of the block, several rows each.
inline Plan rowPlan() {
  GroupPlanBuilder p;
  p.plan.model = "codegen_rows";
  const DType h = DType::kF16;
  // BERT: dropout -> add(residual) -> layer_norm; the sum is also read by
  // a kernel outside the group (exported), the result is an output.
  int32_t lin = p.buffer("lin", {6, 200}, kIn), res = p.buffer("res", {6, 200}, kIn);
  int32_t g = p.buffer("g", {200}, BufferRole::kParam), b = p.buffer("b", {200}, BufferRole::kParam);
  int32_t dr = p.buffer("dr", {6, 200}), sum = p.buffer("sum", {6, 200});
  size_t first = p.plan.kernels.size();
  p.kernel("dropout", {lin}, {dr}, -1, {{"rate", 0.25}, {"seed", int64_t(7)}});
  p.kernel("add", {res, dr}, {sum});
  p.kernel("layer_norm", {sum, g, b}, {p.buffer("ln", {6, 200}, kOut)}, -1, {{"epsilon", 1e-5}});
  inputGroup(p, first, 0);
  p.kernel("relu", {sum}, {p.buffer("sum.read", {6, 200}, kOut)});
  // amp: f16 data, f32 gamma and beta, a long row (1000 > the block).
  int32_t xh = p.buffer("xh", {3, 1000}, kIn, h), rh = p.buffer("rh", {3, 1000}, kIn, h);
  int32_t gh = p.buffer("gh", {1000}, BufferRole::kParam), bh = p.buffer("bh", {1000}, BufferRole::kParam);
  int32_t sh = p.buffer("sh", {3, 1000}, BufferRole::kTemporary, h);
  first = p.plan.kernels.size();
  p.kernel("add", {xh, rh}, {sh});
  p.kernel("layer_norm", {sh, gh, bh}, {p.buffer("lnh", {3, 1000}, kOut, h)});
  inputGroup(p, first, 1);
  // Attention: scale, add a broadcast mask, softmax, then consumers: a
  // cast to f16 and a mul; the probabilities are an output too.
  int32_t sc = p.buffer("scores", {2, 3, 4, 45}, kIn), mask = p.buffer("mask", {2, 1, 1, 45}, kIn);
  int32_t w = p.buffer("w", {2, 3, 4, 45}, kIn);
  int32_t t = p.buffer("t", {2, 3, 4, 45}), u = p.buffer("u", {2, 3, 4, 45});
  int32_t prob = p.buffer("prob", {2, 3, 4, 45}, kOut);
  first = p.plan.kernels.size();
  p.kernel("scale", {sc}, {t}, -1, {{"scale", 0.125}, {"bias", 0.0}});
  p.kernel("add", {t, mask}, {u});
  p.kernel("softmax", {u}, {prob}, -1, {{"axis", int64_t(-1)}});
  p.kernel("cast", {prob}, {p.buffer("prob16", {2, 3, 4, 45}, kOut, h)}, -1,
           {{"to", std::string("f16")}});
  p.kernel("mul", {prob, w}, {p.buffer("pw", {2, 3, 4, 45}, kOut)});
  inputGroup(p, first, 2);
  // GPT-2: a causal, scaled softmax of f16 scores, dropout after it.
  int32_t cs = p.buffer("cs", {2, 2, 37, 37}, kIn, h), cf = p.buffer("cf", {2, 2, 37, 37});
  int32_t cp = p.buffer("cp", {2, 2, 37, 37}, kOut);
  first = p.plan.kernels.size();
  p.kernel("cast", {cs}, {cf}, -1, {{"to", std::string("f32")}});
  p.kernel("softmax", {cf}, {cp}, -1, {{"causal", int64_t(1)}, {"scale", 0.3}});
  p.kernel("dropout", {cp}, {p.buffer("cpd", {2, 2, 37, 37}, kOut, h)}, -1,
           {{"rate", 0.1}, {"seed", int64_t(3)}});
  inputGroup(p, first, 3);
  // Its gradient: the dropout's mask on dy, then softmax_backward.
  int32_t dy = p.buffer("dy", {2, 2, 37, 37}, kIn), ddy = p.buffer("ddy", {2, 2, 37, 37});
  first = p.plan.kernels.size();
  p.kernel("dropout", {dy}, {ddy}, -1, {{"rate", 0.1}, {"seed", int64_t(3)}});
  p.kernel("softmax_backward", {ddy, cp}, {p.buffer("dx", {2, 2, 37, 37}, kOut)}, -1,
           {{"scale", 0.3}});
  inputGroup(p, first, 4);
  // A row of one element and a row shorter than a warp.
  int32_t one = p.buffer("one", {5, 1}, kIn), tiny = p.buffer("tiny", {4, 7}, kIn);
  first = p.plan.kernels.size();
  int32_t onet = p.buffer("one.t", {5, 1});
  p.kernel("tanh", {one}, {onet});
  p.kernel("softmax", {onet}, {p.buffer("one.p", {5, 1}, kOut)});
  inputGroup(p, first, 5);
  first = p.plan.kernels.size();
  int32_t tinyt = p.buffer("tiny.t", {4, 7});
  p.kernel("sigmoid", {tiny}, {tinyt});
  p.kernel("layer_norm", {tinyt, p.buffer("tg", {7}, BufferRole::kParam),
                          p.buffer("tb", {7}, BufferRole::kParam)},
           {p.buffer("tiny.n", {4, 7}, kOut)});
  inputGroup(p, first, 6);
  // Dropout in the other forms: a loop, and a bias gradient's column
  // reduction (GPT-2's add -> dropout -> sum_to_shape).
  int32_t lx = p.buffer("lx", {3, 50}, kIn), ld = p.buffer("ld", {3, 50});
  first = p.plan.kernels.size();
  p.kernel("dropout", {lx}, {ld}, -1, {{"rate", 0.5}, {"seed", int64_t(11)}});
  p.kernel("mul", {ld, lx}, {p.buffer("lm", {3, 50}, kOut)});
  inputGroup(p, first, 7);
  int32_t ra = p.buffer("ra", {4, 33}, kIn), rs = p.buffer("rs", {4, 33}),
          rd = p.buffer("rd", {4, 33}, kOut);
  first = p.plan.kernels.size();
  p.kernel("add", {ra, ra}, {rs});
  p.kernel("dropout", {rs}, {rd}, -1, {{"rate", 0.2}, {"seed", int64_t(5)}});
  p.kernel("sum_to_shape", {rd}, {p.buffer("rsum", {1, 33}, kOut)}, -1,
           {{"shape", std::vector<int64_t>{1, 33}}});
  inputGroup(p, first, 8);
  // BERT's last layer_norm, whose first token is the pooler's input: the
  // row group exports slices of whole rows, the first token ([:, 0, :]) of
  // its result, and every other batch row (a strided slice of the outer
  // axis, 5 rows a step) of a consumer's.
  int32_t px = p.buffer("px", {4, 5, 48}, kIn), pr = p.buffer("pr", {4, 5, 48}, kIn);
  int32_t ps = p.buffer("ps", {4, 5, 48}), pln = p.buffer("pln", {4, 5, 48}, kOut);
  int32_t pt = p.buffer("pt", {4, 5, 48});
  first = p.plan.kernels.size();
  p.kernel("add", {px, pr}, {ps});
  p.kernel("layer_norm", {ps, p.buffer("pg", {48}, BufferRole::kParam),
                          p.buffer("pb", {48}, BufferRole::kParam)},
           {pln}, -1, {{"epsilon", 1e-12}});
  p.kernel("slice", {pln}, {p.buffer("pfirst", {4, 1, 48}, kOut)}, -1,
           {{"axis", int64_t(1)}, {"start", int64_t(0)}, {"step", int64_t(1)}});
  p.kernel("tanh", {pln}, {pt});
  p.kernel("slice", {pt}, {p.buffer("podd", {2, 5, 48}, kOut)}, -1,
           {{"axis", int64_t(0)}, {"start", int64_t(1)}, {"step", int64_t(2)}});
  inputGroup(p, first, 9);
  return p.plan;
}

/// layer_norm_backward's input fusions (xla's BERT and GPT-2 backward):
/// producers before it, consumers after it, its column sums (gamma's and
/// beta's gradients) in the same launch; rows fewer and more than the
/// form's 256 chunks, rows shorter and longer than the block.
inline Plan normBackwardPlan() {
  GroupPlanBuilder p;
  p.plan.model = "codegen_norm_backward";
  const DType h = DType::kF16;
  // amp BERT: cast(f16 matmul) + the residual's gradient -> layer_norm_backward
  // -> cast to f16 and dropout.
  int32_t mh = p.buffer("mh", {5, 7, 200}, kIn, h), res = p.buffer("res", {5, 7, 200}, kIn);
  int32_t x = p.buffer("x", {5, 7, 200}, kIn), g = p.buffer("g", {200}, BufferRole::kParam);
  int32_t mf = p.buffer("mf", {5, 7, 200}), dy = p.buffer("dy", {5, 7, 200});
  int32_t dx = p.buffer("dx", {5, 7, 200}, kOut);
  size_t first = p.plan.kernels.size();
  p.kernel("cast", {mh}, {mf}, -1, {{"to", std::string("f32")}});
  p.kernel("add", {res, mf}, {dy});
  p.kernel("layer_norm_backward", {dy, x, g},
           {dx, p.buffer("dg", {200}, kOut), p.buffer("db", {200}, kOut)}, -1,
           {{"epsilon", 1e-5}});
  p.kernel("cast", {dx}, {p.buffer("dx16", {5, 7, 200}, kOut, h)}, -1,
           {{"to", std::string("f16")}});
  p.kernel("dropout", {dx}, {p.buffer("dxd", {5, 7, 200}, kOut)}, -1,
           {{"rate", 0.1}, {"seed", int64_t(3)}});
  inputGroup(p, first, 0);
  // Producers only: 300 rows in 256 chunks, a row shorter than a warp.
  int32_t a = p.buffer("a", {300, 20}, kIn), b = p.buffer("b", {300, 20}, kIn);
  int32_t x2 = p.buffer("x2", {300, 20}, kIn), g2 = p.buffer("g2", {20}, BufferRole::kParam);
  int32_t s2 = p.buffer("s2", {300, 20});
  first = p.plan.kernels.size();
  p.kernel("mul", {a, b}, {s2});
  p.kernel("layer_norm_backward", {s2, x2, g2},
           {p.buffer("dx2", {300, 20}, kOut), p.buffer("dg2", {20}, kOut),
            p.buffer("db2", {20}, kOut)},
           -1, {{"epsilon", 1e-6}});
  inputGroup(p, first, 1);
  // Consumers only: the gradient of a GELU before the norm (BERT's
  // prediction head), a row longer than the block.
  int32_t dy3 = p.buffer("dy3", {3, 300}, kIn), x3 = p.buffer("x3", {3, 300}, kIn);
  int32_t g3 = p.buffer("g3", {300}, BufferRole::kParam), pre = p.buffer("pre", {3, 300}, kIn);
  int32_t dx3 = p.buffer("dx3", {3, 300});
  first = p.plan.kernels.size();
  p.kernel("layer_norm_backward", {dy3, x3, g3},
           {dx3, p.buffer("dg3", {300}, kOut), p.buffer("db3", {300}, kOut)}, -1,
           {{"epsilon", 1e-5}});
  p.kernel("gelu_backward", {dx3, pre}, {p.buffer("dpre", {3, 300}, kOut)}, -1,
           {{"approximate", std::string("none")}});
  inputGroup(p, first, 2);
  return p.plan;
}

/// The layout pass's transposes: NCHW -> NHWC and back, in f32, f16 and
/// bf16, with sizes that leave partial tiles; a 5-d permutation that is no
/// batched matrix transpose stays a loop.
inline Plan transposePlan() {
  GroupPlanBuilder p;
  p.plan.model = "transpose_test";
  const std::vector<int64_t> toNhwc = {0, 2, 3, 1}, toNchw = {0, 3, 1, 2};
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
    std::string n = dtypeName(t);
    int32_t x = p.buffer("x_" + n, {2, 37, 5, 9}, kIn, t);
    int32_t y = p.buffer("y_" + n, {2, 5, 9, 37}, kOut, t);
    p.kernel("transpose", {x}, {y}, -1, {{"permutation", toNhwc}});
    int32_t z = p.buffer("z_" + n, {2, 37, 5, 9}, kOut, t);
    p.kernel("transpose", {y}, {z}, -1, {{"permutation", toNchw}});
  }
  int32_t a = p.buffer("a", {2, 3, 4, 5, 6}, kIn);
  p.kernel("transpose", {a}, {p.buffer("a_t", {2, 4, 3, 6, 5}, kOut)}, -1,
           {{"permutation", std::vector<int64_t>{0, 2, 1, 4, 3}}});
  // An image's 3 channels to NHWC: too narrow for tiles, the loop form.
  int32_t image = p.buffer("image", {2, 3, 11, 13}, kIn, DType::kF16);
  p.kernel("transpose", {image}, {p.buffer("image_t", {2, 11, 13, 3}, kOut, DType::kF16)}, -1,
           {{"permutation", toNhwc}});
  return p.plan;
}

} // namespace dlc_test

#endif // DLC_TEST_UNITTEST_RUNTIME_CODEGENPLANS_H
