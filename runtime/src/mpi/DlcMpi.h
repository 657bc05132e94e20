/*===- DlcMpi.h - the C interface of dlc's MPI plugin -------------*- C -*-===//
 *
 * libdlc_mpi.so is the only part of dlc that links MPI. The runtime loads
 * it with dlopen when mpirun started the process (MpiRankGroup.cpp), so
 * dlc's programs run where no MPI is installed (the GPU machine) and only a
 * process that mpirun launched needs one. The interface is plain C with
 * fixed-size types, so the plugin and the runtime share no C++ ABI and the
 * runtime needs no mpi.h.
 *
 * Every function returns 0 on success, else writes a message of at most
 * `errorSize` bytes (with its terminating zero) to `error` and returns a
 * non-zero MPI error class.
 *
 *===----------------------------------------------------------------------===*/

#ifndef DLC_RUNTIME_MPI_DLCMPI_H
#define DLC_RUNTIME_MPI_DLCMPI_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a signature below changes. */
#define DLC_MPI_INTERFACE_VERSION 1

int dlcMpiInterfaceVersion(void);

/* Initializes MPI (MPI_THREAD_SERIALIZED: one thread calls at a time) unless
 * the program did, and duplicates MPI_COMM_WORLD for dlc's collectives. The
 * world size and this process's rank, and its rank among the processes of
 * its node (what picks its GPU). */
int dlcMpiInit(int *rank, int *size, int *localRank, int *localSize, char *error,
               size_t errorSize);

/* all[r * bytes .. (r + 1) * bytes) = rank r's `mine`, on every rank. */
int dlcMpiAllGather(const void *mine, int bytes, void *all, char *error, size_t errorSize);

/* MPI_Alltoallv of floats: rank s's send[sendOffsets[r] .. + sendCounts[r])
 * lands on rank r at recv[recvOffsets[s] ..]. */
int dlcMpiAllToAllFloats(const float *send, const int *sendCounts, const int *sendOffsets,
                         float *recv, const int *recvCounts, const int *recvOffsets,
                         char *error, size_t errorSize);

/* MPI_Allgatherv of floats: rank r's `count` floats at `mine` land at
 * all[offsets[r] ..] on every rank (counts[r] == rank r's count). */
int dlcMpiAllGatherFloats(const float *mine, int count, float *all, const int *counts,
                          const int *offsets, char *error, size_t errorSize);

/* Ends every process of the job (MPI_Abort); does not return. */
void dlcMpiAbort(int code);

/* MPI_Finalize, unless the program initialized MPI itself. */
int dlcMpiFinalize(char *error, size_t errorSize);

#ifdef __cplusplus
}
#endif

#endif /* DLC_RUNTIME_MPI_DLCMPI_H */
