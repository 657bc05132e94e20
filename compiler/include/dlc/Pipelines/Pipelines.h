//===- Pipelines.h - the named compilation pipelines ------------*- C++ -*-===//
//
// What `dlc-bench --fusion S --precision P` compiles a model with, built in
// one place so that dlc-opt's named pipelines (`--pass-pipeline=
// 'builtin.module(dlc-fusion-xla)'`) and dlc-bench run the same passes.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PIPELINES_PIPELINES_H
#define DLC_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"

#include <string>
#include <vector>

namespace mlir::dlc {

/// The fusion strategies dlc-bench names, in the order reports list them.
inline const char *const kFusionStrategies[] = {"none", "paddle", "xla"};

/// The fusion kinds a user may leave out of a strategy (--disable-fusion),
/// with the strategies that form each.
struct FusionKindInfo {
  const char *name;
  const char *strategy; // space-separated
  const char *what;
};
extern const FusionKindInfo kFusionKinds[];
extern const size_t kNumFusionKinds;

struct FusionPipelineOptions {
  std::string strategy = "none"; // none | paddle | xla
  /// PaddlePaddle's FP16-NHWC gate on batch-norm fusion, lifted.
  bool paddleRelaxGate = false;
  /// Kinds of kFusionKinds not to form.
  std::vector<std::string> disabled;
  /// Fusion passes explain every refusal as a remark.
  bool explain = false;
};

/// Adds the passes of a fusion strategy to `pm` (run on the module after
/// dlc-autodiff). Fails, with `error` set, on an unknown strategy or a kind
/// to disable that the strategy does not form.
LogicalResult buildFusionPipeline(OpPassManager &pm,
                                  const FusionPipelineOptions &options,
                                  std::string &error);

/// The precision modes dlc-bench names: fp32, AMP with fp16 and dynamic
/// loss scaling, AMP with bf16 (no scaling), pure fp16 (with scaling).
inline const char *const kPrecisions[] = {"fp32", "amp", "amp-bf16", "fp16"};

struct PrecisionPipelineOptions {
  std::string precision = "fp32";
  double initLossScale = 65536.0;
  int64_t growthInterval = 2000;
};

/// Adds the precision passes that run before dlc-autodiff (autocast of the
/// forward pass) or after it (loss scaling). Fails, with `error` set, on an
/// unknown precision.
LogicalResult buildPrecisionPipeline(OpPassManager &pm,
                                     const PrecisionPipelineOptions &options,
                                     bool beforeAutodiff, std::string &error);

/// The layouts dlc-bench --layout names: `auto` (NHWC in the half
/// precisions, where cuDNN's tensor-core convolutions and fused batch norm
/// want it; NCHW in fp32), `nchw` (the models' own) and `nhwc`.
inline const char *const kLayouts[] = {"auto", "nchw", "nhwc"};

/// The layout convolutions and batch norm run in, "NCHW" or "NHWC", for a
/// --layout name and a precision; fails, with `error` set, on an unknown
/// name.
FailureOr<std::string> resolveLayout(StringRef layout, StringRef precision,
                                     std::string &error);

/// Adds dlc-convert-layout (after dlc-autodiff and the precision passes,
/// before fusion) when the resolved layout is not the models' NCHW.
LogicalResult buildLayoutPipeline(OpPassManager &pm, StringRef layout,
                                  StringRef precision, std::string &error);

/// Registers `dlc-fusion-paddle` and `dlc-fusion-xla` as named pipelines.
void registerFusionPipelines();

} // namespace mlir::dlc

#endif // DLC_PIPELINES_PIPELINES_H
