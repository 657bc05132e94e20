//===- KernelCompiler.h - NVRTC with a disk cache ---------------*- C++ -*-===//
//
// Compiles a generated kernel's source to a cubin for one GPU architecture
// with NVRTC (which needs no GPU), and keeps every cubin on disk under a
// hash of (source, architecture, NVRTC version, options), so that a second
// run, or a second launch with the same computation, compiles nothing.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CUDA_KERNELCOMPILER_H
#define DLC_RUNTIME_CUDA_KERNELCOMPILER_H

#include "dlc/runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dlc::rt::cuda {

/// True when this build links NVRTC.
bool nvrtcBuilt();

/// "13.0": the NVRTC this process loaded; kUnavailable without NVRTC.
StatusOr<std::string> nvrtcVersionString();

/// $DLC_KERNEL_CACHE, else ~/.cache/dlc/kernels, else "" (no disk cache).
std::string defaultKernelCacheDir();

class KernelCompiler {
public:
  /// `cacheDir` empty: compile every time.
  explicit KernelCompiler(std::string cacheDir = defaultKernelCacheDir());

  /// The cubin of `source` for `arch` ("sm_80", "sm_90"). A source NVRTC
  /// refuses gives kInvalidArgument naming `kernelName` and the
  /// architecture, followed by NVRTC's log.
  StatusOr<std::string> compile(const std::string &kernelName, const std::string &source,
                                const std::string &arch);

  /// The options every compile passes besides the architecture.
  const std::vector<std::string> &options() const { return options_; }
  const std::string &cacheDir() const { return cacheDir_; }
  int64_t cacheHits() const { return hits_; }
  int64_t cacheMisses() const { return misses_; }

private:
  std::string cacheDir_;
  std::vector<std::string> options_;
  int64_t hits_ = 0, misses_ = 0;
};

/// One source to compile: its kernel name (for messages) and its text.
struct KernelSource {
  std::string name;
  std::string source;
};

/// Compiles `sources` for `arch` on up to `jobs` threads into `cacheDir`, so
/// that later compile() calls with that cache are hits (NVRTC is the slow
/// part of creating an executor: hundreds of kernels for a large model).
/// Each distinct source compiles once. The first failure, if any; the
/// hits and misses add to the counters given.
Status compileInParallel(const std::vector<KernelSource> &sources, const std::string &arch,
                         int jobs, const std::string &cacheDir, int64_t *hits = nullptr,
                         int64_t *misses = nullptr);

} // namespace dlc::rt::cuda

#endif // DLC_RUNTIME_CUDA_KERNELCOMPILER_H
