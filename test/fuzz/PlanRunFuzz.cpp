//===- PlanRunFuzz.cpp - libFuzzer target: a plan that loads runs safely --===//
//
// Issue #39: a plan file that loads must run on every backend without a
// crash. Each input is read as a plan with its header, payload size and
// checksum made to fit (so mutations reach the payload; the op table's
// fingerprint is left as it is, and a mutated one is refused); a plan that
// loads runs one step on the reference backend and on the cpu backend's
// one-by-one kernels (fastKernels(): its own loss, norm, embedding, resize
// and loss-scale kernels; oneDNN is not in the fuzz build, and the
// generated host launches would compile C++ for each input). A kernel may
// refuse its data (an index outside the table) with a Status; a crash, a
// sanitizer report or a hang is a bug.
//
// Mutations: a byte-level mutation of a plan seldom parses (a length field
// moves), and PlanReaderFuzz covers those, so the custom mutator below
// mutates a plan that parses as a plan: an attribute's value, a buffer's
// shape or element type, a kernel's operands or its op, one to three of
// them, and writes it back with its checksum. An input that does not load
// (most mutations are refused by a rule) is replaced by one of the last
// plans that did. scripts/fuzz.sh runs this target with -cross_over=0,
// which would splice two plans into neither.
//
// Bounds, so that an input is milliseconds: the arena at most kArenaCap
// bytes, and the step's arithmetic, estimated per kernel from the validated
// shapes, at most kWorkCap operations; larger plans are read and validated
// only. At exit it prints how far the inputs got (loaded, refused by a
// rule, steps run); PLAN_RUN_FUZZ_VERBOSE=1 prints every refusal.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/DiskCache.h"
#include "dlc/runtime/Parallel.h"
#include "dlc/runtime/Plan.h"
#include "dlc/runtime/cpu/CpuExecutor.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

using namespace dlc::rt;

namespace {

constexpr size_t kMagicBytes = 8, kHeaderBytes = 8 + 4 + 8, kTrailerBytes = 8;
constexpr int64_t kArenaCap = int64_t(16) << 20;
constexpr double kWorkCap = 2e7;

/// The header and checksum made to fit `bytes`' length and payload.
void fixUp(std::string &bytes) {
  std::memcpy(&bytes[0], "DLCPLAN\n", kMagicBytes);
  uint32_t version = kPlanFormatVersion;
  uint64_t payloadBytes = bytes.size() - kHeaderBytes - kTrailerBytes;
  std::memcpy(&bytes[kMagicBytes], &version, 4);
  std::memcpy(&bytes[kMagicBytes + 4], &payloadBytes, 8);
  uint64_t sum = fnv1a(std::string_view(bytes).substr(kHeaderBytes, payloadBytes));
  std::memcpy(&bytes[kHeaderBytes + payloadBytes], &sum, 8);
}

double elements(const Plan &plan, int32_t id) {
  double n = 1;
  for (int64_t d : plan.buffers[id].shape)
    n *= static_cast<double>(d);
  return n;
}

/// Operations a step of the plan does, roughly: every operand and result
/// element once, and the contractions and windows their products.
double stepWork(const Plan &plan) {
  double work = 0;
  for (const PlanKernel &k : plan.kernels) {
    double touched = 0;
    for (const auto *list : {&k.inputs, &k.outputs})
      for (int32_t id : *list)
        touched += elements(plan, id);
    work += touched;
    auto shape = [&](int32_t id) -> const std::vector<int64_t> & {
      return plan.buffers[id].shape;
    };
    switch (k.id) {
    case OpId::kMatmul: { // result elements times the contracted extent
      const std::vector<int64_t> &a = shape(k.inputs[0]);
      work += elements(plan, k.outputs[0]) *
              static_cast<double>(k.flag("transpose_lhs") ? a[a.size() - 2] : a.back());
      break;
    }
    case OpId::kLinear:
      work += elements(plan, k.outputs[0]) * static_cast<double>(shape(k.inputs[1])[1]);
      break;
    case OpId::kConv2d:
    case OpId::kConv2dBackwardData:
    case OpId::kConv2dBackwardFilter: {
      // Output elements times a filter's inputs, whichever buffer is which.
      double most = 0;
      for (const auto *list : {&k.inputs, &k.outputs})
        for (int32_t id : *list)
          most = std::max(most, elements(plan, id));
      work += most * most;
      break;
    }
    case OpId::kMaxPool2d:
    case OpId::kAvgPool2d:
    case OpId::kMaxPool2dBackward:
    case OpId::kAvgPool2dBackward: {
      std::vector<int64_t> window = k.intsAttr("kernel_size", {1, 1});
      work += touched * static_cast<double>(window[0]) * static_cast<double>(window[1]);
      break;
    }
    case OpId::kSoftmax: // the additive mask is broadcast to the input
    case OpId::kSoftmaxCrossEntropy:
    case OpId::kSoftmaxCrossEntropyBackward:
    case OpId::kReduceMax:
    case OpId::kReduceMean:
    case OpId::kReduceSum:
    case OpId::kSumToShape:
      work += 4 * touched;
      break;
    default:
      break;
    }
  }
  return work;
}

/// How far the inputs got, printed at exit: how much of the run reached
/// the backends.
struct Counts {
  long inputs = 0, ruleRefused = 0, loaded = 0, capped = 0, created = 0, stepped = 0, refused = 0;
  ~Counts() {
    std::fprintf(stderr,
                 "PlanRunFuzz: %ld inputs, %ld refused by an op's rule, %ld loaded, %ld past "
                 "the caps; on the two backends %ld executors created, %ld steps run, %ld "
                 "refused with a Status\n",
                 inputs, ruleRefused, loaded, capped, created, stepped, refused);
  }
};
Counts counts;


/// One value an attribute might hold, of any kind: the edges the rules
/// check (0, -1, one past a rank, NaN), and the attribute's own values
/// nudged.
PlanAttr mutatedAttr(const PlanAttr &now, std::mt19937_64 &rng) {
  auto pick = [&](auto... options) {
    using T = std::common_type_t<decltype(options)...>;
    T all[] = {options...};
    return all[rng() % sizeof...(options)];
  };
  auto integer = [&](int64_t v) -> int64_t {
    uint64_t u = static_cast<uint64_t>(v); // nudged with wrapping, as a file may hold anything
    return pick(static_cast<int64_t>(u + 1), static_cast<int64_t>(u - 1), int64_t(0),
                int64_t(-1), int64_t(1), int64_t(2), int64_t(4), int64_t(-3),
                static_cast<int64_t>(0 - u), static_cast<int64_t>(u * 2),
                int64_t(rng() % 64), int64_t(INT64_MAX), int64_t(INT64_MIN), int64_t(1) << 31);
  };
  switch (rng() % 8) {
  case 0: // another kind
    return pick(PlanAttr(int64_t(1)), PlanAttr(0.5), PlanAttr(std::string("NHWC")),
                PlanAttr(std::vector<int64_t>{1, 1}));
  default:
    break;
  }
  if (const int64_t *v = std::get_if<int64_t>(&now))
    return integer(*v);
  if (const double *v = std::get_if<double>(&now))
    return pick(0.0, -1.0, 1.0, 0.5, 2.0, *v * 2, -*v, 1e-30, 1e30, double(NAN), double(INFINITY),
                0.999999);
  if (const std::string *v = std::get_if<std::string>(&now))
    return pick(std::string("NCHW"), std::string("NHWC"), std::string("tanh"),
                std::string("none"), std::string(""), *v + "x");
  std::vector<int64_t> list = std::get<std::vector<int64_t>>(now);
  switch (rng() % 4) {
  case 0:
    list.push_back(integer(list.empty() ? 0 : list.back()));
    break;
  case 1:
    if (!list.empty())
      list.pop_back();
    break;
  default:
    if (!list.empty()) {
      int64_t &e = list[rng() % list.size()];
      e = integer(e);
    }
  }
  return list;
}

/// The names the rules and kernels read, to add one a kernel lacks.
const char *const kAttrNames[] = {
    "axis", "axes", "class_axis", "permutation", "stride", "padding", "dilation", "groups",
    "kernel_size", "start", "step", "rate", "epsilon", "causal", "scale", "transpose_lhs",
    "transpose_rhs", "ceil_mode", "layout", "approximate", "ranks", "momentum", "beta1"};

/// A buffer's bytes and the arena made to fit its new shape or type;
/// false (the mutation dropped) when they would not fit in int64.
bool resized(Plan &plan, PlanBuffer &b) {
  int64_t elements = 1, end = 0;
  for (int64_t d : b.shape)
    if (__builtin_mul_overflow(elements, d, &elements))
      return false;
  if (__builtin_mul_overflow(elements, dtypeBytes(b.dtype), &b.bytes) ||
      __builtin_add_overflow(b.offset, b.bytes, &end))
    return false;
  plan.arenaBytes = std::max(plan.arenaBytes, end);
  return true;
}

/// Mutates `plan` as a plan; false when it found nothing to mutate.
bool mutatePlan(Plan &plan, std::mt19937_64 &rng) {
  if (plan.kernels.empty() || plan.buffers.empty())
    return false;
  PlanKernel &k = plan.kernels[rng() % plan.kernels.size()];
  switch (rng() % 9) {
  case 0:
  case 1:
  case 2: { // an attribute's value, or one the kernel lacks
    if (k.attrs.empty() || rng() % 4 == 0) {
      k.attrs[kAttrNames[rng() % std::size(kAttrNames)]] =
          mutatedAttr(PlanAttr(int64_t(rng() % 4)), rng);
      return true;
    }
    auto it = std::next(k.attrs.begin(), static_cast<long>(rng() % k.attrs.size()));
    it->second = mutatedAttr(it->second, rng);
    return true;
  }
  case 3: { // a buffer's extent; its bytes and the arena follow
    std::vector<int32_t> ids = k.inputs;
    ids.insert(ids.end(), k.outputs.begin(), k.outputs.end());
    if (ids.empty())
      return false;
    PlanBuffer &b = plan.buffers[ids[rng() % ids.size()]];
    if (b.role == BufferRole::kConstant)
      return false;
    if (b.shape.empty() || rng() % 5 == 0)
      b.shape.insert(b.shape.begin() + static_cast<long>(rng() % (b.shape.size() + 1)),
                     int64_t(1 + rng() % 3));
    else if (rng() % 5 == 0)
      b.shape.erase(b.shape.begin() + static_cast<long>(rng() % b.shape.size()));
    else {
      int64_t &d = b.shape[rng() % b.shape.size()];
      uint64_t u = static_cast<uint64_t>(d);
      uint64_t options[] = {u + 1, u - 1, 0, 1, u * 2, u / 2};
      d = static_cast<int64_t>(std::min<uint64_t>(options[rng() % std::size(options)], INT32_MAX));
    }
    return resized(plan, b);
  }
  case 4: { // a buffer's element type
    std::vector<int32_t> ids = k.inputs;
    ids.insert(ids.end(), k.outputs.begin(), k.outputs.end());
    if (ids.empty())
      return false;
    PlanBuffer &b = plan.buffers[ids[rng() % ids.size()]];
    if (b.role == BufferRole::kConstant)
      return false;
    b.dtype = static_cast<DType>(rng() % 5);
    return resized(plan, b);
  }
  case 5: { // an operand or result: another buffer, one fewer or one more
    std::vector<int32_t> &list = rng() % 2 ? k.inputs : k.outputs;
    int32_t other = static_cast<int32_t>(rng() % plan.buffers.size());
    switch (rng() % 3) {
    case 0:
      if (list.empty())
        return false;
      list[rng() % list.size()] = other;
      break;
    case 1:
      if (list.empty())
        return false;
      list.erase(list.begin() + static_cast<long>(rng() % list.size()));
      break;
    default:
      list.push_back(other);
    }
    return true;
  }
  case 6: // another op over the same buffers
    k.setOp(static_cast<OpId>(rng() % kNumOps));
    k.opClass = opClassOf(k.id);
    return true;
  case 7: { // another kernel's attributes
    const PlanKernel &from = plan.kernels[rng() % plan.kernels.size()];
    k.attrs = from.attrs;
    return true;
  }
  default: { // a kernel's buffers swapped with another's of its op
    PlanKernel &other = plan.kernels[rng() % plan.kernels.size()];
    std::swap(k.inputs, other.inputs);
    return true;
  }
  }
}

void runStep(const Plan &plan, const cpu::CpuExecutor::Options &options) {
  auto exec = cpu::CpuExecutor::create(plan, options);
  if (!exec.isOk())
    return;
  ++counts.created;
  if (!(*exec)->initialize(1).isOk() || !(*exec)->fillSyntheticBatch(2).isOk()) {
    ++counts.refused;
    return;
  }
  if ((*exec)->step().isOk())
    ++counts.stepped;
  else
    ++counts.refused;
  (void)(*exec)->loss();
}

} // namespace

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

/// Plans that loaded within the arena cap, most recent last (at most 32):
/// what the mutator
/// starts from when its input does not load (refused by a rule, as most
/// mutations are, or cut by -max_len).
std::vector<Plan> &loadedPlans() {
  static std::vector<Plan> plans;
  return plans;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t maxSize,
                                          unsigned int seed) {
  std::mt19937_64 rng(seed);
  StatusOr<Plan> plan = Status(StatusCode::kInvalidArgument, "too short");
  if (size >= kHeaderBytes + kTrailerBytes) {
    std::string bytes(reinterpret_cast<const char *>(data), size);
    fixUp(bytes);
    plan = deserializePlan(bytes, "fuzz");
  }
  if (!plan.isOk() && !loadedPlans().empty())
    plan = loadedPlans()[rng() % loadedPlans().size()];
  if (plan.isOk()) {
    int edits = 1 + static_cast<int>(rng() % 3);
    bool changed = false;
    for (int i = 0; i < edits; ++i)
      changed |= mutatePlan(*plan, rng);
    std::string out = serializePlan(*plan);
    if (changed && out.size() <= maxSize) {
      std::memcpy(data, out.data(), out.size());
      return out.size();
    }
  }
  if (std::getenv("PLAN_RUN_FUZZ_VERBOSE"))
    std::fprintf(stderr, "byte mutation of %zu bytes (max %zu)\n", size, maxSize);
  return LLVMFuzzerMutate(data, size, maxSize);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static ScopedCpuThreads oneThread(1); // libFuzzer's -jobs run the inputs in parallel
  if (size < kHeaderBytes + kTrailerBytes)
    return 0;
  std::string bytes(reinterpret_cast<const char *>(data), size);
  fixUp(bytes);
  ++counts.inputs;
  auto plan = deserializePlan(bytes, "fuzz");
  if (!plan.isOk()) {
    if (std::getenv("PLAN_RUN_FUZZ_VERBOSE"))
      std::fprintf(stderr, "refused: %s\n", plan.status().message().c_str());
    counts.ruleRefused +=
        plan.status().message().find("corrupt plan file: kernel #") != std::string::npos;
    return 0;
  }
  ++counts.loaded;
  if (plan->arenaBytes <= kArenaCap && loadedPlans().size() >= 32)
    loadedPlans().erase(loadedPlans().begin());
  if (plan->arenaBytes <= kArenaCap)
    loadedPlans().push_back(*plan);
  if (plan->arenaBytes > kArenaCap || stepWork(*plan) > kWorkCap) {
    ++counts.capped;
    return 0;
  }
  runStep(*plan, cpu::CpuExecutor::Options());
  cpu::CpuExecutor::Options fast;
  fast.libraryKernels = &cpu::fastKernels();
  runStep(*plan, fast);
  return 0;
}
