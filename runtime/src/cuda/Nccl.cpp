//===- Nccl.cpp - NCCL all-reduces, loaded at run time --------------------===//

#include "dlc/runtime/cuda/Nccl.h"

#include "Symbols.h"
#include "dlc/runtime/Device.h"
#include "dlc/runtime/cuda/NcclWait.h"

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdlib>
#include <dlfcn.h>
#include <iostream>
#include <mutex>
#include <type_traits>
#include <utility>

// Only to check dlc's copy of its constants; dlc never links NCCL.
#if __has_include(<nccl.h>)
#include <nccl.h>
#endif

namespace dlc::rt::cuda {

namespace {

// The few declarations of nccl.h dlc uses (checked against the header
// where the build has it).
using ncclResult = int;
using ncclComm = void *;
constexpr int kNcclFloat16 = 6, kNcclFloat32 = 7, kNcclBfloat16 = 9;
constexpr int kNcclAvg = 4;
/// ncclAvg appeared in NCCL 2.10.
constexpr int kMinimumVersion = 21000;
/// ncclUniqueId: NCCL_UNIQUE_ID_BYTES opaque bytes, passed by value.
struct UniqueId {
  char internal[128];
};
/// ncclConfig_t as NCCL 2.14's nccl.h declares it (ncclConfig_v21400), the
/// prefix every later one keeps (checked against 2.30.7's src/nccl.h.in).
/// NCCL reads `version` to know which fields the caller set (init.cc,
/// parseCommConfig), so the fields added after 2.14 keep their defaults.
struct Config {
  size_t size = sizeof(Config);
  unsigned int magic = 0xcafebeef;  // NCCL_CONFIG_INITIALIZER's
  unsigned int version = 21400;     // NCCL_VERSION(2, 14, 0)
  int blocking = INT_MIN;           // NCCL_CONFIG_UNDEF_INT: NCCL's default
};
/// ncclCommInitRankConfig and non-blocking communicators appeared in 2.14.
constexpr int kNonBlockingVersion = 21400;

#ifdef NCCL_MAJOR
static_assert(kNcclFloat16 == ncclFloat16 && kNcclFloat32 == ncclFloat32 &&
                  kNcclBfloat16 == ncclBfloat16 && kNcclAvg == ncclAvg,
              "nccl.h disagrees with dlc's copy of its constants");
static_assert(sizeof(UniqueId) == NCCL_UNIQUE_ID_BYTES,
              "nccl.h disagrees with dlc's size of ncclUniqueId");
static_assert(kNcclSuccess == ncclSuccess && kNcclInProgress == ncclInProgress,
              "nccl.h disagrees with dlc's ncclResult_t values");
#if NCCL_VERSION_CODE >= 21400
static_assert(offsetof(Config, magic) == offsetof(ncclConfig_t, magic) &&
                  offsetof(Config, version) == offsetof(ncclConfig_t, version) &&
                  offsetof(Config, blocking) == offsetof(ncclConfig_t, blocking),
              "nccl.h disagrees with dlc's layout of ncclConfig_t");
constexpr ncclConfig_t kHeaderConfig = NCCL_CONFIG_INITIALIZER;
static_assert(kHeaderConfig.magic == Config().magic &&
                  kHeaderConfig.blocking == Config().blocking,
              "nccl.h disagrees with dlc's NCCL_CONFIG_INITIALIZER");
#endif
#endif

struct Library {
  void *handle = nullptr;
  std::string error; // why there is none
  std::string name;
  ncclResult (*getVersion)(int *) = nullptr;
  ncclResult (*commInitAll)(ncclComm *, int, const int *) = nullptr;
  ncclResult (*getUniqueId)(UniqueId *) = nullptr;
  ncclResult (*commInitRank)(ncclComm *, int, UniqueId, int) = nullptr;
  /// 2.14 and later; null before.
  ncclResult (*commInitRankConfig)(ncclComm *, int, UniqueId, int, Config *) = nullptr;
  /// 2.28.7 and later; null before.
  ncclResult (*commRevoke)(ncclComm, int) = nullptr;
  ncclResult (*commDestroy)(ncclComm) = nullptr;
  ncclResult (*commAbort)(ncclComm) = nullptr;
  ncclResult (*commGetAsyncError)(ncclComm, ncclResult *) = nullptr;
  ncclResult (*allReduce)(const void *, void *, size_t, int, int, ncclComm, void *) = nullptr;
  ncclResult (*groupStart)() = nullptr;
  ncclResult (*groupEnd)() = nullptr;
  const char *(*errorString)(ncclResult) = nullptr;

  std::string describe(const char *call, ncclResult r) const {
    return std::string(call) + " failed: " + (errorString ? errorString(r) : "error") +
           " (NCCL error " + std::to_string(r) + ")";
  }
};

/// NCCL, loaded once per process.
const Library &library() {
  static Library lib;
  static std::once_flag once;
  std::call_once(once, [] {
    const char *override = std::getenv("DLC_NCCL_LIBRARY");
    lib.name = override && *override ? override : "libnccl.so.2";
    lib.handle = dlopen(lib.name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib.handle) {
      const char *why = dlerror();
      lib.error = "NCCL is not available (" + std::string(why ? why : lib.name) +
                  "; set DLC_NCCL_LIBRARY to its libnccl.so.2, e.g. Python's "
                  "site-packages/nvidia/nccl/lib/libnccl.so.2)";
      return;
    }
    std::string missing;
    findSymbol(lib.handle, lib.getVersion, "ncclGetVersion", missing);
    findSymbol(lib.handle, lib.commInitAll, "ncclCommInitAll", missing);
    findSymbol(lib.handle, lib.getUniqueId, "ncclGetUniqueId", missing);
    findSymbol(lib.handle, lib.commInitRank, "ncclCommInitRank", missing);
    findSymbol(lib.handle, lib.commDestroy, "ncclCommDestroy", missing);
    findSymbol(lib.handle, lib.commAbort, "ncclCommAbort", missing);
    findSymbol(lib.handle, lib.commGetAsyncError, "ncclCommGetAsyncError", missing);
    findSymbol(lib.handle, lib.allReduce, "ncclAllReduce", missing);
    findSymbol(lib.handle, lib.groupStart, "ncclGroupStart", missing);
    findSymbol(lib.handle, lib.groupEnd, "ncclGroupEnd", missing);
    findSymbol(lib.handle, lib.errorString, "ncclGetErrorString", missing);
    if (!missing.empty())
      lib.error = lib.name + " lacks " + missing;
    std::string newer; // what an older NCCL lacks is used where it exists
    findSymbol(lib.handle, lib.commInitRankConfig, "ncclCommInitRankConfig", newer);
    findSymbol(lib.handle, lib.commRevoke, "ncclCommRevoke", newer);
  });
  return lib;
}

Status unavailable(const std::string &why) { return Status(StatusCode::kUnavailable, why); }

StatusOr<int> ncclTypeOf(DType dtype) {
  switch (dtype) {
  case DType::kF32:
    return kNcclFloat32;
  case DType::kF16:
    return kNcclFloat16;
  case DType::kBF16:
    return kNcclBfloat16;
  default:
    return Status(StatusCode::kInvalidArgument,
                  std::string("all-reduce of ") + dtypeName(dtype) +
                      " buffers: only float types are averaged");
  }
}

} // namespace

StatusOr<int> ncclVersion() {
  const Library &lib = library();
  if (!lib.error.empty())
    return unavailable(lib.error);
  int version = 0;
  if (ncclResult r = lib.getVersion(&version); r != 0)
    return unavailable(lib.describe("ncclGetVersion", r));
  return version;
}

std::string ncclVersionName(int code) {
  // NCCL_VERSION(X, Y, Z): X * 10000 + Y * 100 + Z since 2.9, X * 1000 + Y
  // * 100 + Z before.
  int major = code >= 10000 ? code / 10000 : code / 1000;
  int rest = code >= 10000 ? code % 10000 : code % 1000;
  return std::to_string(major) + "." + std::to_string(rest / 100) + "." +
         std::to_string(rest % 100);
}

namespace {

/// NCCL is loaded and new enough for dlc's all-reduce.
Status checkUsable() {
  auto version = ncclVersion();
  if (!version.isOk())
    return version.status();
  if (*version < kMinimumVersion)
    return unavailable("NCCL " + ncclVersionName(*version) +
                       " lacks ncclAvg, which the all-reduce uses: dlc needs 2.10 or later");
  return Status::ok();
}

/// Whether communicators are created non-blocking: NCCL 2.14 or later, and
/// DLC_NCCL_BLOCKING not 1. Says once per process when they are not, since
/// then a rank that fails or never joins can hang the others.
bool nonBlocking() {
  const Library &lib = library();
  std::string why;
  if (!lib.commInitRankConfig) {
    auto version = ncclVersion();
    why = "NCCL " + (version.isOk() ? ncclVersionName(*version) : lib.name) +
          " lacks ncclCommInitRankConfig (" + ncclVersionName(kNonBlockingVersion) + ")";
  } else if (const char *env = std::getenv("DLC_NCCL_BLOCKING"); env && std::string(env) == "1") {
    why = "DLC_NCCL_BLOCKING=1";
  }
  if (why.empty())
    return true;
  static std::once_flag told;
  std::call_once(told, [&] {
    std::cerr << ("dlc: " + why +
                  ": NCCL communicators block, so a rank that fails or never joins can "
                  "hang the others\n");
  });
  return false;
}

/// The queries of a wait on `comm`'s asynchronous state, aborting it on
/// failure; `state` reads the state.
NcclWaitQueries queriesOf(std::function<StatusOr<int>()> state,
                          std::function<void()> abort) {
  const Library &lib = library();
  NcclWaitQueries q;
  q.ncclState = std::move(state);
  q.describe = [&lib](int r) -> std::string {
    return lib.errorString ? lib.errorString(r) : "error";
  };
  q.abort = std::move(abort);
  return q;
}

/// Waits until the non-blocking `comm` of `rank` is ready; aborts it when
/// it is not (an error, no peer within the timeout, a failed query).
Status waitUntilReady(ncclComm comm, int rank, const std::string &what, double timeout) {
  const Library &lib = library();
  auto state = [&lib, comm]() -> StatusOr<int> {
    ncclResult s = 0;
    if (ncclResult r = lib.commGetAsyncError(comm, &s); r != 0)
      return Status(StatusCode::kInternal, lib.describe("ncclCommGetAsyncError", r));
    return s;
  };
  // A communicator still being created has captured nothing: aborting it
  // cannot wait for a CUDA graph.
  bool aborted = false;
  auto abort = [&lib, comm, &aborted] {
    aborted = true;
    (void)lib.commAbort(comm);
  };
  Status ready = waitPolling(queriesOf(state, abort), rank, what, {timeout});
  if (!ready.isOk() && !aborted)
    abort();
  return ready;
}

std::string rankOn(int rank, int ranks, int device) {
  return "rank " + std::to_string(rank) + " of " + std::to_string(ranks) + " on GPU " +
         std::to_string(device);
}

} // namespace

StatusOr<std::string> ncclUniqueId() {
  if (Status s = checkUsable(); !s.isOk())
    return s;
  UniqueId id{};
  if (ncclResult r = library().getUniqueId(&id); r != 0)
    return unavailable(library().describe("ncclGetUniqueId", r));
  return std::string(id.internal, sizeof(id.internal));
}

StatusOr<std::unique_ptr<NcclCommunicator>> createNcclRank(int device, int ranks, int rank,
                                                           const std::string &uniqueId) {
  if (Status s = checkUsable(); !s.isOk())
    return s;
  auto timeout = ncclTimeoutSeconds();
  if (!timeout.isOk())
    return timeout.status();
  UniqueId id{};
  if (uniqueId.size() != sizeof(id.internal))
    return Status(StatusCode::kInvalidArgument,
                  "an NCCL unique id is " + std::to_string(sizeof(id.internal)) +
                      " bytes, got " + std::to_string(uniqueId.size()));
  if (rank < 0 || rank >= ranks)
    return Status(StatusCode::kInvalidArgument, "NCCL rank " + std::to_string(rank) +
                                                    " of " + std::to_string(ranks));
  std::copy(uniqueId.begin(), uniqueId.end(), id.internal);
  const Library &lib = library();
  ncclComm comm = nullptr;
  bool unblocked = nonBlocking();
  if (!unblocked) {
    if (ncclResult r = lib.commInitRank(&comm, ranks, id, rank); r != 0)
      return unavailable(lib.describe("ncclCommInitRank", r) + " for " +
                         rankOn(rank, ranks, device));
  } else {
    Config config;
    config.blocking = 0;
    if (ncclResult r = lib.commInitRankConfig(&comm, ranks, id, rank, &config);
        r != 0 && r != kNcclInProgress) {
      if (comm)
        (void)lib.commAbort(comm);
      return unavailable(lib.describe("ncclCommInitRankConfig", r) + " for " +
                         rankOn(rank, ranks, device));
    }
    if (Status s = waitUntilReady(comm, rank, "its NCCL communicator on GPU " +
                                                  std::to_string(device), *timeout);
        !s.isOk())
      return Status(StatusCode::kUnavailable, s.message());
  }
  return std::unique_ptr<NcclCommunicator>(
      new NcclCommunicator(comm, rank, ranks, device, unblocked, *timeout));
}

StatusOr<std::vector<std::unique_ptr<NcclCommunicator>>>
createNcclGroup(const std::vector<int> &devices) {
  if (Status s = checkUsable(); !s.isOk())
    return s;
  if (devices.empty())
    return Status(StatusCode::kInvalidArgument, "an NCCL group of no devices");
  auto timeout = ncclTimeoutSeconds();
  if (!timeout.isOk())
    return timeout.status();
  const Library &lib = library();
  int n = static_cast<int>(devices.size());
  std::vector<ncclComm> comms(devices.size(), nullptr);
  bool unblocked = nonBlocking();
  if (!unblocked) {
    if (ncclResult r = lib.commInitAll(comms.data(), n, devices.data()); r != 0)
      return unavailable(lib.describe("ncclCommInitAll", r) + " over " + std::to_string(n) +
                         " GPUs");
  } else {
    // ncclCommInitAll has no config form; NCCL's documentation creates the
    // group as one ncclCommInitRankConfig per device inside a group call.
    UniqueId id{};
    if (ncclResult r = lib.getUniqueId(&id); r != 0)
      return unavailable(lib.describe("ncclGetUniqueId", r));
    auto abortAll = [&] {
      for (ncclComm &comm : comms)
        if (comm)
          (void)lib.commAbort(std::exchange(comm, nullptr));
    };
    Status failed = Status::ok();
    if (ncclResult r = lib.groupStart(); r != 0)
      return unavailable(lib.describe("ncclGroupStart", r));
    for (int i = 0; i < n && failed.isOk(); ++i) {
      Config config;
      config.blocking = 0;
      if (Status s = selectCudaDevice(devices[i]); !s.isOk())
        failed = unavailable(rankOn(i, n, devices[i]) + ": " + s.message());
      else if (ncclResult r = lib.commInitRankConfig(&comms[i], n, id, i, &config);
               r != 0 && r != kNcclInProgress)
        failed = unavailable(lib.describe("ncclCommInitRankConfig", r) + " for " +
                             rankOn(i, n, devices[i]));
    }
    // The group is closed whatever failed inside it.
    ncclResult ended = lib.groupEnd();
    if (failed.isOk() && ended != 0 && ended != kNcclInProgress)
      failed = unavailable(lib.describe("ncclGroupEnd", ended) + " creating communicators " +
                           "over " + std::to_string(n) + " GPUs");
    for (int i = 0; i < n && failed.isOk(); ++i) {
      failed = waitUntilReady(comms[i], i,
                              "its NCCL communicator on GPU " + std::to_string(devices[i]),
                              *timeout);
      if (!failed.isOk())
        comms[i] = nullptr; // waitUntilReady aborted it
    }
    if (!failed.isOk()) {
      abortAll();
      return Status(StatusCode::kUnavailable, failed.message());
    }
  }
  std::vector<std::unique_ptr<NcclCommunicator>> group;
  for (int r = 0; r < n; ++r)
    group.push_back(std::unique_ptr<NcclCommunicator>(
        new NcclCommunicator(comms[r], r, n, devices[r], unblocked, *timeout)));
  return group;
}

NcclCommunicator::~NcclCommunicator() {
  std::lock_guard<std::mutex> lock(freeing_);
  if (freed_)
    return;
  // A revoked communicator is aborted, not destroyed: its peers may be
  // gone. Either waits for the CUDA graphs that captured it, which the
  // executors destroyed before.
  if (aborted_.load())
    (void)library().commAbort(comm_);
  else
    (void)library().commDestroy(comm_);
}

Status NcclCommunicator::allReduceMean(const std::vector<DeviceBuffer> &bucket,
                                       void *stream) {
  const Library &lib = library();
  if (aborted())
    return Status(StatusCode::kInternal,
                  "rank " + std::to_string(rank_) + ": the NCCL group was aborted");
  std::vector<int> types;
  for (const DeviceBuffer &b : bucket) {
    auto type = ncclTypeOf(b.dtype);
    if (!type.isOk())
      return type.status();
    types.push_back(*type);
  }
  if (ncclResult r = lib.groupStart(); r != 0)
    return Status(StatusCode::kInternal, lib.describe("ncclGroupStart", r));
  ncclResult failed = 0;
  for (size_t i = 0; i < bucket.size() && (failed == 0 || failed == kNcclInProgress); ++i)
    failed = lib.allReduce(bucket[i].in, bucket[i].out, static_cast<size_t>(bucket[i].count),
                           types[i], kNcclAvg, comm_, stream);
  // The group is closed whatever failed inside it.
  ncclResult ended = lib.groupEnd();
  if (failed != 0 && failed != kNcclInProgress)
    return Status(StatusCode::kInternal,
                  lib.describe("ncclAllReduce", failed) + " on rank " + std::to_string(rank_));
  if (ended != 0 && ended != kNcclInProgress)
    return Status(StatusCode::kInternal,
                  lib.describe("ncclGroupEnd", ended) + " on rank " + std::to_string(rank_));
  // A non-blocking group enqueues its kernels from NCCL's own thread: they
  // must be on the stream (or in the graph being captured) before the
  // caller enqueues what follows them.
  if (ended == kNcclInProgress)
    return wait({}, "its all-reduce to be enqueued");
  return Status::ok();
}

void NcclCommunicator::abort() {
  // Exactly one caller aborts; the others see aborted().
  if (aborted_.exchange(true))
    return;
  const Library &lib = library();
  // ncclCommRevoke stops the in-flight collectives without waiting for the
  // CUDA graphs that captured them, which ncclCommAbort does (always
  // blocking, whatever the config): the destructor frees the communicator
  // once the executors have destroyed their graphs.
  if (lib.commRevoke) {
    ncclResult r = lib.commRevoke(comm_, 0);
    if (r == 0 || r == kNcclInProgress)
      return;
  }
  std::lock_guard<std::mutex> lock(freeing_);
  (void)lib.commAbort(comm_);
  freed_ = true;
}

StatusOr<int> NcclCommunicator::state() {
  // A rank's thread polls while another rank's thread may be aborting: a
  // communicator being freed is reported as in progress, never waited on.
  std::unique_lock<std::mutex> lock(freeing_, std::try_to_lock);
  if (!lock.owns_lock())
    return kNcclInProgress;
  if (freed_)
    return kNcclSuccess;
  const Library &lib = library();
  ncclResult s = 0;
  if (ncclResult r = lib.commGetAsyncError(comm_, &s); r != 0)
    return Status(StatusCode::kInternal, lib.describe("ncclCommGetAsyncError", r));
  return s;
}

Status NcclCommunicator::asyncError() {
  auto s = state();
  if (!s.isOk())
    return s.status();
  if (*s != kNcclSuccess && *s != kNcclInProgress)
    return Status(StatusCode::kInternal, "rank " + std::to_string(rank_) + ": NCCL: " +
                                             (library().errorString
                                                  ? library().errorString(*s)
                                                  : "error"));
  return Status::ok();
}

Status NcclCommunicator::wait(const std::function<StatusOr<bool>()> &done,
                              const std::string &what) {
  NcclWaitQueries q = queriesOf([this] { return state(); }, [this] { abort(); });
  q.cudaDone = done;
  DLC_RETURN_IF_ERROR(waitPolling(q, rank_, what, {timeoutSeconds_}));
  // Another rank's failure aborted the group: the work ended, but not with
  // the mean of every rank.
  if (aborted())
    return Status(StatusCode::kInternal, "rank " + std::to_string(rank_) + ": " + what +
                                             ": the NCCL group was aborted (another rank "
                                             "failed)");
  return Status::ok();
}

} // namespace dlc::rt::cuda
