//===- Nccl.cpp - NCCL all-reduces, loaded at run time --------------------===//

#include "dlc/runtime/cuda/Nccl.h"

#include "Symbols.h"

#include <algorithm>
#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <type_traits>

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

#ifdef NCCL_MAJOR
static_assert(kNcclFloat16 == ncclFloat16 && kNcclFloat32 == ncclFloat32 &&
                  kNcclBfloat16 == ncclBfloat16 && kNcclAvg == ncclAvg,
              "nccl.h disagrees with dlc's copy of its constants");
static_assert(sizeof(UniqueId) == NCCL_UNIQUE_ID_BYTES,
              "nccl.h disagrees with dlc's size of ncclUniqueId");
#endif

struct Library {
  void *handle = nullptr;
  std::string error; // why there is none
  std::string name;
  ncclResult (*getVersion)(int *) = nullptr;
  ncclResult (*commInitAll)(ncclComm *, int, const int *) = nullptr;
  ncclResult (*getUniqueId)(UniqueId *) = nullptr;
  ncclResult (*commInitRank)(ncclComm *, int, UniqueId, int) = nullptr;
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
  UniqueId id{};
  if (uniqueId.size() != sizeof(id.internal))
    return Status(StatusCode::kInvalidArgument,
                  "an NCCL unique id is " + std::to_string(sizeof(id.internal)) +
                      " bytes, got " + std::to_string(uniqueId.size()));
  if (rank < 0 || rank >= ranks)
    return Status(StatusCode::kInvalidArgument, "NCCL rank " + std::to_string(rank) +
                                                    " of " + std::to_string(ranks));
  std::copy(uniqueId.begin(), uniqueId.end(), id.internal);
  ncclComm comm = nullptr;
  if (ncclResult r = library().commInitRank(&comm, ranks, id, rank); r != 0)
    return Status(StatusCode::kUnavailable,
                  library().describe("ncclCommInitRank", r) + " for rank " +
                      std::to_string(rank) + " of " + std::to_string(ranks) + " on GPU " +
                      std::to_string(device));
  return std::unique_ptr<NcclCommunicator>(new NcclCommunicator(comm, rank, ranks, device));
}

StatusOr<std::vector<std::unique_ptr<NcclCommunicator>>>
createNcclGroup(const std::vector<int> &devices) {
  if (Status s = checkUsable(); !s.isOk())
    return s;
  if (devices.empty())
    return Status(StatusCode::kInvalidArgument, "an NCCL group of no devices");
  const Library &lib = library();
  std::vector<ncclComm> comms(devices.size(), nullptr);
  if (ncclResult r = lib.commInitAll(comms.data(), static_cast<int>(devices.size()),
                                     devices.data());
      r != 0)
    return Status(StatusCode::kUnavailable,
                  lib.describe("ncclCommInitAll", r) + " over " +
                      std::to_string(devices.size()) + " GPUs");
  std::vector<std::unique_ptr<NcclCommunicator>> group;
  for (size_t r = 0; r < devices.size(); ++r)
    group.push_back(std::unique_ptr<NcclCommunicator>(new NcclCommunicator(
        comms[r], static_cast<int>(r), static_cast<int>(devices.size()), devices[r])));
  return group;
}

NcclCommunicator::~NcclCommunicator() {
  if (void *comm = comm_.load())
    (void)library().commDestroy(comm);
}

Status NcclCommunicator::allReduceMean(const std::vector<DeviceBuffer> &bucket,
                                       void *stream) {
  const Library &lib = library();
  void *comm = comm_.load();
  if (!comm)
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
  for (size_t i = 0; i < bucket.size() && failed == 0; ++i)
    failed = lib.allReduce(bucket[i].in, bucket[i].out, static_cast<size_t>(bucket[i].count),
                           types[i], kNcclAvg, comm, stream);
  // The group is closed whatever failed inside it.
  ncclResult ended = lib.groupEnd();
  if (failed != 0)
    return Status(StatusCode::kInternal,
                  lib.describe("ncclAllReduce", failed) + " on rank " + std::to_string(rank_));
  if (ended != 0)
    return Status(StatusCode::kInternal,
                  lib.describe("ncclGroupEnd", ended) + " on rank " + std::to_string(rank_));
  return Status::ok();
}

void NcclCommunicator::abort() {
  // Exactly one caller aborts; the others see null.
  if (void *comm = comm_.exchange(nullptr))
    (void)library().commAbort(comm);
}

Status NcclCommunicator::asyncError() {
  const Library &lib = library();
  void *comm = comm_.load();
  if (!comm)
    return Status::ok();
  ncclResult state = 0;
  if (ncclResult r = lib.commGetAsyncError(comm, &state); r != 0)
    return Status(StatusCode::kInternal, lib.describe("ncclCommGetAsyncError", r));
  if (state != 0)
    return Status(StatusCode::kInternal,
                  "rank " + std::to_string(rank_) + ": NCCL: " +
                      (lib.errorString ? lib.errorString(state) : "error"));
  return Status::ok();
}

} // namespace dlc::rt::cuda
