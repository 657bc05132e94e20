//===- TrainToPlan.cpp - lower @train_step to a runtime plan --------------===//
//
// The last step of the compiler: values become buffers in one arena, ops
// become kernel invocations. Kernels are named after their op and carry the
// op's attributes unchanged, so the runtime's kernels read the same
// attribute names the dialect documents and this file needs no per-op code.
//
//===----------------------------------------------------------------------===//

#include "dlc/Target/Plan/TrainToPlan.h"

#include "PadRows.h"

#include "dlc/Dialect/Train/IR/TrainOps.h"
#include "dlc/runtime/MemoryPlanner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::dlc;
namespace rt = ::dlc::rt;

namespace {

FailureOr<rt::DType> dtypeOf(Location loc, Type element) {
  if (element.isF32())
    return rt::DType::kF32;
  if (element.isF16())
    return rt::DType::kF16;
  if (element.isBF16())
    return rt::DType::kBF16;
  if (element.isSignlessInteger(32))
    return rt::DType::kI32;
  if (element.isSignlessInteger(64))
    return rt::DType::kI64;
  return emitError(loc) << "cannot lower element type " << element
                        << " to a plan buffer";
}

/// Converts an op or initializer attribute; nullopt for kinds plans do not
/// carry.
std::optional<rt::PlanAttr> convertAttr(Attribute attr) {
  if (auto b = dyn_cast<BoolAttr>(attr))
    return rt::PlanAttr(int64_t(b.getValue()));
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return rt::PlanAttr(i.getInt());
  if (auto f = dyn_cast<FloatAttr>(attr))
    return rt::PlanAttr(f.getValueAsDouble());
  if (auto s = dyn_cast<StringAttr>(attr))
    return rt::PlanAttr(s.str());
  if (auto a = dyn_cast<DenseI64ArrayAttr>(attr))
    return rt::PlanAttr(std::vector<int64_t>(a.asArrayRef()));
  if (auto t = dyn_cast<TypeAttr>(attr)) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << t.getValue();
    return rt::PlanAttr(text);
  }
  return std::nullopt;
}

/// Builds the plan: buffers and kernels first, offsets last.
class PlanBuilder {
public:
  PlanBuilder(func::FuncOp step, bool padRows) : step(step), padRowsOn(padRows) {}

  LogicalResult build(rt::Plan &plan, PlanStats *stats);

private:
  FailureOr<int32_t> addBuffer(Value value, StringRef name, rt::BufferRole role);
  LogicalResult addArguments();
  LogicalResult addKernel(Operation *op);
  LogicalResult addFusedGroup(train::FusedOp fused);
  LogicalResult assignOffsets(PlanStats *stats);

  func::FuncOp step;
  bool padRowsOn;
  rt::Plan *plan = nullptr;
  DenseMap<Value, int32_t> bufferOf;
  /// Buffers sharing storage (reshape views, in-place updates) point at the
  /// buffer that owns the storage.
  std::vector<int32_t> storageOf;
  /// Per storage: first and last kernel touching it.
  std::vector<int64_t> firstUse, lastUse;
  /// Arguments (and the loss) live across the whole step.
  std::vector<bool> persistent;
  /// The fused group being lowered, if any, and the next group's number.
  std::optional<rt::PlanAttrs> groupAttrs;
  rt::FusionKind groupKind = rt::FusionKind::kNone;
  int64_t nextGroup = 0;
  /// Each fused group's first and last kernel.
  std::vector<std::pair<int64_t, int64_t>> groupRanges;
};

FailureOr<int32_t> PlanBuilder::addBuffer(Value value, StringRef name,
                                          rt::BufferRole role) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return emitError(value.getLoc())
           << "cannot lower a value of type " << value.getType()
           << " to a plan buffer: shapes must be static";
  FailureOr<rt::DType> dtype = dtypeOf(value.getLoc(), type.getElementType());
  if (failed(dtype))
    return failure();
  rt::PlanBuffer buffer;
  buffer.name = name.str();
  buffer.dtype = *dtype;
  buffer.shape.assign(type.getShape().begin(), type.getShape().end());
  buffer.role = role;
  // A huge batch makes shapes whose byte size wraps; the plan would be
  // refused later with a negative size that names nothing.
  int64_t elements = 1;
  bool overflow = false;
  for (int64_t d : buffer.shape)
    overflow |= __builtin_mul_overflow(elements, d, &elements);
  if (overflow ||
      __builtin_mul_overflow(elements, rt::dtypeBytes(*dtype), &buffer.bytes))
    return emitError(value.getLoc())
           << "buffer '" << name << "' of type " << type
           << " has more bytes than fit in int64";
  int32_t id = static_cast<int32_t>(plan->buffers.size());
  plan->buffers.push_back(std::move(buffer));
  storageOf.push_back(id);
  firstUse.push_back(-1);
  lastUse.push_back(-1);
  persistent.push_back(false);
  bufferOf[value] = id;
  return id;
}

LogicalResult PlanBuilder::addArguments() {
  using train::TrainDialect;
  const std::pair<StringRef, rt::BufferRole> roles[] = {
      {TrainDialect::kInputAttr, rt::BufferRole::kInput},
      {TrainDialect::kLabelAttr, rt::BufferRole::kLabel},
      {TrainDialect::kParamAttr, rt::BufferRole::kParam},
      {TrainDialect::kBufferAttr, rt::BufferRole::kState},
      {TrainDialect::kOptimizerStateAttr, rt::BufferRole::kOptimizerState}};
  for (BlockArgument arg : step.getArguments()) {
    unsigned i = arg.getArgNumber();
    std::optional<rt::BufferRole> role;
    Attribute init;
    for (auto [attrName, r] : roles)
      if (Attribute attr = step.getArgAttr(i, attrName)) {
        role = r;
        init = attr;
      }
    if (!role)
      return step.emitOpError() << "argument #" << i
                                << " has no role (train.input, train.label, "
                                   "train.param, train.buffer or "
                                   "train.optimizer_state)";
    auto name = step.getArgAttrOfType<StringAttr>(i, TrainDialect::kNameAttr);
    FailureOr<int32_t> id =
        addBuffer(arg, name ? name.getValue() : ("arg" + Twine(i)).str(), *role);
    if (failed(id))
      return failure();
    if (auto dict = dyn_cast<DictionaryAttr>(init))
      for (NamedAttribute entry : dict)
        if (auto value = convertAttr(entry.getValue()))
          plan->buffers[*id].init[entry.getName().str()] = *value;
    persistent[*id] = true;
  }
  return success();
}

LogicalResult PlanBuilder::addKernel(Operation *op) {
  StringRef opName = op->getName().getStringRef();
  if (!opName.consume_front("train."))
    return op->emitOpError() << "cannot be lowered to a plan kernel: only "
                                "train ops can";
  std::string prefix = ("%" + Twine(plan->kernels.size()) + "." + opName).str();

  if (auto fused = dyn_cast<train::FusedOp>(op))
    return addFusedGroup(fused);

  // Constants: their bytes go into the plan, no kernel runs.
  if (auto constant = dyn_cast<train::ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (!dense)
      return op->emitOpError() << "cannot lower a non-dense constant";
    FailureOr<int32_t> id =
        addBuffer(constant.getOutput(), prefix, rt::BufferRole::kConstant);
    if (failed(id))
      return failure();
    rt::PlanBuffer &buffer = plan->buffers[*id];
    if (dense.isSplat()) {
      ArrayRef<char> one = dense.getRawData();
      int64_t width = rt::dtypeBytes(buffer.dtype);
      for (int64_t i = 0; i < buffer.numElements(); ++i)
        buffer.data.append(one.data(), width);
    } else {
      buffer.data.assign(dense.getRawData().begin(), dense.getRawData().end());
    }
    persistent[*id] = true;
    return success();
  }

  // Reshapes are views: the result shares its input's storage.
  if (auto reshape = dyn_cast<train::ReshapeOp>(op)) {
    FailureOr<int32_t> id =
        addBuffer(reshape.getOutput(), prefix, rt::BufferRole::kTemporary);
    if (failed(id))
      return failure();
    storageOf[*id] = storageOf[bufferOf.lookup(reshape.getInput())];
    return success();
  }

  int64_t index = static_cast<int64_t>(plan->kernels.size());
  rt::PlanKernel kernel;
  std::optional<rt::OpId> id = rt::parseOpId(opName);
  if (!id)
    return op->emitOpError() << "has no op id (dlc/runtime/OpList.inc, generated from "
                                "ODS): the runtime cannot tell which op to run";
  kernel.setOp(*id);
  std::optional<rt::OpClass> opClass = train::getOpClass(op);
  if (!opClass)
    return op->emitOpError() << "has no op class (Train_OpClass in ODS): the runtime "
                                "cannot tell how to run it";
  kernel.opClass = *opClass;
  kernel.fusionKind = groupKind;
  for (Value operand : op->getOperands()) {
    int32_t id = bufferOf.lookup(operand);
    kernel.inputs.push_back(id);
    int32_t storage = storageOf[id];
    if (firstUse[storage] < 0)
      firstUse[storage] = index;
    lastUse[storage] = index;
  }
  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    std::string name = op->getNumResults() == 1
                           ? prefix
                           : prefix + "#" + std::to_string(i);
    FailureOr<int32_t> id = addBuffer(result, name, rt::BufferRole::kTemporary);
    if (failed(id))
      return failure();
    kernel.outputs.push_back(*id);
    firstUse[*id] = index;
    lastUse[*id] = index;
  }
  for (NamedAttribute attr : op->getAttrs()) {
    std::optional<rt::PlanAttr> value = convertAttr(attr.getValue());
    if (!value)
      return op->emitOpError() << "attribute '" << attr.getName().getValue()
                               << "' has a kind plans cannot carry";
    kernel.attrs[attr.getName().str()] = *value;
  }
  if (groupAttrs)
    kernel.attrs.insert(groupAttrs->begin(), groupAttrs->end());
  plan->kernels.push_back(std::move(kernel));
  return success();
}

/// A fused group's body ops become kernels tagged with the group, so the
/// CPU backend runs them one by one (the numerical reference) while
/// reports count the group as one kernel and a code generator sees which
/// ops to compile together.
LogicalResult PlanBuilder::addFusedGroup(train::FusedOp fused) {
  Block &body = fused.getBody().front();
  for (auto [arg, input] : llvm::zip(body.getArguments(), fused.getInputs()))
    bufferOf[arg] = bufferOf.lookup(input);
  std::optional<rt::FusionKind> kind = rt::parseFusionKind(fused.getKind().str());
  if (!kind)
    return fused.emitOpError() << "has fusion kind '" << fused.getKind()
                               << "', which the runtime does not know (OpKinds.h)";
  groupKind = *kind;
  groupAttrs = rt::PlanAttrs{{"fusion.group", nextGroup++},
                             {"fusion.strategy", fused.getStrategy().str()}};
  int64_t first = static_cast<int64_t>(plan->kernels.size());
  for (Operation &op : body.without_terminator())
    if (failed(addKernel(&op))) {
      groupAttrs.reset();
      groupKind = rt::FusionKind::kNone;
      return failure();
    }
  groupAttrs.reset();
  groupKind = rt::FusionKind::kNone;
  groupRanges.push_back({first, static_cast<int64_t>(plan->kernels.size()) - 1});
  auto yield = cast<train::YieldOp>(body.getTerminator());
  for (auto [result, value] : llvm::zip(fused.getResults(), yield.getValues()))
    bufferOf[result] = bufferOf.lookup(value);
  return success();
}

LogicalResult PlanBuilder::build(rt::Plan &result, PlanStats *stats) {
  plan = &result;
  if (failed(addArguments()))
    return failure();
  Block &body = step.front();
  for (Operation &op : body.without_terminator())
    if (failed(addKernel(&op)))
      return failure();

  // Results: the loss is read after the step; an update is written into the
  // storage of the argument it replaces, if the update is that argument's
  // last reader (always so for autodiff's optimizer and batch-norm updates).
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (auto [r, value] : llvm::enumerate(ret.getOperands())) {
    int32_t id = bufferOf.lookup(value);
    auto updateOf =
        step.getResultAttrOfType<IntegerAttr>(r, train::TrainDialect::kUpdateOfAttr);
    if (!updateOf) {
      if (r != 0)
        return step.emitOpError() << "result #" << r
                                  << " is neither the loss nor an update";
      plan->buffers[id].role = rt::BufferRole::kLoss;
      plan->buffers[id].name = "loss";
      persistent[storageOf[id]] = true;
      continue;
    }
    int32_t argId = bufferOf.lookup(step.getArgument(updateOf.getInt()));
    int32_t argStorage = storageOf[argId];
    if (storageOf[id] != id || lastUse[argStorage] > firstUse[id])
      return step.emitOpError()
             << "result #" << r << " cannot update argument #"
             << updateOf.getInt()
             << " in place: the argument is read after the update";
    storageOf[id] = argStorage;
    plan->buffers[id].name = plan->buffers[argId].name + "'";
    plan->buffers[id].role = rt::BufferRole::kUpdate;
  }
  // Padded rows change bytes, so they come before the offsets; the views
  // they add share their storage's lifetime (assignOffsets).
  int64_t padding = 0;
  if (padRowsOn) {
    padding = padRows(*plan, storageOf);
    firstUse.resize(storageOf.size(), -1);
    lastUse.resize(storageOf.size(), -1);
    persistent.resize(storageOf.size(), false);
  }
  if (failed(assignOffsets(stats)))
    return failure();
  if (stats)
    stats->paddingBytes = padding;
  plan->buffers.shrink_to_fit();
  return success();
}

LogicalResult PlanBuilder::assignOffsets(PlanStats *stats) {
  // A group is one kernel on a GPU: everything it reads or writes lives
  // from its first op to its last, or the planner could give an output the
  // bytes of an input another op of the group still reads. (After the
  // in-place decisions: an update in a group writes each element where the
  // same thread read it.)
  for (auto [first, last] : groupRanges)
    for (int64_t k = first; k <= last; ++k)
      for (const std::vector<int32_t> *ids :
           {&plan->kernels[k].inputs, &plan->kernels[k].outputs})
        for (int32_t id : *ids) {
          int32_t storage = storageOf[id];
          firstUse[storage] =
              firstUse[storage] < 0 ? first : std::min(firstUse[storage], first);
          lastUse[storage] = std::max(lastUse[storage], last);
        }
  // An all_reduce may run alongside the kernels after it until the first
  // that reads its result (rt::allReduceWaitPoints), as DDP overlaps a
  // bucket with the rest of the backward pass: its operands keep their
  // bytes until then, or a later temporary would be placed where the
  // collective still reads or writes.
  for (int64_t k = 0; k < static_cast<int64_t>(plan->kernels.size()); ++k) {
    const rt::PlanKernel &reduce = plan->kernels[k];
    if (reduce.id != rt::OpId::kAllReduce)
      continue;
    llvm::SmallDenseSet<int32_t> results;
    for (int32_t id : reduce.outputs)
      results.insert(storageOf[id]);
    int64_t reader = static_cast<int64_t>(plan->kernels.size()) - 1;
    for (int64_t j = k + 1; j < static_cast<int64_t>(plan->kernels.size()); ++j)
      if (llvm::any_of(plan->kernels[j].inputs,
                       [&](int32_t id) { return results.contains(storageOf[id]); })) {
        reader = j;
        break;
      }
    for (const std::vector<int32_t> *ids : {&reduce.inputs, &reduce.outputs})
      for (int32_t id : *ids)
        lastUse[storageOf[id]] = std::max(lastUse[storageOf[id]], reader);
  }
  // One lifetime per storage owner; views extend their owner's lifetime.
  size_t n = plan->buffers.size();
  int64_t end = std::max<int64_t>(static_cast<int64_t>(plan->kernels.size()) - 1, 0);
  for (size_t id = 0; id < n; ++id) {
    int32_t owner = storageOf[id];
    if (owner == static_cast<int32_t>(id))
      continue;
    if (firstUse[id] >= 0)
      firstUse[owner] = firstUse[owner] < 0 ? firstUse[id]
                                            : std::min(firstUse[owner], firstUse[id]);
    lastUse[owner] = std::max(lastUse[owner], lastUse[id]);
  }
  std::vector<int32_t> owners;
  std::vector<rt::BufferLifetime> lifetimes;
  for (size_t id = 0; id < n; ++id) {
    if (storageOf[id] != static_cast<int32_t>(id))
      continue;
    rt::BufferLifetime life;
    life.bytes = plan->buffers[id].bytes;
    if (persistent[id] || firstUse[id] < 0) {
      life.firstUse = 0;
      life.lastUse = end;
    } else {
      life.firstUse = firstUse[id];
      life.lastUse = std::max(lastUse[id], firstUse[id]);
    }
    owners.push_back(static_cast<int32_t>(id));
    lifetimes.push_back(life);
  }
  rt::StatusOr<rt::MemoryPlan> memory = rt::planMemory(lifetimes);
  if (!memory.isOk())
    return step.emitOpError() << "memory planning failed: "
                              << memory.status().toString();
  for (auto [owner, offset] : llvm::zip(owners, memory->offsets))
    plan->buffers[owner].offset = offset;
  for (size_t id = 0; id < n; ++id)
    plan->buffers[id].offset = plan->buffers[storageOf[id]].offset;
  plan->arenaBytes = memory->peakBytes;
  if (stats) {
    stats->kernels = static_cast<int64_t>(plan->kernels.size());
    stats->totalBufferBytes = memory->totalBytes;
    stats->lowerBoundBytes = memory->lowerBoundBytes;
  }
  return success();
}

} // namespace

FailureOr<rt::Plan> mlir::dlc::lowerToPlan(ModuleOp module,
                                           const PlanOptions &options,
                                           PlanStats *stats) {
  auto step = module.lookupSymbol<func::FuncOp>("train_step");
  if (!step || step.isExternal())
    return module.emitError()
           << "expects a func.func @train_step with a body (run dlc-autodiff)";
  rt::Plan plan;
  plan.model = options.model;
  plan.precision = options.precision;
  plan.fusion = options.fusion;
  // The batch is dimension 0 of the model's inputs.
  for (BlockArgument arg : step.getArguments())
    if (step.getArgAttr(arg.getArgNumber(), train::TrainDialect::kInputAttr))
      if (auto shaped = dyn_cast<ShapedType>(arg.getType());
          shaped && shaped.getRank() > 0) {
        plan.batch = shaped.getDimSize(0);
        break;
      }
  PlanBuilder builder(step, options.padRows);
  if (failed(builder.build(plan, stats)))
    return failure();
  if (rt::Status status = rt::validatePlan(plan); !status.isOk())
    return step.emitOpError() << "produced an invalid plan: "
                              << status.toString();
  return plan;
}
