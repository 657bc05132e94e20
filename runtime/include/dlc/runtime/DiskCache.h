//===- DiskCache.h - hashing and directories of the on-disk caches -*- C++ -*-===//
//
// What the compiled-kernel caches (NVRTC's cubins, cuda/KernelCompiler.h;
// the host kernel libraries, cpu/HostKernels.h), the plan file's checksum
// and the generated kernels' names share.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_DISKCACHE_H
#define DLC_RUNTIME_DISKCACHE_H

#include <cstdint>
#include <string>
#include <string_view>

namespace dlc::rt {

/// 64-bit FNV-1a of `bytes`, from `basis` (FNV's offset basis by default;
/// the caches hash a key from several bases for a longer name).
uint64_t fnv1a(std::string_view bytes, uint64_t basis = 1469598103934665603ull);

/// `v` as 16 lower-case hex digits.
std::string hex64(uint64_t v);

/// mkdir -p; true when the directory exists afterwards.
bool makeDirs(const std::string &path);

} // namespace dlc::rt

#endif // DLC_RUNTIME_DISKCACHE_H
