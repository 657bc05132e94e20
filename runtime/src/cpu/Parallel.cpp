//===- Parallel.cpp - thread count of the CPU backend ---------------------===//

#include "dlc/runtime/cpu/Parallel.h"

#include <cstdlib>

namespace dlc::rt::cpu {

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

} // namespace dlc::rt::cpu
