//===- HostLaunches.cpp - the fast mode's launches, bound and run ---------===//

#include "dlc/runtime/Collective.h"
#include "dlc/runtime/cpu/HostKernels.h"
#include "dlc/runtime/Parallel.h"

#include <algorithm>

namespace dlc::rt::cpu {

using codegen::GeneratedKernel;
using codegen::KernelTarget;

namespace {
/// Arguments a launch passes on the stack; more take the heap.
constexpr size_t kStackArgs = 64;
} // namespace

std::vector<HostLaunch> planHostLaunches(const Plan &plan) {
  const std::vector<Launch> original = planLaunches(plan);
  std::vector<std::string> splitReason;
  std::vector<Launch> launches = codegen::splitGroups(
      plan,
      [&](const Launch &group) {
        auto g = codegen::generateKernel(plan, group, original, KernelTarget::kHost);
        return g.isOk() ? std::string() : g.status().message();
      },
      splitReason);
  std::vector<HostLaunch> host;
  for (size_t i = 0; i < launches.size(); ++i) {
    HostLaunch h;
    h.launch = launches[i];
    // Every launch the generator covers, whatever the CUDA backend runs it
    // with: a lone softmax, dropout or optimizer update too.
    auto g = codegen::generateKernel(plan, launches[i], launches, KernelTarget::kHost);
    if (g.isOk())
      h.kernel = std::move(*g);
    else
      h.reason = g.status().message();
    host.push_back(std::move(h));
  }
  // What the generator does not cover runs as the CPU's own op: one call
  // when the launch is one op.
  std::vector<bool> pair;
  codegen::markCallPlusKernel(
      launches,
      [&](size_t i) {
        if (host[i].kernel)
          return codegen::PartPath::kGenerated;
        return launches[i].kernels.size() == 1 ? codegen::PartPath::kCall
                                               : codegen::PartPath::kOther;
      },
      splitReason, pair);
  for (size_t i = 0; i < launches.size(); ++i) {
    HostLaunch &h = host[i];
    h.callPlusKernel = pair[i];
    h.splitFromGroup = !splitReason[i].empty();
    h.splitReason = splitReason[i];
    if (!splitReason[i].empty() && !h.kernel)
      h.reason = splitReason[i] + "; " + h.reason;
  }
  return host;
}

std::vector<GeneratedKernel> planHostKernels(const Plan &plan) {
  std::vector<GeneratedKernel> kernels;
  for (HostLaunch &h : planHostLaunches(plan))
    if (h.kernel)
      kernels.push_back(std::move(*h.kernel));
  return kernels;
}

StatusOr<std::unique_ptr<HostKernels>> HostKernels::create(const Plan &plan,
                                                           const std::string &cacheDir) {
  std::unique_ptr<HostKernels> hk(new HostKernels());
  hk->launches_ = planHostLaunches(plan);
  hk->startsAt_.assign(plan.kernels.size(), -1);
  std::vector<const GeneratedKernel *> kernels;
  HostKernelStats &stats = hk->stats_;
  stats.launches = hk->launches_.size();
  for (size_t l = 0; l < hk->launches_.size(); ++l) {
    const HostLaunch &h = hk->launches_[l];
    if (!h.kernel)
      continue;
    kernels.push_back(&*h.kernel);
    hk->startsAt_[h.launch.kernels.front()] = static_cast<int64_t>(l);
    ++stats.generated;
    stats.kernels += h.launch.kernels.size();
  }
  hk->bound_.resize(hk->launches_.size());
  if (kernels.empty())
    return hk;
  auto library = HostKernelLibrary::build(kernels, cacheDir);
  if (!library.isOk())
    return library.status();
  hk->library_ = std::move(*library);
  std::vector<std::string> names;
  for (const GeneratedKernel *g : kernels)
    names.push_back(g->name);
  std::sort(names.begin(), names.end());
  stats.distinct = std::unique(names.begin(), names.end()) - names.begin();
  stats.compileSeconds = hk->library_->compileSeconds();
  stats.cacheHit = hk->library_->cacheHit();
  stats.library = hk->library_->path();
  for (size_t l = 0; l < hk->launches_.size(); ++l)
    if (const auto &g = hk->launches_[l].kernel)
      hk->bound_[l].entry = hk->library_->entry(g->name);
  return hk;
}

void HostKernels::bind(const Plan &plan, unsigned char *arena) {
  auto address = [&](int32_t id) {
    return reinterpret_cast<uint64_t>(arena + plan.buffers[id].offset);
  };
  for (size_t l = 0; l < launches_.size(); ++l) {
    const std::optional<GeneratedKernel> &g = launches_[l].kernel;
    if (!g)
      continue;
    Bound &b = bound_[l];
    b.args.clear();
    b.elements = 0;
    if (codegen::walksSegmentTable(g->form)) {
      std::string bytes = codegen::packSegmentTable(*g, address);
      b.table.assign((bytes.size() + 7) / 8, 0);
      std::copy(bytes.begin(), bytes.end(), reinterpret_cast<char *>(b.table.data()));
      b.args = {b.table.data(), reinterpret_cast<void *>(intptr_t(g->tableSegments())), &step_};
      for (const codegen::OptimizerSegment &s : g->segments)
        b.elements += s.elements;
      for (const codegen::CastSegment &s : g->castSegments)
        b.elements += s.elements;
    } else {
      for (int32_t id : g->args) {
        b.args.push_back(arena + plan.buffers[id].offset);
        b.elements += plan.buffers[id].numElements();
      }
      if (g->readsStep)
        b.args.push_back(&dropoutCounter_);
      if (g->scratchBytes > 0) {
        // A row kernel's column sums: zeroed, and left with a zero counter
        // by every run.
        b.scratch.assign(static_cast<size_t>((g->scratchBytes + 7) / 8), 0);
        b.args.push_back(b.scratch.data());
      }
    }
    b.args.resize(b.args.size() + 2); // the part and the parts
    b.items = std::max<int64_t>(1, g->work);
  }
}

void HostKernels::run(size_t l, int64_t step, int rank, ThreadPool &pool) {
  // Table kernels read the step (AdamW's bias correction), the others the
  // dropout counter: the step plus this rank's offset, as the CUDA backend
  // passes it, so that each rank draws the reference's masks.
  step_ = static_cast<long long>(step);
  dropoutCounter_ = static_cast<long long>(static_cast<uint64_t>(step) + dropoutStepOffset(rank));
  const Bound &b = bound_[l];
  int parts = static_cast<int>(std::clamp<int64_t>(
      std::min(b.elements / partElements_, b.items), 1, pool.threads()));
  const size_t n = b.args.size();
  pool.run(parts, [&](int part) {
    void *stack[kStackArgs];
    std::vector<void *> heap;
    void **args = stack;
    if (n > kStackArgs) {
      heap.resize(n);
      args = heap.data();
    }
    std::copy(b.args.begin(), b.args.end() - 2, args);
    args[n - 2] = reinterpret_cast<void *>(intptr_t(part));
    args[n - 1] = reinterpret_cast<void *>(intptr_t(parts));
    b.entry(args);
  });
}

} // namespace dlc::rt::cpu
