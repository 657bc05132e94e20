//===- MpiRankGroup.cpp - data-parallel ranks as MPI processes ------------===//
//
// One rank per process of an mpirun job. MPI itself is behind
// libdlc_mpi.so (src/mpi/DlcMpi.h), loaded here with dlopen, so that the
// runtime links no MPI and runs where none is installed.
//
// The all-reduce adds the same numbers in the same order as the thread
// group: the bucket is cut into one slice per rank, each rank receives
// every rank's copy of its slice (MPI_Alltoallv), sums them in rank order
// and scales by 1/ranks, and the means are gathered back (MPI_Allgatherv).
// That moves what a reduce-scatter plus all-gather moves, and every rank
// ends with bit-identical means, equal to the thread group's.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/Collective.h"

#include "Symbols.h"
#include "mpi/DlcMpi.h"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <type_traits>
#include <unistd.h>

namespace dlc::rt {

namespace {

int environmentInt(const char *name) {
  const char *value = std::getenv(name);
  if (!value || !*value)
    return -1;
  char *end = nullptr;
  long v = std::strtol(value, &end, 10);
  return *end || v < 0 || v > INT_MAX ? -1 : static_cast<int>(v);
}

/// libdlc_mpi.so's functions.
struct Plugin {
  void *handle = nullptr;
  std::string path;
  int (*interfaceVersion)() = nullptr;
  decltype(&dlcMpiInit) init = nullptr;
  decltype(&dlcMpiAllGather) allGather = nullptr;
  decltype(&dlcMpiAllToAllFloats) allToAll = nullptr;
  decltype(&dlcMpiAllGatherFloats) allGatherFloats = nullptr;
  decltype(&dlcMpiAbort) abort = nullptr;
  decltype(&dlcMpiFinalize) finalize = nullptr;
};

/// Where to look for the plugin: DLC_MPI_LIBRARY, else the build's (and an
/// install's) lib/ beside the program's bin/, else the loader's path.
std::vector<std::string> pluginCandidates() {
  if (const char *override = std::getenv("DLC_MPI_LIBRARY"); override && *override)
    return {override};
  std::vector<std::string> paths;
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    paths.push_back((exe.parent_path().parent_path() / "lib" / "libdlc_mpi.so").string());
    paths.push_back((exe.parent_path() / "libdlc_mpi.so").string());
  }
  paths.push_back("libdlc_mpi.so");
  return paths;
}

StatusOr<Plugin> loadPlugin() {
  Plugin p;
  std::string tried;
  for (const std::string &path : pluginCandidates()) {
    // RTLD_GLOBAL: Open MPI loads its own components with dlopen and wants
    // libmpi's symbols visible to them.
    p.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (p.handle) {
      p.path = path;
      break;
    }
    const char *why = dlerror();
    tried += (tried.empty() ? "" : "; ") + std::string(why ? why : path);
  }
  if (!p.handle)
    return Status(StatusCode::kUnavailable,
                  "dlc's MPI support (libdlc_mpi.so) cannot be loaded (" + tried +
                      "). It is built when CMake finds MPI (Debian: libopenmpi-dev); "
                      "DLC_MPI_LIBRARY names it elsewhere");
  std::string missing;
  findSymbol(p.handle, p.interfaceVersion, "dlcMpiInterfaceVersion", missing);
  findSymbol(p.handle, p.init, "dlcMpiInit", missing);
  findSymbol(p.handle, p.allGather, "dlcMpiAllGather", missing);
  findSymbol(p.handle, p.allToAll, "dlcMpiAllToAllFloats", missing);
  findSymbol(p.handle, p.allGatherFloats, "dlcMpiAllGatherFloats", missing);
  findSymbol(p.handle, p.abort, "dlcMpiAbort", missing);
  findSymbol(p.handle, p.finalize, "dlcMpiFinalize", missing);
  if (!missing.empty())
    return Status(StatusCode::kUnavailable, p.path + " lacks " + missing);
  if (p.interfaceVersion() != DLC_MPI_INTERFACE_VERSION)
    return Status(StatusCode::kUnavailable,
                  p.path + " implements interface version " +
                      std::to_string(p.interfaceVersion()) + ", this program wants " +
                      std::to_string(DLC_MPI_INTERFACE_VERSION) + ": rebuild it with dlc");
  return p;
}

/// A plugin call's failure.
Status mpiError(const char *error) { return Status(StatusCode::kInternal, error); }

class MpiCommunicator final : public Communicator {
public:
  MpiCommunicator(const Plugin &plugin, int rank, int ranks)
      : p_(plugin), rank_(rank), ranks_(ranks) {}

  int rank() const override { return rank_; }
  int ranks() const override { return ranks_; }

protected:
  Status reduceMean(const std::vector<const float *> &in, const std::vector<float *> &out,
                    const std::vector<int64_t> &counts) override {
    int64_t total = 0;
    uint64_t shape = 1469598103934665603ull; // FNV-1a over the counts
    for (int64_t c : counts) {
      total += c;
      shape = (shape ^ static_cast<uint64_t>(c)) * 1099511628211ull;
    }
    // Every rank checks every rank's operands alike, so all fail together
    // instead of some waiting in a transfer that never matches.
    uint64_t mine[2] = {static_cast<uint64_t>(total), shape};
    std::vector<uint64_t> all(2 * static_cast<size_t>(ranks_));
    if (Status s = allGather(mine, sizeof(mine), all.data()); !s.isOk())
      return s;
    for (int r = 1; r < ranks_; ++r)
      if (all[2 * r] != all[0] || all[2 * r + 1] != all[1])
        return Status(StatusCode::kInvalidArgument,
                      "all-reduce: rank " + std::to_string(r) +
                          " sends other buffer sizes than rank 0 (are the ranks "
                          "running different plans?)");
    if (total > INT_MAX)
      return Status(StatusCode::kInvalidArgument,
                    "all-reduce: a bucket of " + std::to_string(total) +
                        " elements is more than one MPI transfer takes (" +
                        std::to_string(INT_MAX) + "); use a smaller --bucket-mb");

    // Rank r owns the slice [lo(r), lo(r + 1)) of the bucket.
    auto lo = [&](int r) { return static_cast<int>(total * r / ranks_); };
    std::vector<int> sliceCounts(ranks_), sliceOffsets(ranks_);
    for (int r = 0; r < ranks_; ++r) {
      sliceOffsets[r] = lo(r);
      sliceCounts[r] = lo(r + 1) - lo(r);
    }
    int mySlice = sliceCounts[rank_];
    send_.resize(static_cast<size_t>(total));
    int64_t base = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      std::memcpy(send_.data() + base, in[i], counts[i] * sizeof(float));
      base += counts[i];
    }
    std::vector<int> recvCounts(ranks_, mySlice), recvOffsets(ranks_);
    for (int r = 0; r < ranks_; ++r)
      recvOffsets[r] = r * mySlice;
    copies_.resize(static_cast<size_t>(mySlice) * ranks_);
    char error[512] = {0};
    if (p_.allToAll(send_.data(), sliceCounts.data(), sliceOffsets.data(), copies_.data(),
                    recvCounts.data(), recvOffsets.data(), error, sizeof(error)))
      return mpiError(error);
    // The same additions in the same order as ThreadRankGroup.
    slice_.resize(static_cast<size_t>(mySlice));
    float scale = 1.0f / static_cast<float>(ranks_);
    for (int e = 0; e < mySlice; ++e) {
      float sum = 0;
      for (int r = 0; r < ranks_; ++r)
        sum += copies_[static_cast<size_t>(r) * mySlice + e];
      slice_[e] = sum * scale;
    }
    if (p_.allGatherFloats(slice_.data(), mySlice, send_.data(), sliceCounts.data(),
                           sliceOffsets.data(), error, sizeof(error)))
      return mpiError(error);
    base = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      std::memcpy(out[i], send_.data() + base, counts[i] * sizeof(float));
      base += counts[i];
    }
    return Status::ok();
  }

public:
  Status allGather(const void *mine, size_t bytes, void *all) override {
    if (bytes > INT_MAX)
      return Status(StatusCode::kInvalidArgument,
                    "all-gather of " + std::to_string(bytes) + " bytes: too many for MPI");
    char error[512] = {0};
    if (p_.allGather(mine, static_cast<int>(bytes), all, error, sizeof(error)))
      return mpiError(error);
    return Status::ok();
  }

  void abort(const std::string &why) override {
    std::cerr << "rank " << rank_ << " of " << ranks_ << " failed: " << why << std::endl;
    p_.abort(1);
  }

private:
  const Plugin &p_;
  int rank_, ranks_;
  std::vector<float> send_, copies_, slice_;
};

struct Joined {
  std::once_flag once;
  Status status = Status::ok();
  Plugin plugin;
  std::unique_ptr<MpiCommunicator> communicator;
  ProcessRankGroup group;
  bool left = false;
};

Joined &joined() {
  static Joined j;
  return j;
}

} // namespace

int launchedProcesses() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (int size = environmentInt(name); size >= 1)
      return size;
  return 1;
}

int launchedRank() {
  for (const char *name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (int rank = environmentInt(name); rank >= 0)
      return rank;
  return 0;
}

StatusOr<ProcessRankGroup> joinProcessRankGroup() {
  Joined &j = joined();
  std::call_once(j.once, [&] {
    auto plugin = loadPlugin();
    if (!plugin.isOk()) {
      j.status = plugin.status();
      return;
    }
    j.plugin = *plugin;
    int rank = 0, size = 1, localRank = 0, localSize = 1;
    char error[512] = {0};
    if (j.plugin.init(&rank, &size, &localRank, &localSize, error, sizeof(error))) {
      j.status = Status(StatusCode::kUnavailable, std::string("MPI: ") + error);
      return;
    }
    if (int launched = launchedProcesses(); launched != size) {
      j.status = Status(StatusCode::kUnavailable,
                        "the launcher started " + std::to_string(launched) +
                            " processes, and MPI (" + j.plugin.path + ") sees " +
                            std::to_string(size) +
                            ": was the job launched by another MPI than the one "
                            "libdlc_mpi.so was built with?");
      return;
    }
    j.communicator = std::make_unique<MpiCommunicator>(j.plugin, rank, size);
    j.group = {j.communicator.get(), localRank, localSize};
  });
  if (!j.status.isOk())
    return j.status;
  return j.group;
}

void leaveProcessRankGroup(bool failed) {
  Joined &j = joined();
  if (!j.communicator || j.left)
    return;
  j.left = true;
  if (failed)
    j.plugin.abort(1);
  char error[512] = {0};
  if (j.plugin.finalize(error, sizeof(error)))
    std::cerr << "MPI: " << error << std::endl;
}

} // namespace dlc::rt
