//===- Collective.cpp - data-parallel ranks as threads --------------------===//

#include "dlc/runtime/Collective.h"

#include "dlc/runtime/Parallel.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <string>

namespace dlc::rt {

std::vector<int64_t> allReduceWaitPoints(const Plan &plan) {
  const int64_t n = static_cast<int64_t>(plan.kernels.size());
  std::vector<int64_t> waitAt(n, -1);
  for (int64_t k = 0; k < n; ++k) {
    const PlanKernel &reduce = plan.kernels[k];
    if (reduce.opClass != OpClass::kCollective)
      continue;
    // The operands' bytes, merged into sorted disjoint ranges.
    std::vector<std::pair<int64_t, int64_t>> ranges;
    for (const std::vector<int32_t> *ids : {&reduce.inputs, &reduce.outputs})
      for (int32_t id : *ids)
        ranges.push_back({plan.buffers[id].offset,
                          plan.buffers[id].offset + plan.buffers[id].bytes});
    std::sort(ranges.begin(), ranges.end());
    std::vector<std::pair<int64_t, int64_t>> merged;
    for (auto range : ranges)
      if (!merged.empty() && range.first <= merged.back().second)
        merged.back().second = std::max(merged.back().second, range.second);
      else
        merged.push_back(range);
    auto touches = [&](int32_t id) {
      int64_t begin = plan.buffers[id].offset, end = begin + plan.buffers[id].bytes;
      // The first range ending after `begin` is the only one that can meet it.
      auto it = std::upper_bound(merged.begin(), merged.end(), begin,
                                 [](int64_t at, const auto &r) { return at < r.second; });
      return it != merged.end() && it->first < end && begin < end;
    };
    waitAt[k] = n;
    for (int64_t j = k + 1; j < n && waitAt[k] == n; ++j)
      for (const std::vector<int32_t> *ids : {&plan.kernels[j].inputs, &plan.kernels[j].outputs})
        if (std::any_of(ids->begin(), ids->end(), touches)) {
          waitAt[k] = j;
          break;
        }
  }
  return waitAt;
}

std::string runsAloneMessage(int64_t ranks) {
  return "this plan averages gradients over " + std::to_string(ranks) +
         " data-parallel ranks, and this executor runs alone: run it with --gpus " +
         std::to_string(ranks);
}

Status Communicator::allReduceMean(const std::vector<const float *> &in,
                                   const std::vector<float *> &out,
                                   const std::vector<int64_t> &counts) {
  if (in.size() != counts.size() || out.size() != counts.size())
    return Status(StatusCode::kInvalidArgument,
                  "all-reduce: " + std::to_string(in.size()) + " inputs, " +
                      std::to_string(out.size()) + " outputs and " +
                      std::to_string(counts.size()) + " counts");
  return reduceMean(in, out, counts);
}

namespace {

/// What the ranks of one group share: a reusable barrier that an abort
/// breaks, and each rank's operands of the collective under way.
class Group {
public:
  explicit Group(int ranks)
      : ranks_(ranks), inputs_(ranks), counts_(ranks), gathered_(ranks) {}

  int ranks() const { return ranks_; }

  /// Waits until every rank arrived; fails once a rank aborted.
  Status barrier() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!abortedBy_.empty())
      return abandoned();
    int64_t generation = generation_;
    if (++arrived_ == ranks_) {
      arrived_ = 0;
      ++generation_;
      changed_.notify_all();
      return Status::ok();
    }
    changed_.wait(lock, [&] { return generation_ != generation || !abortedBy_.empty(); });
    return generation_ != generation ? Status::ok() : abandoned();
  }

  void abort(int rank, const std::string &why) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (abortedBy_.empty())
      abortedBy_ = "rank " + std::to_string(rank) + " failed: " + why;
    changed_.notify_all();
  }

  std::vector<const std::vector<const float *> *> &inputs() { return inputs_; }
  std::vector<const std::vector<int64_t> *> &counts() { return counts_; }
  std::vector<std::pair<const char *, size_t>> &gathered() { return gathered_; }

private:
  Status abandoned() const {
    return Status(StatusCode::kInternal, "all-reduce abandoned: " + abortedBy_);
  }

  const int ranks_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int arrived_ = 0;
  int64_t generation_ = 0;
  std::string abortedBy_;
  std::vector<const std::vector<const float *> *> inputs_;
  std::vector<const std::vector<int64_t> *> counts_;
  std::vector<std::pair<const char *, size_t>> gathered_;
};

class ThreadCommunicator final : public Communicator {
public:
  ThreadCommunicator(std::shared_ptr<Group> group, int rank)
      : group_(std::move(group)), rank_(rank) {}

  int rank() const override { return rank_; }
  int ranks() const override { return group_->ranks(); }

protected:
  Status reduceMean(const std::vector<const float *> &in, const std::vector<float *> &out,
                    const std::vector<int64_t> &counts) override {
    group_->inputs()[rank_] = &in;
    group_->counts()[rank_] = &counts;
    if (Status s = group_->barrier(); !s.isOk())
      return s;
    // Every rank checks every rank's operands alike, so all fail together;
    // and none returns before all have checked, for `counts` is its
    // caller's and the others are reading it (ASan found rank 1 reading
    // rank 0's freed counts).
    for (int r = 1; r < ranks(); ++r)
      if (*group_->counts()[r] != *group_->counts()[0]) {
        if (Status s = group_->barrier(); !s.isOk())
          return s;
        return Status(StatusCode::kInvalidArgument,
                      "all-reduce: rank " + std::to_string(r) +
                          " sends other buffer sizes than rank 0 (are the "
                          "ranks running different plans?)");
      }
    // Sum in rank order into private memory: `out` may alias `in`, and the
    // other ranks read this rank's input until the second barrier.
    int64_t total = 0;
    for (int64_t c : counts)
      total += c;
    mean_.resize(static_cast<size_t>(total));
    float scale = 1.0f / static_cast<float>(ranks());
    int64_t base = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      float *mean = mean_.data() + base;
      parallelFor(0, counts[i], [&](int64_t e) {
        float sum = 0;
        for (int r = 0; r < ranks(); ++r)
          sum += (*group_->inputs()[r])[i][e];
        mean[e] = sum * scale;
      }, 1 << 14);
      base += counts[i];
    }
    if (Status s = group_->barrier(); !s.isOk())
      return s;
    base = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      std::copy(mean_.data() + base, mean_.data() + base + counts[i], out[i]);
      base += counts[i];
    }
    return Status::ok();
  }

public:
  Status allGather(const void *mine, size_t bytes, void *all) override {
    group_->gathered()[rank_] = {static_cast<const char *>(mine), bytes};
    if (Status s = group_->barrier(); !s.isOk())
      return s;
    // Every rank checks every rank alike, so all fail together.
    size_t first = group_->gathered()[0].second;
    for (int r = 1; r < ranks(); ++r)
      if (group_->gathered()[r].second != first)
        return Status(StatusCode::kInvalidArgument,
                      "all-gather: rank " + std::to_string(r) + " sends " +
                          std::to_string(group_->gathered()[r].second) +
                          " bytes, rank 0 " + std::to_string(first));
    for (int r = 0; r < ranks(); ++r)
      std::copy_n(group_->gathered()[r].first, bytes, static_cast<char *>(all) + r * bytes);
    // `mine` must outlive the other ranks' reads.
    return group_->barrier();
  }

  void abort(const std::string &why) override { group_->abort(rank_, why); }

private:
  std::shared_ptr<Group> group_;
  int rank_;
  std::vector<float> mean_;
};

} // namespace

std::vector<std::unique_ptr<Communicator>> createThreadRankGroup(int ranks) {
  auto group = std::make_shared<Group>(ranks);
  std::vector<std::unique_ptr<Communicator>> communicators;
  for (int r = 0; r < ranks; ++r)
    communicators.push_back(std::make_unique<ThreadCommunicator>(group, r));
  return communicators;
}

} // namespace dlc::rt
