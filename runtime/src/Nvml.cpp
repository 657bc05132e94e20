//===- Nvml.cpp - GPU utilization and memory through NVML -----------------===//
//
// The few NVML entry points used are declared here with the layouts of
// nvml.h (NVML API version 2+; the _v2 names are what nvml.h maps the plain
// ones to), so the build needs neither the header nor the library.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/Nvml.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <thread>

namespace dlc::rt {

namespace {

using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st *;
struct nvmlUtilization_t {
  unsigned int gpu, memory; // percent of the last sample period
};
struct nvmlMemory_t {
  unsigned long long total, free, used;
};

} // namespace

struct NvmlMonitor::Impl {
  void *library = nullptr;
  nvmlDevice_t device = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t *) = nullptr;
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t *) = nullptr;
  const char *(*errorString)(nvmlReturn_t) = nullptr;

  std::mutex mutex;
  std::condition_variable wake;
  bool running = false;
  std::thread sampler;
  GpuUsage usage;
  double gpuSum = 0, memorySum = 0;

  ~Impl() {
    if (shutdown)
      shutdown();
    if (library)
      dlclose(library);
  }
  std::string error(const char *call, nvmlReturn_t code) const {
    return std::string(call) + ": " + (errorString ? errorString(code) : "error") + " (" +
           std::to_string(code) + ")";
  }
  /// One reading into `usage`; false when NVML fails.
  bool accumulate() {
    nvmlUtilization_t u{};
    nvmlMemory_t m{};
    if (utilization(device, &u) != 0 || memory(device, &m) != 0)
      return false;
    std::lock_guard<std::mutex> lock(mutex);
    ++usage.samples;
    gpuSum += u.gpu;
    memorySum += u.memory;
    usage.memoryUsedBytes = std::max<int64_t>(usage.memoryUsedBytes, int64_t(m.used));
    usage.memoryTotalBytes = int64_t(m.total);
    return true;
  }
};

NvmlMonitor::NvmlMonitor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

NvmlMonitor::~NvmlMonitor() {
  if (impl_->sampler.joinable())
    stop();
}

StatusOr<std::unique_ptr<NvmlMonitor>> NvmlMonitor::open(const std::string &pciBusId) {
  const char *override = std::getenv("DLC_NVML_LIBRARY");
  std::string name = override && *override ? override : "libnvidia-ml.so.1";
  auto impl = std::make_unique<Impl>();
  impl->library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!impl->library) {
    const char *why = dlerror();
    return Status(StatusCode::kUnavailable,
                  "NVML is not available (" + std::string(why ? why : name) +
                      "; it comes with the NVIDIA driver)");
  }
  auto find = [&](const char *symbol) { return dlsym(impl->library, symbol); };
  auto init = reinterpret_cast<nvmlReturn_t (*)()>(find("nvmlInit_v2"));
  auto byBus = reinterpret_cast<nvmlReturn_t (*)(const char *, nvmlDevice_t *)>(
      find("nvmlDeviceGetHandleByPciBusId_v2"));
  impl->utilization = reinterpret_cast<nvmlReturn_t (*)(nvmlDevice_t, nvmlUtilization_t *)>(
      find("nvmlDeviceGetUtilizationRates"));
  impl->memory = reinterpret_cast<nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t *)>(
      find("nvmlDeviceGetMemoryInfo"));
  impl->errorString = reinterpret_cast<const char *(*)(nvmlReturn_t)>(find("nvmlErrorString"));
  auto shutdown = reinterpret_cast<nvmlReturn_t (*)()>(find("nvmlShutdown"));
  if (!init || !byBus || !impl->utilization || !impl->memory || !shutdown)
    return Status(StatusCode::kUnavailable,
                  name + " lacks an NVML entry point dlc uses (nvmlInit_v2, "
                         "nvmlDeviceGetHandleByPciBusId_v2, nvmlDeviceGetUtilizationRates, "
                         "nvmlDeviceGetMemoryInfo, nvmlShutdown)");
  if (nvmlReturn_t r = init(); r != 0)
    return Status(StatusCode::kUnavailable, "NVML: " + impl->error("nvmlInit_v2", r));
  impl->shutdown = shutdown;
  if (nvmlReturn_t r = byBus(pciBusId.c_str(), &impl->device); r != 0)
    return Status(StatusCode::kUnavailable,
                  "NVML: " + impl->error("nvmlDeviceGetHandleByPciBusId_v2", r) +
                      " for the GPU at PCI " + pciBusId);
  return std::unique_ptr<NvmlMonitor>(new NvmlMonitor(std::move(impl)));
}

void NvmlMonitor::start(int periodMs) {
  Impl &d = *impl_;
  if (d.sampler.joinable())
    return;
  {
    std::lock_guard<std::mutex> lock(d.mutex);
    d.usage = GpuUsage();
    d.gpuSum = d.memorySum = 0;
    d.running = true;
  }
  d.sampler = std::thread([&d, periodMs] {
    std::unique_lock<std::mutex> lock(d.mutex);
    while (d.running) {
      lock.unlock();
      d.accumulate();
      lock.lock();
      d.wake.wait_for(lock, std::chrono::milliseconds(periodMs), [&] { return !d.running; });
    }
  });
}

GpuUsage NvmlMonitor::stop() {
  Impl &d = *impl_;
  if (d.sampler.joinable()) {
    {
      std::lock_guard<std::mutex> lock(d.mutex);
      d.running = false;
    }
    d.wake.notify_all();
    d.sampler.join();
  }
  d.accumulate();
  std::lock_guard<std::mutex> lock(d.mutex);
  GpuUsage usage = d.usage;
  if (usage.samples) {
    usage.gpuUtilizationPercent = d.gpuSum / usage.samples;
    usage.memoryUtilizationPercent = d.memorySum / usage.samples;
  }
  return usage;
}

StatusOr<GpuUsage> NvmlMonitor::sample() {
  Impl &d = *impl_;
  nvmlUtilization_t u{};
  nvmlMemory_t m{};
  if (nvmlReturn_t r = d.utilization(d.device, &u); r != 0)
    return Status(StatusCode::kInternal, d.error("nvmlDeviceGetUtilizationRates", r));
  if (nvmlReturn_t r = d.memory(d.device, &m); r != 0)
    return Status(StatusCode::kInternal, d.error("nvmlDeviceGetMemoryInfo", r));
  GpuUsage usage;
  usage.samples = 1;
  usage.gpuUtilizationPercent = u.gpu;
  usage.memoryUtilizationPercent = u.memory;
  usage.memoryUsedBytes = int64_t(m.used);
  usage.memoryTotalBytes = int64_t(m.total);
  return usage;
}

} // namespace dlc::rt
