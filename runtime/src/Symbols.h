//===- Symbols.h - functions of a library loaded at run time ----*- C++ -*-===//
//
// NCCL, NVML and dlc's MPI plugin are loaded with dlopen, so that no dlc
// program links them and a machine without them runs everything else.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_SRC_SYMBOLS_H
#define DLC_RUNTIME_SRC_SYMBOLS_H

#include <dlfcn.h>
#include <string>

namespace dlc::rt {

/// Points the function pointer `fn` at `symbol` of the dlopen handle
/// `library`; keeps the first symbol that is missing in `missing`, so that
/// a caller looks up every function and then names what its library lacks.
template <typename FunctionPointer>
void findSymbol(void *library, FunctionPointer &fn, const char *symbol,
                std::string &missing) {
  fn = reinterpret_cast<FunctionPointer>(dlsym(library, symbol));
  if (!fn && missing.empty())
    missing = symbol;
}

} // namespace dlc::rt

#endif // DLC_RUNTIME_SRC_SYMBOLS_H
