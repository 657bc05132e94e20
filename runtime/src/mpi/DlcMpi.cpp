//===- DlcMpi.cpp - dlc's MPI plugin (libdlc_mpi.so) ----------------------===//
//
// Thin wrappers over MPI, the only code of dlc that includes mpi.h. The
// logic of dlc's all-reduce (rank-order sums, operand checks) lives in the
// runtime (MpiRankGroup.cpp), which loads this library at run time.
//
//===----------------------------------------------------------------------===//

#include "DlcMpi.h"

#include <mpi.h>

#include <cstdio>
#include <cstring>

namespace {

MPI_Comm comm = MPI_COMM_NULL;
bool initializedHere = false;

/// 0 for MPI_SUCCESS, else `call`'s failure in `error` and MPI's class.
int check(int code, const char *call, char *error, size_t errorSize) {
  if (code == MPI_SUCCESS)
    return 0;
  char text[MPI_MAX_ERROR_STRING] = {0};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    std::snprintf(text, sizeof(text), "MPI error %d", code);
  std::snprintf(error, errorSize, "%s failed: %s", call, text);
  int errorClass = code;
  MPI_Error_class(code, &errorClass);
  return errorClass ? errorClass : 1;
}

int notInitialized(char *error, size_t errorSize) {
  std::snprintf(error, errorSize, "dlcMpiInit was not called");
  return 1;
}

} // namespace

extern "C" {

int dlcMpiInterfaceVersion(void) { return DLC_MPI_INTERFACE_VERSION; }

int dlcMpiInit(int *rank, int *size, int *localRank, int *localSize, char *error,
               size_t errorSize) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    if (int e = check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided),
                      "MPI_Init_thread", error, errorSize))
      return e;
    initializedHere = true;
    if (provided < MPI_THREAD_SERIALIZED) {
      std::snprintf(error, errorSize,
                    "this MPI provides thread level %d; dlc calls it from a worker "
                    "thread and needs MPI_THREAD_SERIALIZED (%d)",
                    provided, MPI_THREAD_SERIALIZED);
      return 1;
    }
  }
  if (comm == MPI_COMM_NULL) {
    if (int e = check(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "MPI_Comm_dup", error, errorSize))
      return e;
    // Errors come back as codes, to be reported with the rank they hit.
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  }
  if (int e = check(MPI_Comm_rank(comm, rank), "MPI_Comm_rank", error, errorSize))
    return e;
  if (int e = check(MPI_Comm_size(comm, size), "MPI_Comm_size", error, errorSize))
    return e;
  MPI_Comm node = MPI_COMM_NULL;
  if (int e = check(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, *rank, MPI_INFO_NULL,
                                        &node),
                    "MPI_Comm_split_type", error, errorSize))
    return e;
  MPI_Comm_rank(node, localRank);
  MPI_Comm_size(node, localSize);
  MPI_Comm_free(&node);
  return 0;
}

int dlcMpiAllGather(const void *mine, int bytes, void *all, char *error, size_t errorSize) {
  if (comm == MPI_COMM_NULL)
    return notInitialized(error, errorSize);
  return check(MPI_Allgather(mine, bytes, MPI_BYTE, all, bytes, MPI_BYTE, comm),
               "MPI_Allgather", error, errorSize);
}

int dlcMpiAllToAllFloats(const float *send, const int *sendCounts, const int *sendOffsets,
                         float *recv, const int *recvCounts, const int *recvOffsets,
                         char *error, size_t errorSize) {
  if (comm == MPI_COMM_NULL)
    return notInitialized(error, errorSize);
  return check(MPI_Alltoallv(send, sendCounts, sendOffsets, MPI_FLOAT, recv, recvCounts,
                             recvOffsets, MPI_FLOAT, comm),
               "MPI_Alltoallv", error, errorSize);
}

int dlcMpiAllGatherFloats(const float *mine, int count, float *all, const int *counts,
                          const int *offsets, char *error, size_t errorSize) {
  if (comm == MPI_COMM_NULL)
    return notInitialized(error, errorSize);
  return check(MPI_Allgatherv(mine, count, MPI_FLOAT, all, counts, offsets, MPI_FLOAT, comm),
               "MPI_Allgatherv", error, errorSize);
}

void dlcMpiAbort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

int dlcMpiFinalize(char *error, size_t errorSize) {
  if (comm != MPI_COMM_NULL)
    MPI_Comm_free(&comm);
  if (!initializedHere)
    return 0;
  initializedHere = false;
  return check(MPI_Finalize(), "MPI_Finalize", error, errorSize);
}

} // extern "C"
