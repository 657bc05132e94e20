//===- Parallel.cpp - how many host threads work splits over --------------===//

#include "dlc/runtime/Parallel.h"

#include <cstdlib>

namespace dlc::rt {

int cpuThreadCount() {
  static const int count = [] {
    if (const char *env = std::getenv("DLC_CPU_THREADS")) {
      int n = std::atoi(env);
      if (n >= 1)
        return n;
    }
    unsigned hw = std::thread::hardware_concurrency();
    return hw ? static_cast<int>(hw) : 1;
  }();
  return count;
}

} // namespace dlc::rt
