//===- Json.cpp - reading dlc-bench's JSON reports ------------------------===//

#include "Json.h"
#include "Provenance.h"

#include "llvm/Support/MemoryBuffer.h"

#include <sstream>

namespace dlc::bench {

bool readReport(const std::string &path, std::vector<llvm::json::Object> &results,
                std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    error = "cannot read " + path + ": " + buffer.getError().message();
    return false;
  }
  return parseReport((*buffer)->getBuffer(), path, results, error);
}

bool parseReport(llvm::StringRef text, const std::string &path,
                 std::vector<llvm::json::Object> &results, std::string &error) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  if (!parsed) {
    error = path + " is not JSON: " + llvm::toString(parsed.takeError());
    return false;
  }
  llvm::json::Object *top = parsed->getAsObject();
  if (!top) {
    error = path + " is not a dlc-bench report: its top level is not an object";
    return false;
  }
  if (std::optional<llvm::StringRef> schema = top->getString("schema");
      schema && *schema != "dlc-bench/1") {
    error = path + " has schema '" + schema->str() + "', expected 'dlc-bench/1'";
    return false;
  }
  if (llvm::json::Array *array = top->getArray("results")) {
    for (size_t i = 0; i < array->size(); ++i) {
      llvm::json::Object *o = (*array)[i].getAsObject();
      if (!o) {
        error = path + ": results[" + std::to_string(i) + "] is not an object";
        return false;
      }
      // A configuration an interrupted sweep did not finish has no figures.
      if (o->getString("status"))
        continue;
      results.push_back(std::move(*o));
    }
    return true;
  }
  if (!top->get("model")) {
    error = path + " is not a dlc-bench report: no \"model\" and no \"results\"";
    return false;
  }
  results.push_back(std::move(*top));
  return true;
}

std::string configurationKey(const llvm::json::Object &r) {
  auto text = [&](llvm::StringRef key) {
    return r.getString(key).value_or("?").str();
  };
  auto integer = [&](llvm::StringRef key, const char *missing) {
    std::optional<int64_t> v = r.getInteger(key);
    return v ? std::to_string(*v) : std::string(missing);
  };
  std::ostringstream key;
  key << text("model") << " " << text("backend") << " " << text("precision") << " "
      << text("fusion") << " gpus " << integer("gpus", "1") << " batch "
      << integer("batch", "?");
  return key.str();
}

std::string reportHost(const llvm::json::Object &result) {
  const llvm::json::Object *host = result.getObject("host");
  if (!host)
    return "";
  return hostDescription(host->getString("cpu").value_or("").str(),
                         host->getInteger("cores").value_or(0));
}

} // namespace dlc::bench
