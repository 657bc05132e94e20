//===- HtmlModel.cpp - the HTML report's configurations -------------------===//

#include "HtmlModel.h"

#include <cmath>
#include <map>
#include <tuple>

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
  e.revision = r.getString("dlc_revision").value_or("").str();
  e.warmup = r.getInteger("warmup_steps");
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
  if (const json::Array *repeats = r.getArray("repeat_results"))
    for (const json::Value &x : *repeats)
      if (const json::Object *o = x.getAsObject())
        if (std::optional<double> v = o->getNumber("samples_per_sec"))
          e.repeatSps.push_back(*v);
  std::map<std::string, double> ms;
  if (const json::Array *profile = r.getArray("profile"))
    for (const json::Value &x : *profile)
      if (const json::Object *o = x.getAsObject())
        ms[o->getString("kind").value_or("?").str()] +=
            o->getNumber("ms_per_step").value_or(0);
  e.msByKind.assign(ms.begin(), ms.end());
  if (const json::Array *losses = r.getArray("loss_trajectory"))
    for (const json::Value &x : *losses)
      if (const json::Object *o = x.getAsObject()) {
        std::optional<int64_t> step = o->getInteger("step");
        std::optional<double> loss = o->getNumber("loss");
        // A NaN loss is written null: the line breaks there.
        if (step)
          e.losses.push_back({*step, loss.value_or(NAN)});
      }
  return e;
}

Distinct::Distinct(const std::vector<const Entry *> &es) {
  for (const Entry *e : es) {
    gpus |= e->gpus != es.front()->gpus;
    backend |= e->backend != es.front()->backend;
    // Reports of one backend (dlc's, before and after a change) apart.
    for (const Entry *f : es)
      if (e->source != f->source && e->backend == f->backend) {
        if (e->revision != f->revision)
          revision = true;
        else
          source = true;
      }
  }
}

std::string Distinct::label(const Entry &e) const {
  std::string s = "batch " + (e.batch ? std::to_string(*e.batch) : std::string("?"));
  if (gpus)
    s += " · " + std::to_string(e.gpus) + (e.gpus == 1 ? " GPU" : " GPUs");
  if (backend)
    s += " · " + e.backend;
  if (revision)
    s += " · dlc " + (e.revision.empty() ? std::string("?") : e.revision);
  if (source)
    s += " · " + e.source;
  return s;
}

std::string Distinct::heading(const Entry &e) const { return e.precision + " · " + label(e); }

std::string Distinct::name(const Entry &e) const {
  return e.precision + " · " + e.fusion + " · " + label(e);
}

std::vector<Group> groupByConfiguration(const std::vector<const Entry *> &entries,
                                        const Distinct &distinct, const Order &fusions) {
  Order precisions, headings;
  std::map<std::pair<size_t, size_t>, Group> groups;
  for (const Entry *e : entries) {
    std::string title = distinct.heading(*e);
    Group &g = groups[{precisions(e->precision), headings(title)}];
    g.title = title;
    g.rows.push_back(e);
  }
  // Precisions in the order they appear; within one, batches ascending;
  // within a group, the strategies in the page's order (their colours').
  std::vector<Group> out;
  for (auto &[key, g] : groups) {
    std::stable_sort(g.rows.begin(), g.rows.end(), [&](const Entry *a, const Entry *b) {
      return fusions.index(a->fusion) < fusions.index(b->fusion);
    });
    out.push_back(std::move(g));
  }
  std::stable_sort(out.begin(), out.end(), [&](const Group &a, const Group &b) {
    auto key = [&](const Group &g) {
      const Entry &e = *g.rows.front();
      return std::make_tuple(precisions.index(e.precision), e.batch.value_or(0), e.gpus);
    };
    return key(a) < key(b);
  });
  return out;
}

std::vector<const Entry *> Page::of(const std::string &model) const {
  std::vector<const Entry *> es;
  for (const Entry &e : entries)
    if (e.model == model)
      es.push_back(&e);
  return es;
}

} // namespace dlc::bench::html
