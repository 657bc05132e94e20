//===- HtmlFigures.cpp - the HTML report's table of every figure ----------===//
//
// Every leaf of every configuration's JSON, one row a field and one column a
// configuration, numbers exactly as the JSON holds them: the table a reader
// (or a test) checks the charts against.
//
//===----------------------------------------------------------------------===//

#include "Html.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace dlc::bench::html {

namespace {

namespace json = llvm::json;

/// The order fields are listed in: the schema's (bench/README.md), then
/// any other field alphabetically.
int fieldRank(llvm::StringRef name) {
  static const char *const order[] = {
      "schema", "compile_only", "model", "backend", "batch", "precision", "fusion", "gpus",
      "threads", "optimizer", "seed", "warmup_steps", "timed_steps", "repeats",
      "samples_per_sec", "median", "min", "max", "step_ms", "samples_per_sec_ci",
      "step_ms_ci", "low", "high", "level", "statistics", "loss", "first", "last",
      "loss_first", "loss_last", "kernels_per_step", "device_launches", "memory_bytes_per_step",
      "fused_groups", "kernels_by_kind", "achieved_tflops", "peak_tflops", "mfu",
      "peak_name", "parameters", "forward_macs_per_sample", "train_flops_per_step",
      "peak_arena_bytes", "total_buffer_bytes", "live_bytes_lower_bound", "padding_bytes", "compile_ms",
      "repeat_results"};
  for (size_t i = 0; i < std::size(order); ++i)
    if (name == order[i])
      return static_cast<int>(i);
  return static_cast<int>(std::size(order));
}

/// "a.b[2].c" -> {"a", "b", 2, "c"}: names and indices.
std::vector<std::pair<std::string, int64_t>> pathParts(const std::string &path) {
  std::vector<std::pair<std::string, int64_t>> parts;
  std::string name;
  for (size_t i = 0; i < path.size(); ++i) {
    char c = path[i];
    if (c == '.' || c == '[') {
      if (!name.empty())
        parts.push_back({name, -1});
      name.clear();
      if (c == '[') {
        size_t close = path.find(']', i);
        parts.push_back({"", std::stoll(path.substr(i + 1, close - i - 1))});
        i = close;
      }
    } else {
      name += c;
    }
  }
  if (!name.empty())
    parts.push_back({name, -1});
  return parts;
}

bool fieldBefore(const std::string &a, const std::string &b) {
  auto pa = pathParts(a), pb = pathParts(b);
  for (size_t i = 0; i < std::min(pa.size(), pb.size()); ++i) {
    auto ka = std::make_tuple(pa[i].first.empty() ? -1 : fieldRank(pa[i].first),
                              pa[i].first, pa[i].second);
    auto kb = std::make_tuple(pb[i].first.empty() ? -1 : fieldRank(pb[i].first),
                              pb[i].first, pb[i].second);
    if (ka != kb)
      return ka < kb;
  }
  return pa.size() < pb.size();
}

const llvm::StringRef kCharted[] = {"profile", "loss_trajectory"};

/// Every leaf of a result: nested objects joined with '.', arrays indexed;
/// an empty object or array is a leaf of its own.
void flatten(const json::Value &v, const std::string &path,
             std::map<std::string, const json::Value *> &out);
void flatten(const json::Object &o, const std::string &path,
             std::map<std::string, const json::Value *> &out) {
  for (const auto &[key, value] : o)
    // Arrays a row per element would bury the table under (a launch, a
    // step each): their charts draw them and their CSV holds them.
    if (!path.empty() || !llvm::is_contained(kCharted, llvm::StringRef(key)))
      flatten(value, path.empty() ? key.str() : path + "." + key.str(), out);
}
void flatten(const json::Value &v, const std::string &path,
             std::map<std::string, const json::Value *> &out) {
  if (const json::Object *o = v.getAsObject(); o && !o->empty()) {
    flatten(*o, path, out);
  } else if (const json::Array *a = v.getAsArray(); a && !a->empty()) {
    for (size_t i = 0; i < a->size(); ++i)
      flatten((*a)[i], path + "[" + std::to_string(i) + "]", out);
  } else {
    out[path] = &v;
  }
}

/// A leaf's cell: numbers exactly as the JSON holds them.
void cell(std::ostream &os, const std::string &id, const std::string &name,
          const json::Value *v) {
  os << "<td data-config=\"" << id << "\" data-field=\"" << escape(name) << "\"";
  if (!v) {
    os << " class=\"absent\"></td>";
    return;
  }
  switch (v->kind()) {
  case json::Value::Null:
    os << " data-null=\"\" class=\"null\">null</td>";
    return;
  case json::Value::Boolean:
    os << " data-bool=\"\">" << (*v->getAsBoolean() ? "true" : "false") << "</td>";
    return;
  case json::Value::Number:
    os << " data-number=\"\" class=\"num\">" << exactNumber(*v) << "</td>";
    return;
  case json::Value::String:
    // Text wraps (the command line, the methodology): a long one would
    // push every other column off the screen.
    os << " class=\"text\">" << escape(*v->getAsString()) << "</td>";
    return;
  case json::Value::Object:
    os << " data-empty=\"\">{}</td>";
    return;
  case json::Value::Array:
    os << " data-empty=\"\">[]</td>";
    return;
  }
}

} // namespace

void writeFiguresTable(std::ostream &os, const std::vector<FiguresColumn> &columns) {
  std::vector<std::map<std::string, const json::Value *>> leaves(columns.size());
  std::set<std::string> names;
  for (size_t i = 0; i < columns.size(); ++i) {
    flatten(*columns[i].result, "", leaves[i]);
    for (auto &[name, v] : leaves[i])
      names.insert(name);
  }
  std::vector<std::string> rows(names.begin(), names.end());
  std::stable_sort(rows.begin(), rows.end(), fieldBefore);
  os << "<div class=\"scroll\"><table class=\"numbers\" id=\"figures-table\"><tr>"
        "<th>field</th>";
  for (const FiguresColumn &c : columns)
    os << "<th data-config=\"" << c.id << "\">" << c.headingHtml << "</th>";
  os << "</tr>\n";
  for (const std::string &name : rows) {
    os << "<tr><th>" << escape(name) << "</th>";
    for (size_t i = 0; i < columns.size(); ++i) {
      auto it = leaves[i].find(name);
      cell(os, columns[i].id, name, it == leaves[i].end() ? nullptr : it->second);
    }
    os << "</tr>\n";
  }
  os << "</table></div>\n";
}

} // namespace dlc::bench::html
