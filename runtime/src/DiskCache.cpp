//===- DiskCache.cpp - hashing and directories of the on-disk caches ------===//

#include "dlc/runtime/DiskCache.h"

#include <cerrno>
#include <cstdio>
#include <sstream>
#include <sys/stat.h>

namespace dlc::rt {

uint64_t fnv1a(std::string_view bytes, uint64_t basis) {
  uint64_t h = basis;
  for (unsigned char c : bytes)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string hex64(uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(v));
  return text;
}

bool makeDirs(const std::string &path) {
  std::string partial = !path.empty() && path[0] == '/' ? "/" : "";
  std::stringstream parts(path);
  for (std::string part; std::getline(parts, part, '/');) {
    if (part.empty())
      continue;
    partial += part + "/";
    if (mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST)
      return false;
  }
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

} // namespace dlc::rt
