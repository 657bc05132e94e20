//===- Plan.h - the compiled training step, as the runtime sees it -*- C++ -*-===//
//
// The plan is the contract between compiler and runtime (DESIGN.md): a list
// of kernel invocations over buffers at offsets in one arena. It is written
// to a versioned, checksummed file so that a plan compiled on one machine
// runs on another that has no MLIR.
//
// File layout (little-endian):
//   magic "DLCPLAN\n" | u32 format version | u64 payload bytes | payload |
//   u64 FNV-1a hash of the payload
// The payload opens with the op table's fingerprint (Ops.h) and names each
// kernel's op by its OpId. A file of another version, one compiled for
// another op set, a truncated file and a corrupt file are each refused with
// a message that says which.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_PLAN_H
#define DLC_RUNTIME_PLAN_H

#include "dlc/runtime/OpKinds.h"
#include "dlc/runtime/Ops.h"
#include "dlc/runtime/Status.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace dlc::rt {

/// Bumped whenever the payload layout changes; readers refuse other versions.
/// 3: kernels name their op by OpId, and the payload records the op table.
constexpr uint32_t kPlanFormatVersion = 3;

enum class DType : uint8_t { kF32, kF16, kBF16, kI32, kI64 };
int64_t dtypeBytes(DType dtype);
const char *dtypeName(DType dtype);
/// f32, f16 or bf16.
bool isFloatType(DType dtype);

/// What a buffer holds; decides whether it persists across steps.
enum class BufferRole : uint8_t {
  kInput,          // model input, written before each step
  kLabel,          // labels, written before each step
  kParam,          // trainable parameter, persistent
  kState,          // non-trainable state (batch-norm running stats), persistent
  kOptimizerState, // momentum / Adam moments, persistent
  kGradient,       // a parameter's gradient
  kTemporary,      // an activation or intermediate
  kLoss,           // the scalar loss, read after each step
  kConstant,       // a constant of the model; its bytes are in the plan
  kUpdate,         // the next value of a persistent buffer, written in place
};
const char *bufferRoleName(BufferRole role);

/// A kernel or initializer attribute: an integer, a float, a string or an
/// integer list.
using PlanAttr = std::variant<int64_t, double, std::string, std::vector<int64_t>>;
using PlanAttrs = std::map<std::string, PlanAttr, std::less<>>;

/// The attribute `name` if it is present and a T, else null.
template <typename T> const T *findAttr(const PlanAttrs &attrs, std::string_view name) {
  auto it = attrs.find(name);
  return it == attrs.end() ? nullptr : std::get_if<T>(&it->second);
}

struct PlanBuffer {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  BufferRole role = BufferRole::kTemporary;
  int64_t offset = 0; // bytes from the start of the arena
  int64_t bytes = 0;
  /// Parameters, state and optimizer state: how to initialize, as the model
  /// file says ({"init": "kaiming_normal", "mode": "fan_out", ...}). Also
  /// the storage-layout facts a buffer can carry: `storage` (a stored
  /// order, storagePermutation), `row_stride` (padded rows, rowStride) and
  /// `view_of` (another view of a buffer's storage, storageOwner).
  PlanAttrs init;
  /// Constants: the little-endian bytes of the value.
  std::string data;

  int64_t numElements() const;
};


struct PlanKernel {
  /// The train op it runs, e.g. OpId::kConv2dBackwardFilter. Set it with
  /// setOp, which keeps `op` in step. The default, train.constant, is no
  /// kernel's op (constants are buffers): a kernel left unset has no CPU
  /// kernel and fails validatePlan.
  OpId id = OpId::kConstant;
  /// The op's name, opName(id), e.g. "conv2d_backward_filter": for messages,
  /// and for the code that still compares names while issue #33 moves it to
  /// `id`. The plan file carries `id` alone; reading one derives this, and
  /// validatePlan refuses a kernel whose name is not its id's.
  std::string op;
  std::vector<int32_t> inputs;  // buffer indices
  std::vector<int32_t> outputs; // buffer indices
  PlanAttrs attrs;
  OpClass opClass = OpClass::kOpaque;
  /// The pattern of the fused group it belongs to ("fusion.group"), or kNone.
  FusionKind fusionKind = FusionKind::kNone;

  /// Sets the op: `id` and its name `op`.
  void setOp(OpId newId) {
    id = newId;
    op = std::string(opName(newId));
  }

  /// Typed attributes: the value, or `fallback` when the attribute is absent
  /// or of another type.
  int64_t intAttr(std::string_view name, int64_t fallback) const {
    const int64_t *v = findAttr<int64_t>(attrs, name);
    return v ? *v : fallback;
  }
  double floatAttr(std::string_view name, double fallback) const {
    const double *v = findAttr<double>(attrs, name);
    return v ? *v : fallback;
  }
  std::string stringAttr(std::string_view name, const std::string &fallback) const {
    const std::string *v = findAttr<std::string>(attrs, name);
    return v ? *v : fallback;
  }
  std::vector<int64_t> intsAttr(std::string_view name, std::vector<int64_t> fallback) const {
    const std::vector<int64_t> *v = findAttr<std::vector<int64_t>>(attrs, name);
    return v ? *v : std::move(fallback);
  }
  /// An integer attribute read as a boolean; false when absent.
  bool flag(std::string_view name) const { return intAttr(name, 0) != 0; }
  /// The fused group's index, or -1.
  int64_t fusionGroup() const { return intAttr("fusion.group", -1); }
};

/// A parameter or optimizer state the compiler stores in another order than
/// the model declares it (dlc-convert-layout keeps an NHWC convolution's
/// filter OHWI, as PyTorch's channels_last does): `init["storage"]`, a
/// permutation read as train.transpose's, stored dimension i = declared
/// dimension perm[i]. Initializers, --params-in and --dump-out work in the
/// declared order; only the arena holds the stored one. Empty when stored
/// as declared.
std::vector<int64_t> storagePermutation(const PlanBuffer &buffer);
/// The shape the model declares: `shape` with the storage permutation undone.
std::vector<int64_t> declaredShape(const PlanBuffer &buffer);
/// A buffer's elements (`elementBytes` each) reordered from declared to
/// stored order, and back. The identity without a storage permutation.
std::string toStoredOrder(const PlanBuffer &buffer, std::string_view declared,
                          int64_t elementBytes);
std::string toDeclaredOrder(const PlanBuffer &buffer, std::string_view stored,
                            int64_t elementBytes);

/// A temporary whose rows the compiler padded so that every row starts
/// 16-byte aligned (compiler/lib/Target/Plan/PadRows.cpp; GPT-2's 50,257-wide
/// logits): `init["row_stride"]`, the elements from one row's start to the
/// next (at least the last dimension); 0 where the buffer is dense. Its
/// bytes are rows x row stride elements; element (r, c) of the rows the
/// leading dimensions flatten lies at r * rowStride + c, the padding
/// between rows holds no value. Only the kernels rowStrideRefusal
/// (RowStride.h) accepts read or write it; validatePlan checks that.
int64_t rowStride(const PlanBuffer &buffer);
/// The elements a buffer's bytes hold: its element count when dense, rows
/// x row stride when padded.
int64_t storageElements(const PlanBuffer &buffer);

/// The `layout` a convolution or batch norm runs in: "NCHW" (also when the
/// attribute is absent) or "NHWC" (channels last, filters OHWI).
std::string kernelLayout(const PlanKernel &kernel);

struct Plan {
  std::string model;
  int64_t batch = 0;
  std::string precision; // fp32 | amp | amp-bf16 | fp16
  std::string fusion;    // none | paddle | xla | a user pipeline
  int64_t arenaBytes = 0;
  std::vector<PlanBuffer> buffers;
  std::vector<PlanKernel> kernels;
};

/// The buffer whose storage buffer `id` is another view of: `init["view_of"]`
/// (the dense `.rows` views PadRows.cpp gives element-wise ops over padded
/// rows; same offset and bytes, validatePlan checks), else `id` itself.
/// Launch byte counts (PlanSummary, the cost model) read a write through
/// one view and a read through another as the same value. Reshape views
/// do not carry it yet.
int32_t storageOwner(const Plan &plan, int32_t id);

/// The data-parallel ranks a plan was compiled for: the `ranks` of its
/// all_reduce kernels, 1 without any.
int64_t planRanks(const Plan &plan);

/// Checks internal consistency: buffer indices in range, each buffer's bytes
/// equal to its element count times its element size and inside the arena,
/// constants carrying exactly their bytes.
Status validatePlan(const Plan &plan);

std::string serializePlan(const Plan &plan);
/// `source` names the bytes' origin (a path) in error messages.
StatusOr<Plan> deserializePlan(std::string_view bytes, const std::string &source);

Status writePlanFile(const Plan &plan, const std::string &path);
StatusOr<Plan> readPlanFile(const std::string &path);

} // namespace dlc::rt

#endif // DLC_RUNTIME_PLAN_H
