//===- Networks.h - named interconnects for the step simulator --*- C++ -*-===//
//
// `--network NAME` picks how the GPUs of a node talk (NVLink or PCIe, at the
// GPU's own rate from GpuPeaks.h) and how nodes do (a NIC rate per node).
// `dlc-bench networks` lists them.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_NETWORKS_H
#define DLC_BENCH_NETWORKS_H

#include "GpuPeaks.h"

#include "dlc/runtime/perf/Network.h"

#include <ostream>
#include <string>
#include <vector>

namespace dlc::bench {

struct NetworkSpec {
  const char *name;
  const char *description;
  bool nvlink;         ///< within a node: NVLink (else PCIe)
  double nodeGbps;     ///< across nodes: line rate of a node's NICs together, Gb/s (0: one node)
  double nodeLatencyUs; ///< across nodes: latency of one algorithm step
  /// across nodes: NCCL's all-reduce bus bandwidth a node, GB/s, as
  /// nccl-tests measured it on such a cluster (its source in Networks.cpp);
  /// 0: nodeGbps x kNcclBusBandwidthFraction
  double nodeBusGBs = 0;
};

const std::vector<NetworkSpec> &knownNetworks();
/// Compared as findGpu compares names; null if unknown.
const NetworkSpec *findNetwork(const std::string &name);
std::string knownNetworkNames();

/// The fraction of a link's peak that NCCL's all-reduce achieves as bus
/// bandwidth (nccl-tests' busbw on large messages), for a link without a
/// measured figure: between the 0.48 of a V100 cluster's EDR NIC
/// (ib-100g-measured) and the 0.96 of a DGX A100's HDR NICs, near the 0.78
/// to 0.82 measured on NVLink (docs/CostModel.md has the sources).
constexpr double kNcclBusBandwidthFraction = 0.85;

/// The cluster of `gpus` GPUs, `gpusPerNode` a node, over `network`, for a
/// GPU `gpu`. Fails (false, `error`) when gpus is not a multiple of the node
/// size above one node, when the network has no inter-node level and more
/// than one node is needed, or when the GPU lacks NVLink the network wants.
bool makeCluster(const GpuPeak &gpu, const NetworkSpec &network, int64_t gpus,
                 int64_t gpusPerNode, rt::perf::Cluster &cluster, std::string &error);

/// `dlc-bench networks`: one network a line.
int runNetworks(std::ostream &os);

} // namespace dlc::bench

#endif // DLC_BENCH_NETWORKS_H
