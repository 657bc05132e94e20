//===- CudnnAttention.cpp - train.attention on cuDNN's SDPA graph ---------===//

#include "CudnnAttention.h"

#include "CudnnConv.h"

#if DLC_HAVE_CUDNN_FRONTEND
// The frontend's JSON (de)serialization is not used; skipping it keeps
// nlohmann's headers out of the build.
#define CUDNN_FRONTEND_SKIP_JSON_LIB 1
#include <cudnn_frontend.h>
#endif

#include <cstdint>
#include <cstring>
#include <exception>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

namespace dlc::rt::cudnn {

#if DLC_HAVE_CUDNN_FRONTEND

namespace fe = cudnn_frontend;

struct Sdpa::Graph {
  /// Shared by every kernel of one shape on one handle (GPT-2's twelve
  /// layers build one forward and one backward graph).
  std::shared_ptr<fe::graph::Graph> graph;
  /// (tensor uid, arena offset) for every operand.
  std::vector<std::pair<int64_t, int64_t>> operands;
  int64_t workspace = 0;
  std::string where;
};

namespace {

/// [b, h, s, d] row-major: q, k, v, o and their gradients as the plan lays
/// [B..., S, D] out.
std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size() - 1; i > 0; --i)
    strides[i - 1] = strides[i] * dims[i];
  return strides;
}

std::shared_ptr<fe::graph::Tensor_attributes> tensor(fe::graph::Graph &g, const char *name,
                                                     int64_t uid, std::vector<int64_t> dims) {
  std::vector<int64_t> strides = rowMajorStrides(dims);
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name(name)
                      .set_uid(uid)
                      .set_dim(std::move(dims))
                      .set_stride(std::move(strides)));
}

void asOutput(const std::shared_ptr<fe::graph::Tensor_attributes> &t, int64_t uid,
              std::vector<int64_t> dims) {
  std::vector<int64_t> strides = rowMajorStrides(dims);
  t->set_output(true).set_uid(uid).set_dim(std::move(dims)).set_stride(std::move(strides));
}

/// What a graph depends on: everything in SdpaShape but the buffers.
std::string graphKey(const SdpaShape &s) {
  std::string key;
  for (int64_t v : {int64_t(s.backward), int64_t(s.type), s.b, s.h, s.sq, s.sk, s.d,
                    int64_t(s.causal), int64_t(s.mask >= 0), s.maskB, s.maskH})
    key += "," + std::to_string(v);
  // The graph holds the scale as a float: key on its exact bits (to_string
  // keeps six decimals, and two scales that differ past them are two graphs).
  const float scale = static_cast<float>(s.scale);
  uint32_t bits;
  std::memcpy(&bits, &scale, sizeof bits);
  return key + "," + std::to_string(bits);
}

/// A built graph (null: refused, with the refusal).
struct BuiltGraph {
  std::shared_ptr<fe::graph::Graph> graph;
  int64_t workspace = 0;
  std::string refusal;
};

/// The graph of `s`: q, k, v (uids 1-3; the backward's o, do and stats
/// 4-6), the mask (20), and the results (30...), each uid the operand's
/// place in the kernel (operandsOf).
void describeGraph(fe::graph::Graph &graph, const SdpaShape &s) {
  graph.set_io_data_type(s.type == DType::kF16 ? fe::DataType_t::HALF : fe::DataType_t::BFLOAT16)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  const std::vector<int64_t> qDims = {s.b, s.h, s.sq, s.d}, kDims = {s.b, s.h, s.sk, s.d};
  const std::vector<int64_t> statsDims = {s.b, s.h, s.sq, 1};
  auto q = tensor(graph, "q", 1, qDims), k = tensor(graph, "k", 2, kDims),
       v = tensor(graph, "v", 3, kDims);
  std::shared_ptr<fe::graph::Tensor_attributes> bias;
  if (s.mask >= 0)
    bias = tensor(graph, "mask", 20, {s.maskB, s.maskH, s.sq, s.sk});
  // cuDNN's causal rule is top-left; train.attention's hides key j from
  // query i when j > i + (Sk - Sq), which is bottom-right (the same when
  // Sq == Sk).
  auto masked = [&](auto &options) {
    options.set_attn_scale(static_cast<float>(s.scale));
    if (s.causal) {
      if (s.sq == s.sk)
        options.set_causal_mask(true);
      else
        options.set_causal_mask_bottom_right(true);
    }
    if (bias)
      options.set_bias(bias);
  };
  if (!s.backward) {
    auto options = fe::graph::SDPA_attributes().set_name("dlc_attention").set_generate_stats(true);
    masked(options);
    auto [o, stats] = graph.sdpa(q, k, v, options);
    asOutput(o, 30, qDims);
    asOutput(stats, 31, statsDims);
    stats->set_data_type(fe::DataType_t::FLOAT);
    return;
  }
  auto o = tensor(graph, "o", 4, qDims), dO = tensor(graph, "do", 5, qDims);
  auto stats = tensor(graph, "stats", 6, statsDims);
  stats->set_data_type(fe::DataType_t::FLOAT);
  auto options = fe::graph::SDPA_backward_attributes().set_name("dlc_attention_backward");
  masked(options);
  auto [dq, dk, dv] = graph.sdpa_backward(q, k, v, o, dO, stats, options);
  asOutput(dq, 30, qDims);
  asOutput(dk, 31, kDims);
  asOutput(dv, 32, kDims);
}

/// (uid, arena offset) of every operand of `s`, as describeGraph numbers them.
std::vector<std::pair<int64_t, int64_t>> operandsOf(const Plan &plan, const SdpaShape &s) {
  std::vector<std::pair<int64_t, int64_t>> operands;
  for (size_t i = 0; i < s.inputs.size(); ++i)
    operands.emplace_back(int64_t(i) + 1, plan.buffers[s.inputs[i]].offset);
  if (s.mask >= 0)
    operands.emplace_back(20, plan.buffers[s.mask].offset);
  for (size_t i = 0; i < s.outputs.size(); ++i)
    operands.emplace_back(int64_t(i) + 30, plan.buffers[s.outputs[i]].offset);
  return operands;
}

} // namespace

std::string sdpaGraphProblem(const SdpaShape &shape, int smVersion) {
  try {
    fe::graph::Graph graph;
    graph.set_sm_version(smVersion);
    describeGraph(graph, shape);
    fe::error_t e = graph.validate();
    return e.is_good() ? "" : e.get_message();
  } catch (const std::exception &e) {
    return std::string("threw: ") + e.what();
  }
}

struct SdpaCache::Entries {
  std::map<std::string, BuiltGraph> byKey; // by graphKey
};

SdpaCache::SdpaCache() : entries_(std::make_unique<Entries>()) {}
SdpaCache::~SdpaCache() = default;

Status Sdpa::plan(cudnnHandle_t handle, SdpaCache &cache, const Plan &plan, const SdpaShape &s,
                  const std::string &where, std::unique_ptr<Sdpa> &sdpa, std::string &refusal) {
  sdpa.reset();
  auto g = std::make_unique<Graph>();
  g->where = where;
  g->operands = operandsOf(plan, s);
  std::map<std::string, BuiltGraph> &graphs = cache.entries_->byKey;
  const std::string key = graphKey(s);
  auto cached = graphs.find(key);
  if (cached != graphs.end() && !cached->second.graph) {
    refusal = cached->second.refusal;
    return Status::ok();
  }
  const bool build = cached == graphs.end();
  // A graph cuDNN does not take (this version, this device, this shape) is
  // a refusal at any of these stages: the flash kernels run it instead.
  auto refused = [&](fe::error_t e, const char *stage) {
    if (e.is_good())
      return false;
    refusal = std::string("cuDNN's SDPA (") + stage + "): " + e.get_message();
    return true;
  };
  if (build) {
    auto graphPtr = std::make_shared<fe::graph::Graph>();
    fe::graph::Graph &graph = *graphPtr;
    BuiltGraph built;
    // The frontend's older layers may throw (cudnnException) where the
    // graph API returns an error: either way it is a refusal, never a lost
    // run.
    bool refusedHere = false;
    try {
      describeGraph(graph, s);
      refusedHere = refused(graph.validate(), "validate") ||
                    refused(graph.build_operation_graph(handle), "operation graph") ||
                    refused(graph.create_execution_plans({fe::HeurMode_t::A}), "heuristics") ||
                    refused(graph.check_support(handle), "support") ||
                    refused(graph.build_plans(handle), "plan") ||
                    refused(graph.get_workspace_size(built.workspace), "workspace");
    } catch (const std::exception &e) {
      refusal = std::string("cuDNN's SDPA threw: ") + e.what();
      refusedHere = true;
    }
    if (refusedHere) {
      built.refusal = refusal;
      graphs[key] = built;
      return Status::ok();
    }
    built.graph = graphPtr;
    cached = graphs.emplace(key, built).first;
  }
  g->graph = cached->second.graph;
  g->workspace = cached->second.workspace;
  sdpa.reset(new Sdpa());
  sdpa->graph_ = std::move(g);
  return Status::ok();
}

Sdpa::~Sdpa() = default;

size_t Sdpa::workspaceBytes() const { return static_cast<size_t>(graph_->workspace); }

Status Sdpa::run(cudnnHandle_t handle, unsigned char *arena, void *workspace,
                 size_t workspaceBytes, cudaStream_t stream) const {
  if (static_cast<size_t>(graph_->workspace) > workspaceBytes)
    return Status(StatusCode::kInternal, graph_->where + ": the workspace holds " +
                                             std::to_string(workspaceBytes) + " bytes, " +
                                             std::to_string(graph_->workspace) + " needed");
  DLC_CUDNN(cudnnSetStream(handle, stream), graph_->where);
  std::unordered_map<int64_t, void *> pack;
  for (const auto &[uid, offset] : graph_->operands)
    pack.emplace(uid, arena + offset);
  fe::error_t e;
  try {
    e = graph_->graph->execute(handle, pack, workspace);
  } catch (const std::exception &thrown) {
    return Status(StatusCode::kInternal,
                  "cuDNN's SDPA threw in " + graph_->where + ": " + thrown.what());
  }
  if (!e.is_good())
    return Status(StatusCode::kInternal,
                  "cuDNN's SDPA failed in " + graph_->where + ": " + e.get_message());
  return Status::ok();
}

#else // !DLC_HAVE_CUDNN_FRONTEND

struct Sdpa::Graph {};
struct SdpaCache::Entries {};

std::string sdpaGraphProblem(const SdpaShape &, int) {
  return "dlc was built without the cuDNN frontend's headers";
}
SdpaCache::SdpaCache() = default;
SdpaCache::~SdpaCache() = default;

Status Sdpa::plan(cudnnHandle_t, SdpaCache &, const Plan &, const SdpaShape &,
                  const std::string &, std::unique_ptr<Sdpa> &sdpa, std::string &refusal) {
  sdpa.reset();
  refusal = "dlc was built without the cuDNN frontend's headers (runtime/CMakeLists.txt "
            "fetches them; DLC_CUDNN_FRONTEND_DIR names a copy)";
  return Status::ok();
}

Sdpa::~Sdpa() = default;

size_t Sdpa::workspaceBytes() const { return 0; }

Status Sdpa::run(cudnnHandle_t, unsigned char *, void *, size_t, cudaStream_t) const {
  return Status(StatusCode::kInternal, "cuDNN's SDPA is not built in");
}

#endif

} // namespace dlc::rt::cudnn
