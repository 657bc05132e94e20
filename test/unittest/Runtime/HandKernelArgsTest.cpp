//===- HandKernelArgsTest.cpp - one parameter layout on host and device ---===//
//
// The hand-written kernels' parameters (HandKernelArgs.h) and the half
// conversions are real files that CMake embeds in the kernel sources: each
// family's source holds them byte for byte, and NVRTC lays DlcHandArgs out
// as the host compiler does (read back from the PTX, since NVRTC has no
// constant offsetof to static_assert on).
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/cuda/HandKernels.h"
#include "dlc/runtime/cuda/KernelCompiler.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <fstream>
#include <sstream>
#include <vector>

#if defined(DLC_ENABLE_CUDA)
#include <nvrtc.h>
#endif

using namespace dlc::rt::cuda;

namespace {

std::string sourceFile(const std::string &path) {
  std::ifstream in(std::string(DLC_SOURCE_DIR) + "/" + path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// What the launcher and the kernels agree on: every struct's size, where
// DlcHandArgs' parts and the phase word sit, and the operand table's entry.
// Each family struct has 8-byte fields only, which its size then places.
#define DLC_HAND_SIZES(X)                                                      \
  X(DlcHandArgs) X(DlcHandOperand) X(DlcSoftmaxArgs) X(DlcLayerNormArgs)       \
  X(DlcCrossEntropyArgs) X(DlcEmbeddingArgs) X(DlcDropoutArgs) X(DlcPoolArgs)  \
  X(DlcSgdArgs) X(DlcAdamwArgs) X(DlcLossScaleStatusArgs)                      \
  X(DlcUpdateLossScaleArgs) X(DlcBatchNormArgs) X(DlcResizeArgs)               \
  X(DlcAttentionArgs)
#define DLC_HAND_OFFSETS(X)                                                    \
  X(DlcHandArgs, p) X(DlcHandArgs, t) X(DlcHandArgs, i)                        \
  X(DlcHandArgs, i[DLC_HAND_PHASE_WORD]) X(DlcHandArgs, softmax)               \
  X(DlcHandArgs, layerNorm) X(DlcHandArgs, crossEntropy)                       \
  X(DlcHandArgs, embedding) X(DlcHandArgs, dropout) X(DlcHandArgs, pool)       \
  X(DlcHandArgs, sgd) X(DlcHandArgs, adamw) X(DlcHandArgs, lossScaleStatus)    \
  X(DlcHandArgs, updateLossScale) X(DlcHandArgs, batchNorm)                    \
  X(DlcHandArgs, resize) X(DlcHandArgs, attention) X(DlcHandOperand, p)        \
  X(DlcHandOperand, n)                                                         \
  X(DlcHandOperand, t)

#define DLC_HOST_SIZE(T) (unsigned long long)sizeof(T),
#define DLC_HOST_OFFSET(T, m) (unsigned long long)offsetof(T, m),
#define DLC_DEVICE_SIZE(T) "sizeof(" #T "), "
#define DLC_DEVICE_OFFSET(T, m) "DLC_PROBE_OFFSET(" #T ", " #m "), "

const std::vector<unsigned long long> kHostLayout = {
    DLC_HAND_SIZES(DLC_HOST_SIZE) DLC_HAND_OFFSETS(DLC_HOST_OFFSET)};

// Appended to a family's source: the same numbers as NVRTC computes them,
// in a device array whose initializer the PTX spells out.
const char *const kDeviceLayout =
    "\n#define DLC_PROBE_OFFSET(T, m) "
    "((unsigned long long)((char *)&((T *)0)->m - (char *)0))\n"
    "extern \"C\" __device__ const unsigned long long dlc_layout[] = {"
    DLC_HAND_SIZES(DLC_DEVICE_SIZE) DLC_HAND_OFFSETS(DLC_DEVICE_OFFSET) "};\n";

#if defined(DLC_ENABLE_CUDA)
/// The PTX of `source` for compute_80, or NVRTC's log after "error: ".
std::string ptxOf(const std::string &source) {
  nvrtcProgram program;
  if (nvrtcCreateProgram(&program, source.c_str(), "layout.cu", 0, nullptr, nullptr) !=
      NVRTC_SUCCESS)
    return "error: nvrtcCreateProgram";
  std::vector<std::string> options = KernelCompiler("").options();
  options.push_back("--gpu-architecture=compute_80");
  std::vector<const char *> argv;
  for (const std::string &o : options)
    argv.push_back(o.c_str());
  std::string out;
  size_t size = 0;
  if (nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data()) != NVRTC_SUCCESS) {
    nvrtcGetProgramLogSize(program, &size);
    out.assign(size, '\0');
    nvrtcGetProgramLog(program, out.data());
    out = "error: " + out;
  } else {
    nvrtcGetPTXSize(program, &size);
    out.assign(size, '\0');
    nvrtcGetPTX(program, out.data());
  }
  nvrtcDestroyProgram(&program);
  return out;
}

/// dlc_layout's values from the PTX: `.b8 dlc_layout[N] = {...}` (bytes,
/// little-endian, trailing zeros left out) or `.u64 dlc_layout[N] = {...}`.
std::vector<unsigned long long> layoutFromPtx(const std::string &ptx) {
  size_t at = ptx.find("dlc_layout[");
  if (at == std::string::npos)
    return {};
  size_t line = ptx.rfind('\n', at) + 1, open = ptx.find('{', at), close = ptx.find('}', at);
  bool bytes = ptx.substr(line, at - line).find(".b8") != std::string::npos;
  size_t length = std::stoull(ptx.substr(at + 11));
  std::vector<unsigned long long> raw(length, 0);
  std::stringstream items(ptx.substr(open + 1, close - open - 1));
  std::string item;
  for (size_t k = 0; k < length && std::getline(items, item, ','); ++k)
    raw[k] = std::stoull(item);
  if (!bytes)
    return raw;
  std::vector<unsigned long long> words(length / 8, 0);
  for (size_t k = 0; k < length; ++k)
    words[k / 8] |= raw[k] << (8 * (k % 8));
  return words;
}
#endif

} // namespace

TEST(HandKernelArgs, EveryFamilySourceHoldsTheFilesAsTheyAre) {
  for (const char *path : {"runtime/include/dlc/runtime/cuda/HandKernelArgs.h",
                           "runtime/src/codegen/kernels/HalfToFloat.cuh",
                           "runtime/src/codegen/kernels/FloatToHalf.cuh"}) {
    std::string text = sourceFile(path);
    ASSERT_FALSE(text.empty()) << path;
    for (const std::string &family : handKernelFamilies())
      EXPECT_NE(handKernelSource(family).find(text), std::string::npos)
          << family << "'s source does not hold " << path << " as it is (a stale embedding?)";
  }
}

TEST(HandKernelArgs, NvrtcLaysOutTheParametersAsTheHost) {
  if (!nvrtcBuilt())
    GTEST_SKIP() << "needs NVRTC: " << nvrtcVersionString().status().toString();
#if defined(DLC_ENABLE_CUDA)
  for (const std::string &family : handKernelFamilies()) {
    std::string ptx = ptxOf(handKernelSource(family) + kDeviceLayout);
    ASSERT_NE(ptx.rfind("error: ", 0), 0u) << family << ": " << ptx;
    EXPECT_EQ(layoutFromPtx(ptx), kHostLayout) << family;
  }
#endif
}
