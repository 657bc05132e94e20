//===- Gpus.cpp - the GPUs a cost model can describe ----------------------===//
//
// Every value is a dense peak: NVIDIA's datasheets quote tensor-core figures
// "with sparsity" (2:4 structured) and note that dense ones are half, so the
// starred datasheet figures are halved here. FP16 and BF16 are the rates
// with FP32 accumulation, the mode training uses (on GeForce parts that is
// half the FP16-accumulate rate the box advertises).
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/perf/Gpus.h"

#include <cctype>

namespace dlc::rt::perf {

const std::vector<GpuPeak> &knownGpus() {
  static const std::vector<GpuPeak> table = {
      // NVIDIA A100 Tensor Core GPU datasheet (2021), SXM column: FP32 19.5,
      // TF32 Tensor 156 | 312*, BF16 and FP16 Tensor 312 | 624* (* sparsity).
      // Memory: HBM2 1,555 GB/s (40 GB; the 80 GB part 2,039); NVLink 600 GB/s
      // (12 links, both directions); PCIe Gen4 64 GB/s; 108 SMs and 40 MB L2
      // from the NVIDIA A100 Tensor Core GPU Architecture whitepaper.
      {"A100-SXM", "NVIDIA A100 SXM4 40/80 GB", 19.5, 156, 312, 312, 1555, 40, 108, 300, 32, 2048},
      // NVIDIA H100 Tensor Core GPU Architecture whitepaper (v1.0x), table
      // "H100 SXM5": FP32 66.9, TF32 Tensor 494.7, FP16 and BF16 Tensor with
      // FP32 accumulate 989.4 (dense). The H100 datasheet rounds the same
      // parts to 67, 989* and 1,979* with sparsity.
      // Same whitepaper: HBM3 3.35 TB/s, 132 SMs, 50 MB L2, NVLink 900 GB/s
      // (18 links, both directions), PCIe Gen5 128 GB/s.
      {"H100-SXM", "NVIDIA H100 SXM5 80 GB", 66.9, 494.7, 989.4, 989.4, 3350, 50, 132, 450,
       64, 2048},
      // Same whitepaper, table "H100 PCIe": FP32 51.2, TF32 Tensor 378,
      // FP16 and BF16 Tensor 756 (dense); datasheet: 51, 756*, 1,513*.
      // HBM2e 2.0 TB/s, 114 SMs, 50 MB L2, NVLink bridge 600 GB/s, PCIe Gen5.
      {"H100-PCIe", "NVIDIA H100 PCIe 80 GB", 51.2, 378, 756, 756, 2000, 50, 114, 300, 64, 2048},
      // NVIDIA H200 Tensor Core GPU datasheet (2024), H200 SXM column: FP32
      // 67, TF32 Tensor 989*, BF16 and FP16 Tensor 1,979* (* sparsity),
      // halved. The compute is the H100 SXM5's; only the memory differs.
      // HBM3e 4.8 TB/s, NVLink 900 GB/s, PCIe Gen5 128 GB/s; the H100's die
      // (132 SMs, 50 MB L2).
      {"H200", "NVIDIA H200 SXM 141 GB", 67, 494.5, 989.5, 989.5, 4800, 50, 132, 450, 64, 2048},
      // NVIDIA Tesla V100 GPU datasheet (2020), V100 SXM2 column: single
      // precision 15.7, tensor performance 125 (FP16 inputs, FP32
      // accumulate). Volta has no TF32 and no BF16 units.
      // HBM2 900 GB/s, NVLink 300 GB/s (6 links, both directions), PCIe Gen3
      // 32 GB/s; 80 SMs and 6 MB L2 from the Volta architecture whitepaper.
      {"V100-SXM2", "NVIDIA Tesla V100 SXM2 16/32 GB", 15.7, 0, 125, 0, 900, 6, 80, 150, 16, 2048},
      // NVIDIA A10 Tensor Core GPU datasheet (2021): FP32 31.2, TF32 Tensor
      // 62.5 | 125*, BF16 and FP16 Tensor 125 | 250*.
      // GDDR6 600 GB/s, PCIe Gen4 64 GB/s, no NVLink; 72 SMs, 6 MB L2 (GA102).
      {"A10", "NVIDIA A10 24 GB", 31.2, 62.5, 125, 125, 600, 6, 72, 0, 32, 1536},
      // NVIDIA L4 Tensor Core GPU datasheet (2023): FP32 30.3, TF32 Tensor
      // 120*, FP16 and BF16 Tensor 242* (* sparsity), halved.
      // GDDR6 300 GB/s, PCIe Gen4 x16 64 GB/s; 58 SMs, 48 MB L2 (AD104).
      {"L4", "NVIDIA L4 24 GB", 30.3, 60, 121, 121, 300, 48, 58, 0, 32, 1536},
      // NVIDIA Ada GPU Architecture whitepaper (v2.1), appendix table
      // "GeForce RTX 4090": peak FP32 82.6, TF32 Tensor 82.6/165.2, FP16 and
      // BF16 Tensor with FP32 accumulate 165.2/330.4 (dense/sparse).
      // Same appendix: GDDR6X 1,008 GB/s, 128 SMs, 72 MB L2; PCIe Gen4.
      {"RTX-4090", "NVIDIA GeForce RTX 4090 24 GB", 82.6, 82.6, 165.2, 165.2, 1008, 72, 128, 0,
       32, 1536},
  };
  return table;
}

namespace {

std::string canonical(const std::string &name) {
  std::string out;
  for (char c : name)
    if (c != ' ' && c != '-' && c != '_')
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

} // namespace

const GpuPeak *findKnownGpu(const std::string &name) {
  for (const GpuPeak &gpu : knownGpus())
    if (canonical(gpu.name) == canonical(name))
      return &gpu;
  return nullptr;
}

DeviceSpec deviceSpecOf(const GpuPeak &gpu) {
  DeviceSpec d;
  d.name = gpu.name;
  d.fp32Flops = gpu.fp32 * 1e12;
  d.tf32Flops = gpu.tf32 * 1e12;
  d.fp16Flops = gpu.fp16 * 1e12;
  d.bf16Flops = gpu.bf16 * 1e12;
  d.memoryBandwidth = gpu.memoryGBs * 1e9;
  d.l2Bytes = gpu.l2MB * 1e6;
  d.sms = gpu.sms;
  d.threadsPerSm = gpu.threadsPerSm;
  return d;
}

} // namespace dlc::rt::perf
