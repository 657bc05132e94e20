//===- Networks.cpp - named interconnects for the step simulator ----------===//
//
// Per-step latencies are NCCL's own model of the Simple-protocol ring
// (src/graph/tuning.cc, hwLat: NVLink 3.4 us, PCIe 5.7 us, network 9.6 us).
// Line rates are the standards': InfiniBand EDR 100 Gb/s, HDR 200, NDR 400
// per port; Ethernet 25 / 100 Gb/s.
//
//===----------------------------------------------------------------------===//

#include "Networks.h"

#include <cctype>
#include <iomanip>

namespace dlc::bench {

namespace {
constexpr double kNvlinkLatency = 3.4e-6, kPcieLatency = 5.7e-6;
constexpr double kNetLatencyUs = 9.6;
} // namespace

const std::vector<NetworkSpec> &knownNetworks() {
  static const std::vector<NetworkSpec> table = {
      {"nvlink", "one node, GPUs connected by NVLink (NVSwitch or hybrid cube-mesh)", true, 0,
       0},
      {"pcie", "one node, GPUs connected through PCIe", false, 0, 0},
      // The published ResNet-50 tables' cluster (../shared/data/resnet50-scaling.md).
      {"ib-100g", "nodes of NVLink-connected GPUs, InfiniBand EDR 100 Gb/s, one NIC a node",
       true, 100, kNetLatencyUs},
      // The same cluster at the bus bandwidth nccl-tests measured on 4 nodes
      // of 8 V100 with one 100 Gb/s EDR NIC each: "about 6 GB/s"
      // (NVIDIA/nccl-tests#29, NCCL 2.4.7, CUDA 10.0; NVIDIA/nccl#465, 4
      // nodes, NCCL 2.4.8 and 2.5.7: 6 GB/s).
      {"ib-100g-measured",
       "as ib-100g, at the 6 GB/s all-reduce bus bandwidth nccl-tests measured on 4 x 8 V100 "
       "with one EDR NIC a node",
       true, 100, kNetLatencyUs, 6},
      {"ib-200g", "nodes of NVLink-connected GPUs, InfiniBand HDR 200 Gb/s, one NIC a node",
       true, 200, kNetLatencyUs},
      {"ib-800g", "nodes of NVLink-connected GPUs, 4 x InfiniBand HDR 200 Gb/s a node", true,
       800, kNetLatencyUs},
      {"ib-3200g", "nodes of NVLink-connected GPUs, 8 x InfiniBand NDR 400 Gb/s a node (DGX H100)",
       true, 3200, kNetLatencyUs},
      {"eth-25g", "nodes of NVLink-connected GPUs, 25 Gb/s Ethernet (RoCE) a node", true, 25,
       kNetLatencyUs},
      {"eth-100g", "nodes of NVLink-connected GPUs, 100 Gb/s Ethernet (RoCE) a node", true, 100,
       kNetLatencyUs},
      {"pcie-eth-25g", "nodes of PCIe-connected GPUs, 25 Gb/s Ethernet a node", false, 25,
       kNetLatencyUs},
  };
  return table;
}

const NetworkSpec *findNetwork(const std::string &name) {
  return findByName(knownNetworks(), name);
}

std::string knownNetworkNames() { return joinNames(knownNetworks()); }

bool makeCluster(const GpuPeak &gpu, const NetworkSpec &network, int64_t gpus,
                 int64_t gpusPerNode, rt::perf::Cluster &cluster, std::string &error) {
  cluster = rt::perf::Cluster();
  if (network.nvlink && gpu.nvlinkGBs <= 0) {
    error = "--network " + std::string(network.name) + " connects GPUs by NVLink; " +
            gpu.name + " has none (try pcie or pcie-eth-25g)";
    return false;
  }
  cluster.gpusPerNode = std::min(gpus, gpusPerNode);
  cluster.nodes = (gpus + gpusPerNode - 1) / gpusPerNode;
  if (cluster.nodes > 1 && gpus % gpusPerNode != 0) {
    error = std::to_string(gpus) + " GPUs do not fill nodes of " +
            std::to_string(gpusPerNode) + " (--gpus-per-node)";
    return false;
  }
  if (cluster.nodes > 1 && network.nodeGbps <= 0) {
    error = std::to_string(gpus) + " GPUs need " + std::to_string(cluster.nodes) +
            " nodes of " + std::to_string(gpusPerNode) + "; --network " + network.name +
            " is one node";
    return false;
  }
  double intra = network.nvlink ? gpu.nvlinkGBs : gpu.pcieGBs;
  cluster.intraNode = {network.nvlink ? "nvlink" : "pcie",
                       intra * 1e9 * kNcclBusBandwidthFraction,
                       network.nvlink ? kNvlinkLatency : kPcieLatency};
  double busBandwidth = network.nodeBusGBs > 0
                            ? network.nodeBusGBs * 1e9
                            : network.nodeGbps / 8 * 1e9 * kNcclBusBandwidthFraction;
  cluster.interNode = {network.name, busBandwidth, network.nodeLatencyUs * 1e-6};
  return true;
}

int runNetworks(std::ostream &os) {
  os << std::left << std::setw(18) << "network" << std::setw(8) << "in node" << std::right
     << std::setw(10) << "node Gb/s" << std::setw(11) << "busbw GB/s" << std::setw(11)
     << "latency us" << "  description\n";
  for (const NetworkSpec &n : knownNetworks()) {
    os << std::left << std::setw(18) << n.name << std::setw(8) << (n.nvlink ? "nvlink" : "pcie")
       << std::right << std::setw(10);
    if (n.nodeGbps > 0)
      os << n.nodeGbps << std::setw(11)
         << (n.nodeBusGBs > 0 ? n.nodeBusGBs : n.nodeGbps / 8 * kNcclBusBandwidthFraction)
         << std::setw(11) << n.nodeLatencyUs;
    else
      os << "-" << std::setw(11) << "-" << std::setw(11) << "-";
    os << "  " << n.description << "\n";
  }
  os << "(busbw: NCCL's all-reduce bus bandwidth a node, measured where cited, else "
     << kNcclBusBandwidthFraction * 100 << "% of the line rate, as within a node)\n";
  return 0;
}

} // namespace dlc::bench
