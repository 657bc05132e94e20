//===- FastLossTest.cpp - the fast cross-entropy against the reference ----===//
//
// fastKernels()' softmax_cross_entropy and its gradient (FastLoss.cpp) run
// beside the reference's (cpuKernels(), double) on seeded logits: class
// rows (BERT's head), per-pixel classes with an ignore index (segmentation),
// every label ignored, and a bad label.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/cpu/CpuExecutor.h"

#include "TestPlan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

using namespace dlc::rt;
using namespace dlc::rt::cpu;
using dlc_test::PlanBuilder;

namespace {

/// Float rows of up to 30,000 terms against the reference's double.
constexpr double kTolerance = 1e-5;

struct Results {
  float loss = 0;
  std::vector<float> grad;
  Status forward, backward;
};

/// logits [outer, classes, inner] (class axis 1), labels [outer, inner].
class CrossEntropyCase {
public:
  CrossEntropyCase(std::vector<int64_t> logitShape, std::vector<int64_t> labels,
                   int64_t ignore = -100)
      : labels_(std::move(labels)) {
    std::vector<int64_t> labelShape = {logitShape[0]};
    for (size_t d = 2; d < logitShape.size(); ++d)
      labelShape.push_back(logitShape[d]);
    logits_ = b_.add("logits", DType::kF32, logitShape, BufferRole::kTemporary);
    labelId_ = b_.add("labels", DType::kI64, labelShape, BufferRole::kTemporary);
    loss_ = b_.add("loss", DType::kF32, {}, BufferRole::kTemporary);
    grad_ = b_.add("grad", DType::kF32, logitShape, BufferRole::kTemporary);
    PlanAttrs attrs{{"ignore_index", ignore}, {"class_axis", int64_t{1}}};
    b_.kernel("softmax_cross_entropy", {logits_, labelId_}, {loss_}, attrs);
    b_.kernel("softmax_cross_entropy_backward", {loss_, logits_, labelId_}, {grad_}, attrs);
    std::mt19937 rng(7);
    std::normal_distribution<float> n(0.f, 3.f);
    values_.resize(b_.plan.buffers[logits_].numElements());
    for (float &v : values_)
      v = n(rng);
  }

  Results run(const KernelRegistry &registry) {
    const Plan &p = b_.plan;
    Results r;
    r.grad.assign(values_.size(), -1.f);
    float dloss = 1.f;
    std::vector<float> logits = values_;
    TensorRef L{logits.data(), DType::kF32, &p.buffers[logits_].shape};
    TensorRef Y{labels_.data(), DType::kI64, &p.buffers[labelId_].shape};
    TensorRef loss{&r.loss, DType::kF32, &p.buffers[loss_].shape};
    TensorRef dl{&dloss, DType::kF32, &p.buffers[loss_].shape};
    TensorRef G{r.grad.data(), DType::kF32, &p.buffers[grad_].shape};
    r.forward = registry.at(OpId::kSoftmaxCrossEntropy)(KernelContext(p.kernels[0], {L, Y}, {loss}, 0));
    r.backward = registry.at(OpId::kSoftmaxCrossEntropyBackward)(
        KernelContext(p.kernels[1], {dl, L, Y}, {G}, 0));
    return r;
  }

  void expectMatchesReference(const char *what) {
    Results fast = run(fastKernels()), ref = run(cpuKernels());
    ASSERT_TRUE(fast.forward.isOk()) << fast.forward.toString();
    ASSERT_TRUE(fast.backward.isOk()) << fast.backward.toString();
    EXPECT_LE(std::fabs(fast.loss - ref.loss), kTolerance * std::max(1.f, std::fabs(ref.loss)))
        << what << ": loss " << fast.loss << " vs " << ref.loss;
    double err = 0, scale = 0;
    for (size_t i = 0; i < ref.grad.size(); ++i) {
      err = std::max(err, double(std::fabs(fast.grad[i] - ref.grad[i])));
      scale = std::max(scale, double(std::fabs(ref.grad[i])));
    }
    EXPECT_LE(err, kTolerance * std::max(scale, 1e-30)) << what << ": gradient";
  }

private:
  PlanBuilder b_;
  std::vector<int64_t> labels_;
  std::vector<float> values_;
  int32_t logits_, labelId_, loss_, grad_;
};

std::vector<int64_t> someLabels(int64_t n, int64_t classes, int64_t ignore, int every) {
  std::vector<int64_t> labels(n);
  for (int64_t i = 0; i < n; ++i)
    labels[i] = every && i % every == 0 ? ignore : (i * 7919) % classes;
  return labels;
}

TEST(FastLoss, ClassRowsMatchTheReference) {
  // BERT-base's MLM head at a small batch: 30,522 classes, some ignored.
  CrossEntropyCase c({24, 30522}, someLabels(24, 30522, -100, 5));
  c.expectMatchesReference("class rows");
}

TEST(FastLoss, PerPixelClassesWithAnIgnoreIndexMatchTheReference) {
  CrossEntropyCase c({2, 19, 5, 7}, someLabels(2 * 5 * 7, 19, 255, 3), 255);
  c.expectMatchesReference("per-pixel");
}

TEST(FastLoss, EveryLabelIgnoredIsAZeroLossAndGradient) {
  CrossEntropyCase c({3, 10}, {-100, -100, -100});
  Results r = c.run(fastKernels());
  ASSERT_TRUE(r.forward.isOk() && r.backward.isOk());
  EXPECT_EQ(r.loss, 0.f);
  for (float g : r.grad)
    EXPECT_EQ(g, 0.f);
}

TEST(FastLoss, ALabelOutOfRangeIsTheReferencesError) {
  CrossEntropyCase c({3, 10}, {1, 12, 2});
  Results fast = c.run(fastKernels()), ref = c.run(cpuKernels());
  EXPECT_FALSE(fast.forward.isOk());
  EXPECT_FALSE(fast.backward.isOk());
  EXPECT_EQ(fast.forward.message(), ref.forward.message());
}

} // namespace
