//===- Passes.td - passes over the lowered step -------------*- tablegen -*-===//

#ifndef DLC_TARGET_PLAN_PASSES_TD
#define DLC_TARGET_PLAN_PASSES_TD

include "mlir/Pass/PassBase.td"

def ReportStepPass : Pass<"dlc-report-step", "::mlir::ModuleOp"> {
  let summary = "prints what @train_step lowers to: kernels by kind, fused groups, bytes";
  let description = [{
    Lowers the module's `@train_step` to a plan, as dlc-bench does, and
    prints the plan's counts without changing the IR: parameters, forward
    multiply-accumulates per sample, training FLOPs per step, kernel
    launches by implementation (library, generated, hand-written), fused
    groups by kind, bytes moved per step and the arena. Put it at the end of
    a pipeline to see what the passes before it bought:

    ```
    dlc-opt models/resnet50.mlir --dlc-specialize-batch=batch-size=32 \
        --dlc-autodiff --dlc-fuse-elementwise-activation --dlc-report-step
    ```
  }];
}

#endif // DLC_TARGET_PLAN_PASSES_TD
