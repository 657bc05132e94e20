//===- Passes.td - train -> train passes --------------------*- tablegen -*-===//

#ifndef DLC_TRANSFORMS_PASSES_TD
#define DLC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def SpecializeBatchPass : Pass<"dlc-specialize-batch", "::mlir::ModuleOp"> {
  let summary = "gives the dynamic batch dimension a size and re-infers every shape";
  let description = [{
    Model files keep the batch dimension of their inputs and labels dynamic
    (`?`). This pass replaces it with `batch-size` in the signature of every
    function, then re-infers the result type of every op in order, so each
    shape downstream becomes static. Shape errors that only show with a
    concrete batch (a reshape whose element count does not divide) are
    reported here, on the op.

    Before, with `--dlc-specialize-batch=batch-size=8`:

    ```mlir
    func.func @forward(%x: tensor<?x16xf32> {train.input}, ...) -> tensor<f32> {
      %h = train.linear %x, %w : tensor<?x16xf32>, tensor<4x16xf32>
    ```

    After:

    ```mlir
    func.func @forward(%x: tensor<8x16xf32> {train.input}, ...) -> tensor<f32> {
      %h = train.linear %x, %w : tensor<8x16xf32>, tensor<4x16xf32>
    ```

    Every op in a specialized function must implement InferTypeOpInterface
    (or be `func.return`); any other op is an error, since its result types
    could go stale.
  }];
  let options = [
    Option<"batchSize", "batch-size", "int64_t", /*default=*/"0",
           "the batch size to substitute for the dynamic batch dimension">,
  ];
  let statistics = [
    Statistic<"numSpecializedArgs", "specialized-args",
              "Number of function arguments whose batch dimension was set">,
    Statistic<"numReinferredOps", "reinferred-ops",
              "Number of ops whose result types were re-inferred">,
  ];
  let dependentDialects = ["::mlir::dlc::train::TrainDialect"];
}

#endif // DLC_TRANSFORMS_PASSES_TD
