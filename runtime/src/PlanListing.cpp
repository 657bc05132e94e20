//===- PlanListing.cpp - a plan as text a person reads --------------------===//

#include "dlc/runtime/PlanListing.h"

#include <sstream>

namespace dlc::rt {

namespace {

std::string listOf(const std::vector<int64_t> &values) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < values.size(); ++i)
    os << (i ? ", " : "") << values[i];
  os << "]";
  return os.str();
}

/// Attributes as `name = value`, in the plan's (sorted) order.
std::string attrsText(const PlanAttrs &attrs) {
  std::ostringstream os;
  const char *separator = "";
  for (const auto &[name, value] : attrs) {
    os << separator << name << " = ";
    separator = ", ";
    if (const int64_t *i = std::get_if<int64_t>(&value))
      os << *i;
    else if (const double *d = std::get_if<double>(&value))
      os << *d;
    else if (const std::string *s = std::get_if<std::string>(&value))
      os << '"' << *s << '"';
    else
      os << listOf(std::get<std::vector<int64_t>>(value));
  }
  return os.str();
}

} // namespace

void printPlanListing(std::ostream &os, const Plan &plan) {
  os << "plan " << plan.model << ": batch " << plan.batch << ", precision " << plan.precision
     << ", fusion " << plan.fusion << ", ranks " << planRanks(plan) << ", arena " << plan.arenaBytes
     << " bytes\n\n"
     << "buffers (" << plan.buffers.size() << "):\n";
  for (const PlanBuffer &b : plan.buffers) {
    os << "  " << b.name << ": " << bufferRoleName(b.role) << " " << dtypeName(b.dtype)
       << listOf(b.shape) << " at " << b.offset << ", " << b.bytes << " bytes";
    if (!b.init.empty())
      os << "  {" << attrsText(b.init) << "}";
    os << "\n";
  }
  os << "\nkernels (" << plan.kernels.size() << ", in launch order):\n";
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    const PlanKernel &kernel = plan.kernels[k];
    os << "  #" << k << " " << kernel.op << " [" << opClassName(kernel.opClass);
    if (kernel.fusionKind != FusionKind::kNone)
      os << ", " << fusionKindName(kernel.fusionKind) << " group " << kernel.fusionGroup();
    os << "] (";
    for (size_t i = 0; i < kernel.inputs.size(); ++i)
      os << (i ? ", " : "") << plan.buffers[kernel.inputs[i]].name;
    os << ") -> (";
    for (size_t i = 0; i < kernel.outputs.size(); ++i)
      os << (i ? ", " : "") << plan.buffers[kernel.outputs[i]].name;
    os << ")";
    if (!kernel.attrs.empty())
      os << "  {" << attrsText(kernel.attrs) << "}";
    os << "\n";
  }
}

} // namespace dlc::rt
