//===- Executor.cpp - what every backend offers a caller ------------------===//

#include "dlc/runtime/Executor.h"

namespace dlc::rt {

StatusOr<const PlanBuffer *> Executor::sizedBuffer(const std::string &name,
                                                   size_t bytes) const {
  const PlanBuffer *b = buffer(name);
  if (!b)
    return Status(StatusCode::kInvalidArgument, "the plan has no buffer '" + name + "'");
  if (static_cast<int64_t>(bytes) != b->bytes)
    return Status(StatusCode::kInvalidArgument,
                  "buffer '" + name + "' holds " + std::to_string(b->bytes) +
                      " bytes, not " + std::to_string(bytes));
  return b;
}

} // namespace dlc::rt
