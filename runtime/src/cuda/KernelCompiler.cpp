//===- KernelCompiler.cpp - NVRTC with a disk cache -----------------------===//
//
// Cache entries are files named by a 128-bit hash (two FNV-1a passes with
// different bases) of everything that decides the cubin; each holds a magic
// line, the key's text length and hash check, and the cubin. Entries are
// written to a temporary name and renamed, so concurrent compilers (lit
// runs tests in parallel) never read half a file.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/DiskCache.h"
#include "dlc/runtime/cuda/KernelCompiler.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#if DLC_ENABLE_CUDA
#include <nvrtc.h>
#endif

namespace dlc::rt::cuda {

namespace {

constexpr char kCacheMagic[] = "DLCCUBIN1\n";

} // namespace

std::string defaultKernelCacheDir() {
  if (const char *dir = std::getenv("DLC_KERNEL_CACHE"))
    return dir;
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/dlc/kernels";
  return "";
}

#if DLC_ENABLE_CUDA

bool nvrtcBuilt() { return true; }

StatusOr<std::string> nvrtcVersionString() {
  int major = 0, minor = 0;
  if (nvrtcResult r = ::nvrtcVersion(&major, &minor); r != NVRTC_SUCCESS)
    return Status(StatusCode::kUnavailable,
                  std::string("nvrtcVersion: ") + nvrtcGetErrorString(r));
  return std::to_string(major) + "." + std::to_string(minor);
}

KernelCompiler::KernelCompiler(std::string cacheDir) : cacheDir_(std::move(cacheDir)) {
  // cuda_fp16.h and cuda_bf16.h come from the toolkit this was built with,
  // or from DLC_CUDA_INCLUDE on a machine that has them elsewhere.
  const char *include = std::getenv("DLC_CUDA_INCLUDE");
  options_ = {"-std=c++17", std::string("-I") + (include ? include : DLC_CUDA_INCLUDE_DIR)};
}

StatusOr<std::string> KernelCompiler::compile(const std::string &kernelName,
                                              const std::string &source,
                                              const std::string &arch) {
  auto version = nvrtcVersionString();
  if (!version.isOk())
    return version.status();
  std::string key = *version + "\n" + arch + "\n";
  for (const std::string &o : options_)
    key += o + "\n";
  key += source;
  std::string path;
  std::string check = hex64(fnv1a(key, 0x6c62272e07bb0142ull)) + hex64(key.size());
  if (!cacheDir_.empty()) {
    path = cacheDir_ + "/" + hex64(fnv1a(key, 1469598103934665603ull)) +
           hex64(fnv1a(key, 0x84222325cbf29ce4ull)) + "-" + arch + ".cubin";
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      std::string head = kCacheMagic + check + "\n";
      // A truncated or foreign file is a miss, and gets rewritten.
      if (bytes.size() > head.size() && bytes.compare(0, head.size(), head) == 0) {
        ++hits_;
        return bytes.substr(head.size());
      }
    }
  }
  ++misses_;

  nvrtcProgram program;
  std::string file = kernelName + ".cu";
  if (nvrtcResult r = nvrtcCreateProgram(&program, source.c_str(), file.c_str(), 0, nullptr,
                                         nullptr);
      r != NVRTC_SUCCESS)
    return Status(StatusCode::kInternal, "nvrtcCreateProgram for kernel '" + kernelName +
                                             "': " + nvrtcGetErrorString(r));
  std::vector<std::string> all = options_;
  all.push_back("--gpu-architecture=" + arch);
  std::vector<const char *> argv;
  for (const std::string &o : all)
    argv.push_back(o.c_str());
  nvrtcResult compiled =
      nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
  size_t logSize = 0;
  std::string log;
  if (nvrtcGetProgramLogSize(program, &logSize) == NVRTC_SUCCESS && logSize > 1) {
    log.resize(logSize);
    nvrtcGetProgramLog(program, log.data());
    log.resize(std::strlen(log.c_str()));
  }
  if (compiled != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&program);
    return Status(StatusCode::kInvalidArgument,
                  "NVRTC cannot compile kernel '" + kernelName + "' for " + arch + " (" +
                      nvrtcGetErrorString(compiled) + "):\n" + log);
  }
  size_t cubinSize = 0;
  std::string cubin;
  nvrtcResult got = nvrtcGetCUBINSize(program, &cubinSize);
  if (got == NVRTC_SUCCESS) {
    cubin.resize(cubinSize);
    got = nvrtcGetCUBIN(program, cubin.data());
  }
  nvrtcDestroyProgram(&program);
  if (got != NVRTC_SUCCESS || cubin.empty())
    return Status(StatusCode::kInternal, "NVRTC gave no cubin for kernel '" + kernelName +
                                             "' (" + arch + "): " + nvrtcGetErrorString(got));

  if (!path.empty() && makeDirs(cacheDir_)) {
    // Unique per process and thread: compileInParallel's threads may write
    // the same cubin at once.
    std::string temp = path + ".tmp" + std::to_string(getpid()) + "-" +
                       std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()));
    bool written = false;
    {
      std::ofstream out(temp, std::ios::binary);
      out << kCacheMagic << check << "\n" << cubin;
      out.close();
      written = static_cast<bool>(out);
    }
    // A cache that cannot be written only costs the next run a compile; a
    // short write (a full disk) must not be renamed into place, where the
    // header check would accept the truncated cubin.
    if (!written || std::rename(temp.c_str(), path.c_str()) != 0)
      std::remove(temp.c_str());
  }
  return cubin;
}

#else // !DLC_ENABLE_CUDA

bool nvrtcBuilt() { return false; }

StatusOr<std::string> nvrtcVersionString() {
  return Status(StatusCode::kUnavailable,
                "no NVRTC: dlc was built without the CUDA toolkit");
}

KernelCompiler::KernelCompiler(std::string cacheDir) : cacheDir_(std::move(cacheDir)) {}

StatusOr<std::string> KernelCompiler::compile(const std::string &kernelName,
                                              const std::string &, const std::string &arch) {
  return Status(StatusCode::kUnavailable, "cannot compile kernel '" + kernelName + "' for " +
                                              arch + ": dlc was built without NVRTC");
}

#endif

Status compileInParallel(const std::vector<KernelSource> &sources, const std::string &arch,
                         int jobs, const std::string &cacheDir, int64_t *hits,
                         int64_t *misses) {
  // Distinct sources only: the same text compiles once.
  std::vector<const KernelSource *> work;
  std::set<std::string> seen;
  for (const KernelSource &k : sources)
    if (seen.insert(k.source).second)
      work.push_back(&k);
  std::atomic<size_t> next{0};
  std::atomic<int64_t> hitCount{0}, missCount{0};
  std::mutex failedMutex;
  Status failed = Status::ok();
  auto worker = [&] {
    KernelCompiler compiler(cacheDir);
    for (size_t i = next++; i < work.size(); i = next++) {
      auto cubin = compiler.compile(work[i]->name, work[i]->source, arch);
      if (!cubin.isOk()) {
        std::lock_guard<std::mutex> lock(failedMutex);
        if (failed.isOk())
          failed = cubin.status();
      }
    }
    hitCount += compiler.cacheHits();
    missCount += compiler.cacheMisses();
  };
  int threads = std::max(1, std::min<int>(jobs, static_cast<int>(work.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread &t : pool)
    t.join();
  if (hits)
    *hits += hitCount;
  if (misses)
    *misses += missCount;
  return failed;
}

} // namespace dlc::rt::cuda
