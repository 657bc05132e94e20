//===- Optimizer.cpp - one parameter's SGD or AdamW update ----------------===//
//
// The CPU's formulas (torch.optim semantics) element by element in double,
// for the single updates the generator's grouped optimizer kernel does not
// take. The loss-scale status operand ({gradient multiplier, skip flag})
// is optional; a skipped step copies parameter and state through. The
// dynamic loss scale is here too: its status (one block reading every
// gradient) and its update (one thread, three scalars).
//
// loss_scale_status reads every parameter gradient of the model, usually
// far more than DlcHandArgs' ten pointers, so its gradients come in an
// operand table (DlcHandOperand entries: pointer, elements, type) which
// the launcher fills and places in device memory, its address in one slot
// (HandKernel::table). Its flag is an OR: the blocks split every gradient
// and the last to finish ORs their flags (HandKernel::scratch).
//
//===----------------------------------------------------------------------===//

#include "Sources.h"

namespace dlc::rt::cuda::handwritten {

namespace {
#include "kHandOptimizerText.inc"
} // namespace

const char *optimizerBody() { return kHandOptimizerText; }

} // namespace dlc::rt::cuda::handwritten
