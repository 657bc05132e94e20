//===- Network.cpp - the cost of an all-reduce ----------------------------===//

#include "dlc/runtime/perf/Network.h"

#include <algorithm>
#include <cmath>

namespace dlc::rt::perf {

const char *algorithmName(AllReduceAlgorithm algorithm) {
  switch (algorithm) {
  case AllReduceAlgorithm::kRing:
    return "ring";
  case AllReduceAlgorithm::kHierarchicalRing:
    return "hierarchical-ring";
  case AllReduceAlgorithm::kTree:
    return "tree";
  case AllReduceAlgorithm::kAuto:
    return "auto";
  }
  return "ring";
}

std::optional<AllReduceAlgorithm> parseAlgorithm(const std::string &name) {
  for (AllReduceAlgorithm a : {AllReduceAlgorithm::kRing, AllReduceAlgorithm::kHierarchicalRing,
                               AllReduceAlgorithm::kTree, AllReduceAlgorithm::kAuto})
    if (name == algorithmName(a))
      return a;
  return std::nullopt;
}

namespace {

/// A ring all-reduce of `bytes` over `n` members: reduce-scatter then
/// all-gather, each n-1 steps of bytes/n.
double ring(double bytes, int64_t n, double bandwidth, double latency) {
  if (n <= 1)
    return 0;
  double steps = 2.0 * static_cast<double>(n - 1);
  return steps / static_cast<double>(n) * bytes / bandwidth + steps * latency;
}

} // namespace

double allReduceSeconds(double bytes, const Cluster &c, AllReduceAlgorithm algorithm) {
  int64_t n = c.gpus();
  if (n <= 1)
    return 0;
  bool multiNode = c.nodes > 1;
  double slowest = multiNode ? std::min(c.intraNode.busBandwidth, c.interNode.busBandwidth)
                             : c.intraNode.busBandwidth;
  double latest = multiNode ? std::max(c.intraNode.latency, c.interNode.latency)
                            : c.intraNode.latency;
  switch (algorithm) {
  case AllReduceAlgorithm::kRing:
    return ring(bytes, n, slowest, latest);
  case AllReduceAlgorithm::kHierarchicalRing: {
    // Within a node: reduce-scatter and all-gather are a ring's two halves.
    double g = static_cast<double>(c.gpusPerNode);
    double inNode = c.gpusPerNode > 1 ? ring(bytes, c.gpusPerNode, c.intraNode.busBandwidth,
                                             c.intraNode.latency)
                                      : 0;
    // Across nodes each GPU all-reduces its 1/g shard with its peers; the g
    // shards of a node share its NICs, so the node moves the whole bucket.
    double across = multiNode ? ring(bytes / g, c.nodes, c.interNode.busBandwidth / g,
                                     c.interNode.latency)
                              : 0;
    return inNode + across;
  }
  case AllReduceAlgorithm::kTree: {
    double depth = multiNode ? std::ceil(std::log2(static_cast<double>(c.nodes))) : 0;
    double latency = 2.0 * (depth * c.interNode.latency +
                            static_cast<double>(c.gpusPerNode - 1) * c.intraNode.latency);
    return 2.0 * bytes / slowest + latency;
  }
  case AllReduceAlgorithm::kAuto: {
    double byRing = allReduceSeconds(bytes, c, AllReduceAlgorithm::kRing);
    return multiNode ? std::min(byRing, allReduceSeconds(bytes, c, AllReduceAlgorithm::kTree))
                     : byRing;
  }
  }
  return 0;
}

} // namespace dlc::rt::perf
