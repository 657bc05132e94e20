//===- Network.h - GPUs, links and the cost of an all-reduce ----*- C++ -*-===//
//
// The alpha-beta model of a gradient all-reduce on N = nodes x GPUs per node:
// a message of b bytes over a link costs alpha + b / beta. A link level's
// beta is the bus bandwidth NCCL achieves on it (nccl-tests' "busbw"), in
// bytes per second per direction: per GPU within a node, per node (all its
// NICs together) across nodes. Its alpha is the latency of one step of the
// algorithm over that level.
//
// Algorithms (docs/CostModel.md derives each):
//   ring              NCCL's flat ring over all N GPUs: 2(N-1) steps, each
//                     moving bytes/N over every link at once, so the slowest
//                     level sets both terms:
//                       2(N-1)/N x bytes / beta_min + 2(N-1) x alpha_max
//   hierarchical-ring reduce-scatter in each node, a ring across the nodes
//                     over each node's NICs, all-gather in each node
//   tree              NCCL's double binary tree across nodes, a chain within
//                     one: 2 x bytes / beta_min, and a latency of
//                     2(log2(nodes) alpha_inter + (g-1) alpha_intra)
//   auto              what NCCL's tuner does: the faster of ring and tree
//                     for each message on several nodes (tree's latency
//                     grows with log2(nodes), ring's with N: small buckets
//                     go by tree), the ring on one node
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_PERF_NETWORK_H
#define DLC_RUNTIME_PERF_NETWORK_H

#include <cstdint>
#include <optional>
#include <string>

namespace dlc::rt::perf {

/// One level of the interconnect.
struct LinkLevel {
  std::string name;           ///< "nvlink", "ib-100g", ...
  double busBandwidth = 0;    ///< bytes/s per direction (see the file comment)
  double latency = 0;         ///< seconds per algorithm step over this level
};

/// N = nodes x gpusPerNode GPUs; `interNode` matters only with several nodes.
struct Cluster {
  int64_t nodes = 1, gpusPerNode = 1;
  LinkLevel intraNode, interNode;

  int64_t gpus() const { return nodes * gpusPerNode; }
};

enum class AllReduceAlgorithm { kRing, kHierarchicalRing, kTree, kAuto };
const char *algorithmName(AllReduceAlgorithm algorithm);
std::optional<AllReduceAlgorithm> parseAlgorithm(const std::string &name);

/// Seconds one all-reduce of `bytes` bytes per rank takes on `cluster`
/// (0 on one GPU).
double allReduceSeconds(double bytes, const Cluster &cluster, AllReduceAlgorithm algorithm);

} // namespace dlc::rt::perf

#endif // DLC_RUNTIME_PERF_NETWORK_H
