//===- TrainDialect.cpp - train dialect -----------------------------------===//
//
// Registration of the train dialect, constant materialization, and the
// verification of the model-file attributes (docs/ModelConventions.md).
//
//===----------------------------------------------------------------------===//

#include "dlc/Dialect/Train/IR/TrainDialect.h"
#include "dlc/Dialect/Train/IR/TrainOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::dlc::train;

#include "dlc/Dialect/Train/IR/TrainOpsDialect.cpp.inc"
#include "dlc/Dialect/Train/IR/TrainInterfaces.cpp.inc"

void TrainDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dlc/Dialect/Train/IR/TrainOps.cpp.inc"
      >();
}

Operation *TrainDialect::materializeConstant(OpBuilder &builder,
                                             Attribute value, Type type,
                                             Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}

namespace {

/// The keys each initializer accepts (beyond `init`), and which are needed.
struct InitializerSpec {
  StringRef name;
  SmallVector<StringRef, 4> required;
  SmallVector<StringRef, 4> optional;
};

const InitializerSpec *lookupInitializer(StringRef name) {
  static const InitializerSpec specs[] = {
      {"zeros", {}, {}},
      {"ones", {}, {}},
      {"constant", {"value"}, {}},
      {"normal", {"std"}, {"mean"}},
      {"truncated_normal", {"std"}, {"mean"}},
      {"uniform", {"low", "high"}, {}},
      {"kaiming_normal", {}, {"mode", "nonlinearity", "a"}},
      {"kaiming_uniform", {}, {"mode", "nonlinearity", "a"}},
      {"xavier_normal", {}, {"gain"}},
      {"xavier_uniform", {}, {"gain"}},
  };
  for (const InitializerSpec &spec : specs)
    if (spec.name == name)
      return &spec;
  return nullptr;
}

/// Verifies `{init = "...", key = value, ...}` of a parameter or buffer.
LogicalResult verifyInitializer(Operation *op, unsigned argIndex,
                                NamedAttribute attr) {
  auto fail = [&]() {
    return op->emitOpError() << "argument #" << argIndex << " '"
                             << attr.getName().getValue() << "' ";
  };
  auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
  if (!dict)
    return fail() << "expects a dictionary with an 'init' entry, got "
                  << attr.getValue();
  auto init = dict.getAs<StringAttr>("init");
  if (!init)
    return fail() << "expects a string 'init' entry naming the initializer";
  const InitializerSpec *spec = lookupInitializer(init.getValue());
  if (!spec)
    return fail() << "has unknown initializer \"" << init.getValue()
                  << "\" (expected zeros, ones, constant, normal, "
                     "truncated_normal, uniform, kaiming_normal, "
                     "kaiming_uniform, xavier_normal or xavier_uniform)";
  for (StringRef key : spec->required)
    if (!dict.get(key))
      return fail() << "expects '" << key << "' for initializer \""
                    << init.getValue() << "\"";
  for (NamedAttribute entry : dict) {
    StringRef key = entry.getName().getValue();
    if (key == "init")
      continue;
    // Set by dlc-convert-layout, not by models: the order the argument is
    // stored in, a permutation of its declared dimensions (checked against
    // the rank by the caller).
    if (key == "storage") {
      if (!isa<DenseI64ArrayAttr>(entry.getValue()))
        return fail() << "expects 'storage' to be an array of dimensions, got "
                      << entry.getValue();
      continue;
    }
    if (!llvm::is_contained(spec->required, key) &&
        !llvm::is_contained(spec->optional, key))
      return fail() << "has unexpected key '" << key << "' for initializer \""
                    << init.getValue() << "\"";
    if (key == "mode" || key == "nonlinearity") {
      auto str = dyn_cast<StringAttr>(entry.getValue());
      bool ok = str && (key == "mode"
                            ? (str.getValue() == "fan_in" ||
                               str.getValue() == "fan_out")
                            : (str.getValue() == "relu" ||
                               str.getValue() == "leaky_relu" ||
                               str.getValue() == "linear"));
      if (!ok)
        return fail() << "expects '" << key << "' to be "
                      << (key == "mode" ? "\"fan_in\" or \"fan_out\""
                                        : "\"relu\", \"leaky_relu\" or "
                                          "\"linear\"");
      continue;
    }
    if (!isa<FloatAttr>(entry.getValue()))
      return fail() << "expects '" << key << "' to be a float, got "
                    << entry.getValue();
  }
  if (auto std = dict.getAs<FloatAttr>("std"); std && std.getValueAsDouble() <= 0)
    return fail() << "expects a positive 'std'";
  auto low = dict.getAs<FloatAttr>("low"), high = dict.getAs<FloatAttr>("high");
  if (low && high && low.getValueAsDouble() >= high.getValueAsDouble())
    return fail() << "expects 'low' < 'high'";
  return success();
}

} // namespace

LogicalResult TrainDialect::verifyRegionArgAttribute(Operation *op,
                                                     unsigned regionIndex,
                                                     unsigned argIndex,
                                                     NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  // Declarations have no entry block: read the type from the signature.
  Type argType;
  if (auto func = dyn_cast<FunctionOpInterface>(op)) {
    if (argIndex < func.getNumArguments())
      argType = func.getArgumentTypes()[argIndex];
  } else if (op->getNumRegions() > regionIndex &&
             !op->getRegion(regionIndex).empty() &&
             argIndex < op->getRegion(regionIndex).getNumArguments()) {
    argType = op->getRegion(regionIndex).getArgument(argIndex).getType();
  }
  auto tensor = dyn_cast_or_null<RankedTensorType>(argType);

  if (name == kNameAttr) {
    auto str = dyn_cast<StringAttr>(attr.getValue());
    if (!str || str.getValue().empty())
      return op->emitOpError() << "argument #" << argIndex
                               << " 'train.name' expects a non-empty string";
    return success();
  }
  if (name == kInputAttr || name == kLabelAttr) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitOpError() << "argument #" << argIndex << " '" << name
                               << "' expects a unit attribute";
    if (!tensor)
      return op->emitOpError() << "argument #" << argIndex << " '" << name
                               << "' expects a ranked tensor argument";
    if (name == kLabelAttr && !tensor.getElementType().isInteger())
      return op->emitOpError() << "argument #" << argIndex
                               << " 'train.label' expects integer labels, got "
                               << tensor;
    for (int64_t d = 1; d < tensor.getRank(); ++d)
      if (tensor.isDynamicDim(d))
        return op->emitOpError()
               << "argument #" << argIndex
               << " expects only the batch dimension (0) to be dynamic, got "
               << tensor;
    return success();
  }
  if (name == kParamAttr || name == kBufferAttr || name == kOptimizerStateAttr) {
    if (failed(verifyInitializer(op, argIndex, attr)))
      return failure();
    if (!tensor || !tensor.hasStaticShape() ||
        !isa<FloatType>(tensor.getElementType()))
      return op->emitOpError()
             << "argument #" << argIndex << " '" << name
             << "' expects a float tensor of static shape, got " << argType;
    if (auto storage = cast<DictionaryAttr>(attr.getValue())
                           .getAs<DenseI64ArrayAttr>("storage")) {
      SmallVector<int64_t> sorted(storage.asArrayRef());
      llvm::sort(sorted);
      if (!llvm::equal(sorted, llvm::seq<int64_t>(0, tensor.getRank())))
        return op->emitOpError()
               << "argument #" << argIndex << " '" << name
               << "' expects 'storage' to be a permutation of its "
               << tensor.getRank() << " dimensions, got " << storage;
    }
    return success();
  }
  return op->emitOpError() << "has unknown train dialect argument attribute '"
                           << name << "'";
}

LogicalResult TrainDialect::verifyRegionResultAttribute(Operation *op,
                                                        unsigned regionIndex,
                                                        unsigned resultIndex,
                                                        NamedAttribute attr) {
  if (attr.getName().getValue() != kUpdateOfAttr)
    return op->emitOpError() << "has unknown train dialect result attribute '"
                             << attr.getName().getValue() << "'";
  auto index = dyn_cast<IntegerAttr>(attr.getValue());
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!index || !func || index.getInt() < 0 ||
      index.getInt() >= static_cast<int64_t>(func.getNumArguments()))
    return op->emitOpError() << "result #" << resultIndex
                             << " 'train.update_of' expects the index of an "
                                "argument, got "
                             << attr.getValue();
  if (func.getArgumentTypes()[index.getInt()] !=
      func.getResultTypes()[resultIndex])
    return op->emitOpError() << "result #" << resultIndex
                             << " updates argument #" << index.getInt()
                             << " of another type";
  return success();
}

LogicalResult TrainDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attr) {
  if (attr.getName().getValue() == kSeedGradientAttr) {
    if (!isa<ConstantOp>(op) || !isa<UnitAttr>(attr.getValue()))
      return op->emitOpError() << "'" << kSeedGradientAttr
                               << "' expects a unit attribute on a train.constant";
    return success();
  }
  if (attr.getName().getValue() != kOptimizerAttr)
    return op->emitOpError() << "has unknown train dialect attribute '"
                             << attr.getName().getValue() << "'";
  auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
  auto kind = dict ? dict.getAs<StringAttr>("kind") : StringAttr();
  if (!kind)
    return op->emitOpError()
           << "'train.optimizer' expects a dictionary with a string 'kind'";
  SmallVector<StringRef> keys;
  if (kind.getValue() == "sgd")
    keys = {"lr", "momentum", "weight_decay", "nesterov"};
  else if (kind.getValue() == "adamw")
    keys = {"lr", "beta1", "beta2", "epsilon", "weight_decay"};
  else
    return op->emitOpError() << "'train.optimizer' has unknown kind \""
                             << kind.getValue()
                             << "\" (expected \"sgd\" or \"adamw\")";
  for (NamedAttribute entry : dict) {
    StringRef key = entry.getName().getValue();
    if (key == "kind")
      continue;
    if (!llvm::is_contained(keys, key))
      return op->emitOpError() << "'train.optimizer' has unexpected key '"
                               << key << "' for \"" << kind.getValue() << "\"";
    bool ok = key == "nesterov" ? isa<BoolAttr>(entry.getValue())
                                : isa<FloatAttr>(entry.getValue());
    if (!ok)
      return op->emitOpError() << "'train.optimizer' expects '" << key
                               << "' to be a "
                               << (key == "nesterov" ? "bool" : "float");
  }
  return success();
}
