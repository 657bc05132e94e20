//===- HtmlModel.cpp - the HTML report's configurations -------------------===//

#include "HtmlModel.h"

#include <map>

namespace dlc::bench::html {

namespace json = llvm::json;

namespace {
std::string field(const json::Object &r, llvm::StringRef key) {
  return r.getString(key).value_or("?").str();
}

} // namespace

Entry makeEntry(const json::Object &r, const std::string &source, size_t index) {
  Entry e;
  e.id = "c" + std::to_string(index);
  e.source = source;
  e.r = &r;
  e.model = field(r, "model");
  e.backend = field(r, "backend");
  e.precision = field(r, "precision");
  e.fusion = field(r, "fusion");
  e.batch = r.getInteger("batch");
  e.gpus = r.getInteger("gpus").value_or(1);
  if (const json::Object *sps = r.getObject("samples_per_sec")) {
    e.sps = sps->getNumber("median");
    e.spsMin = sps->getNumber("min");
    e.spsMax = sps->getNumber("max");
  }
  if (const json::Object *ci = r.getObject("samples_per_sec_ci")) {
    e.ciLow = ci->getNumber("low");
    e.ciHigh = ci->getNumber("high");
    e.ciLevel = ci->getNumber("level");
  }
  e.kernels = r.getNumber("kernels_per_step");
  e.bytes = r.getNumber("memory_bytes_per_step");
  if (const json::Object *kinds = r.getObject("kernels_by_kind"))
    for (const auto &[kind, count] : *kinds)
      if (std::optional<double> n = count.getAsNumber())
        e.kernelsByKind.push_back({kind.str(), *n});
  std::sort(e.kernelsByKind.begin(), e.kernelsByKind.end());
  return e;
}

Distinct::Distinct(const std::vector<const Entry *> &es) {
  for (const Entry *e : es) {
    gpus |= e->gpus != es.front()->gpus;
    backend |= e->backend != es.front()->backend;
    // The report's name only where the backend does not tell them apart
    // (dlc's own reports of one backend, before and after a change).
    for (const Entry *f : es)
      source |= e->source != f->source && e->backend == f->backend;
  }
}

std::string Distinct::label(const Entry &e) const {
  std::string s = "batch " + (e.batch ? std::to_string(*e.batch) : std::string("?"));
  if (gpus)
    s += " · " + std::to_string(e.gpus) + (e.gpus == 1 ? " GPU" : " GPUs");
  if (backend)
    s += " · " + e.backend;
  if (source)
    s += " · " + e.source;
  return s;
}

std::vector<Group> groupByPrecisionFusion(const std::vector<const Entry *> &entries) {
  Order precisions, fusions;
  std::map<std::pair<size_t, size_t>, Group> groups;
  for (const Entry *e : entries) {
    Group &g = groups[{precisions(e->precision), fusions(e->fusion)}];
    g.title = e->precision + " · " + e->fusion;
    g.rows.push_back(e);
  }
  // Within a group, the same batch and GPU count side by side (the reports'
  // order kept among them), so that a change or a peer sits next to dlc's.
  std::vector<Group> out;
  for (auto &[key, g] : groups) {
    std::stable_sort(g.rows.begin(), g.rows.end(), [](const Entry *a, const Entry *b) {
      return std::make_pair(a->batch.value_or(0), a->gpus) <
             std::make_pair(b->batch.value_or(0), b->gpus);
    });
    out.push_back(std::move(g));
  }
  return out;
}

} // namespace dlc::bench::html
