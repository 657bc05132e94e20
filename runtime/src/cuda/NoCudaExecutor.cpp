//===- NoCudaExecutor.cpp - the CUDA executor in a build without CUDA -----===//
//
// Without the toolkit there is no executor to make: create() says so with
// listCudaDevices()' status, and no instance ever exists.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/Device.h"
#include "dlc/runtime/cuda/CudaExecutor.h"

namespace dlc::rt::cuda {

struct CudaExecutor::Impl {};

StatusOr<std::unique_ptr<CudaExecutor>> CudaExecutor::create(Plan plan, CudaOptions) {
  (void)plan;
  return listCudaDevices().status();
}

CudaExecutor::CudaExecutor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaExecutor::~CudaExecutor() = default;

namespace {
Status unavailable() {
  return Status(StatusCode::kUnavailable, "dlc was built without the CUDA backend");
}
const Plan &emptyPlan() {
  static const Plan plan;
  return plan;
}
} // namespace

Status CudaExecutor::initialize(uint64_t) { return unavailable(); }
Status CudaExecutor::fillSyntheticBatch(uint64_t) { return unavailable(); }
Status CudaExecutor::write(const std::string &, const void *, size_t) { return unavailable(); }
Status CudaExecutor::read(const std::string &, void *, size_t) const { return unavailable(); }
const PlanBuffer *CudaExecutor::buffer(const std::string &) const { return nullptr; }
std::string CudaExecutor::bytesOf(int32_t) const { return std::string(); }
void CudaExecutor::setKernelObserver(std::function<void(size_t)>, bool) {}
Status CudaExecutor::step() { return unavailable(); }
void CudaExecutor::setCommunicator(NcclCommunicator *) {}
Status CudaExecutor::makeCurrent() const { return unavailable(); }
Status CudaExecutor::synchronize() { return unavailable(); }
float CudaExecutor::loss() const { return 0.0f; }
int64_t CudaExecutor::stepsRun() const { return 0; }
const Plan &CudaExecutor::plan() const { return emptyPlan(); }
std::map<std::string, int64_t> CudaExecutor::launchesByPath() const { return {}; }
const std::vector<LaunchPath> &CudaExecutor::launchPaths() const {
  static const std::vector<LaunchPath> none;
  return none;
}
const std::vector<std::string> &CudaExecutor::refusedAtRunTime() const {
  static const std::vector<std::string> none;
  return none;
}
StatusOr<float> CudaExecutor::stepMs() const { return unavailable(); }
const std::string &CudaExecutor::deviceName() const {
  static const std::string none;
  return none;
}
const CudaOptions &CudaExecutor::options() const {
  static const CudaOptions none;
  return none;
}
bool CudaExecutor::replaysCudaGraph() const { return false; }
const std::string &CudaExecutor::pciBusId() const { return deviceName(); }
const std::string &CudaExecutor::cudaGraphNote() const { return deviceName(); }
void CudaExecutor::setProfiling(bool) {}
StatusOr<std::vector<double>> CudaExecutor::launchMsPerStep() const { return unavailable(); }
int64_t CudaExecutor::profiledSteps() const { return 0; }

} // namespace dlc::rt::cuda
