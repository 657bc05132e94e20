//===- Plan.cpp - plan files: write, read, validate -----------------------===//

#include "dlc/runtime/DiskCache.h"
#include "dlc/runtime/Plan.h"
#include "dlc/runtime/OpRules.h"
#include "dlc/runtime/RowStride.h"

#include "dlc/runtime/Shape.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace dlc::rt {

namespace {

constexpr char kMagic[8] = {'D', 'L', 'C', 'P', 'L', 'A', 'N', '\n'};
constexpr size_t kHeaderBytes = sizeof(kMagic) + 4 + 8;
constexpr size_t kTrailerBytes = 8;

class Writer {
public:
  template <typename T> void pod(T value) {
    char raw[sizeof(T)];
    std::memcpy(raw, &value, sizeof(T));
    out.append(raw, sizeof(T));
  }
  void str(const std::string &s) {
    pod<uint64_t>(s.size());
    out += s;
  }
  void ints(const std::vector<int64_t> &v) {
    pod<uint64_t>(v.size());
    for (int64_t x : v)
      pod(x);
  }
  std::string out;
};

/// Reads the payload with bounds checks; the first overrun is remembered and
/// every later read returns zeros, so parsing code stays linear.
class Reader {
public:
  explicit Reader(std::string_view bytes) : bytes(bytes) {}
  template <typename T> T pod() {
    T value{};
    if (!take(sizeof(T)))
      return value;
    std::memcpy(&value, bytes.data() + pos - sizeof(T), sizeof(T));
    return value;
  }
  std::string str() {
    uint64_t n = pod<uint64_t>();
    if (!take(n))
      return {};
    return std::string(bytes.substr(pos - n, n));
  }
  std::vector<int64_t> ints() {
    uint64_t n = pod<uint64_t>();
    std::vector<int64_t> v;
    if (n > remaining() / sizeof(int64_t)) {
      failed = true;
      return v;
    }
    for (uint64_t i = 0; i < n; ++i)
      v.push_back(pod<int64_t>());
    return v;
  }
  /// Guards element counts read from the file before reserving.
  bool plausibleCount(uint64_t n, size_t minBytesEach) {
    if (n > remaining() / std::max<size_t>(minBytesEach, 1))
      failed = true;
    return !failed;
  }
  bool ok() const { return !failed; }
  bool atEnd() const { return pos == bytes.size(); }

private:
  size_t remaining() const { return bytes.size() - pos; }
  bool take(uint64_t n) {
    if (failed || n > remaining()) {
      failed = true;
      return false;
    }
    pos += n;
    return true;
  }
  std::string_view bytes;
  size_t pos = 0;
  bool failed = false;
};

std::string hex(uint64_t value) {
  char text[19];
  std::snprintf(text, sizeof(text), "0x%016llx", static_cast<unsigned long long>(value));
  return text;
}

enum AttrTag : uint8_t { kInt = 0, kFloat = 1, kString = 2, kInts = 3 };

void writeAttrs(Writer &out, const PlanAttrs &attrs) {
  out.pod<uint64_t>(attrs.size());
  for (const auto &[name, value] : attrs) {
    out.str(name);
    out.pod(static_cast<uint8_t>(value.index()));
    if (auto *i = std::get_if<int64_t>(&value))
      out.pod(*i);
    else if (auto *f = std::get_if<double>(&value))
      out.pod(*f);
    else if (auto *s = std::get_if<std::string>(&value))
      out.str(*s);
    else
      out.ints(std::get<std::vector<int64_t>>(value));
  }
}

/// Reads what writeAttrs wrote; false on an unknown attribute kind.
bool readAttrs(Reader &in, PlanAttrs &attrs) {
  uint64_t count = in.pod<uint64_t>();
  if (!in.plausibleCount(count, 9))
    return true; // the reader remembers the failure
  for (uint64_t a = 0; a < count && in.ok(); ++a) {
    std::string name = in.str();
    switch (in.pod<uint8_t>()) {
    case kInt: attrs[name] = in.pod<int64_t>(); break;
    case kFloat: attrs[name] = in.pod<double>(); break;
    case kString: attrs[name] = in.str(); break;
    case kInts: attrs[name] = in.ints(); break;
    default: return false;
    }
  }
  return true;
}

} // namespace

int64_t dtypeBytes(DType dtype) {
  switch (dtype) {
  case DType::kF32:
  case DType::kI32:
    return 4;
  case DType::kF16:
  case DType::kBF16:
    return 2;
  case DType::kI64:
    return 8;
  }
  return 0;
}

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::kF32: return "f32";
  case DType::kF16: return "f16";
  case DType::kBF16: return "bf16";
  case DType::kI32: return "i32";
  case DType::kI64: return "i64";
  }
  return "?";
}

bool isFloatType(DType t) { return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16; }

const char *bufferRoleName(BufferRole role) {
  switch (role) {
  case BufferRole::kInput: return "input";
  case BufferRole::kLabel: return "label";
  case BufferRole::kParam: return "param";
  case BufferRole::kState: return "state";
  case BufferRole::kOptimizerState: return "optimizer-state";
  case BufferRole::kGradient: return "gradient";
  case BufferRole::kTemporary: return "temporary";
  case BufferRole::kLoss: return "loss";
  case BufferRole::kConstant: return "constant";
  case BufferRole::kUpdate: return "update";
  }
  return "?";
}

int64_t PlanBuffer::numElements() const { return rt::numElements(shape); }

std::string kernelLayout(const PlanKernel &kernel) {
  return kernel.stringAttr("layout", "NCHW");
}

int64_t rowStride(const PlanBuffer &buffer) {
  const int64_t *stride = findAttr<int64_t>(buffer.init, "row_stride");
  return stride ? *stride : 0;
}

int64_t storageElements(const PlanBuffer &buffer) {
  int64_t stride = rowStride(buffer);
  return stride > 0 ? paddedRows(buffer) * stride : buffer.numElements();
}

int32_t storageOwner(const Plan &plan, int32_t id) {
  const int64_t *owner = findAttr<int64_t>(plan.buffers[id].init, "view_of");
  return owner && *owner >= 0 && *owner < static_cast<int64_t>(plan.buffers.size())
             ? static_cast<int32_t>(*owner)
             : id;
}

std::vector<int64_t> storagePermutation(const PlanBuffer &buffer) {
  const auto *perm = findAttr<std::vector<int64_t>>(buffer.init, "storage");
  return perm ? *perm : std::vector<int64_t>{};
}

namespace {

bool isPermutation(const std::vector<int64_t> &perm, size_t rank) {
  if (perm.size() != rank)
    return false;
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[p])
      return false;
    seen[p] = true;
  }
  return true;
}

/// out = transpose(in, perm): out dimension i is in dimension perm[i].
std::string permuteElements(std::string_view in, const std::vector<int64_t> &inShape,
                            const std::vector<int64_t> &perm, int64_t elementBytes) {
  size_t rank = inShape.size();
  std::vector<int64_t> inStrides = rowMajorStrides(inShape);
  std::vector<int64_t> outShape(rank), strides(rank);
  for (size_t i = 0; i < rank; ++i) {
    outShape[i] = inShape[perm[i]];
    strides[i] = inStrides[perm[i]];
  }
  std::string out(in.size(), '\0');
  std::vector<int64_t> index(rank, 0);
  int64_t from = 0;
  for (size_t n = 0; n * elementBytes < out.size(); ++n) {
    std::memcpy(out.data() + n * elementBytes, in.data() + from * elementBytes, elementBytes);
    // Next output index, odometer style; `from` follows it.
    for (size_t d = rank; d-- > 0;) {
      from += strides[d];
      if (++index[d] < outShape[d])
        break;
      from -= strides[d] * outShape[d];
      index[d] = 0;
    }
  }
  return out;
}

std::vector<int64_t> inverse(const std::vector<int64_t> &perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inv[perm[i]] = static_cast<int64_t>(i);
  return inv;
}

} // namespace

std::vector<int64_t> declaredShape(const PlanBuffer &buffer) {
  std::vector<int64_t> perm = storagePermutation(buffer);
  if (!isPermutation(perm, buffer.shape.size()))
    return buffer.shape;
  std::vector<int64_t> shape(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    shape[perm[i]] = buffer.shape[i];
  return shape;
}

std::string toStoredOrder(const PlanBuffer &buffer, std::string_view declared,
                          int64_t elementBytes) {
  std::vector<int64_t> perm = storagePermutation(buffer);
  if (!isPermutation(perm, buffer.shape.size()))
    return std::string(declared);
  return permuteElements(declared, declaredShape(buffer), perm, elementBytes);
}

std::string toDeclaredOrder(const PlanBuffer &buffer, std::string_view stored,
                            int64_t elementBytes) {
  std::vector<int64_t> perm = storagePermutation(buffer);
  if (!isPermutation(perm, buffer.shape.size()))
    return std::string(stored);
  return permuteElements(stored, buffer.shape, inverse(perm), elementBytes);
}

int64_t planRanks(const Plan &plan) {
  int64_t ranks = 1;
  for (const PlanKernel &k : plan.kernels) {
    if (k.opClass == OpClass::kCollective)
      ranks = std::max(ranks, k.intAttr("ranks", 1));
  }
  return ranks;
}

namespace {

/// validatePlan's checks of the buffers and of the kernels' buffer
/// indices, before any kernel's rule reads a buffer.
Status validateBuffers(const Plan &plan) {
  auto invalid = [](const std::string &message) {
    return Status(StatusCode::kInvalidArgument, message);
  };
  if (plan.arenaBytes < 0)
    return invalid("the arena has a negative size of " +
                   std::to_string(plan.arenaBytes) + " bytes");
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const PlanBuffer &b = plan.buffers[i];
    // Every size below comes from a file: a product that wraps would pass
    // the checks and address memory outside the arena.
    int64_t elements = 1, elementBytes = 0, end = 0;
    for (int64_t d : b.shape) {
      if (d < 0)
        return invalid("buffer '" + b.name + "' has a negative dimension");
      if (__builtin_mul_overflow(elements, d, &elements))
        return invalid("buffer '" + b.name + "' has more elements than fit in int64");
    }
    if (__builtin_mul_overflow(elements, dtypeBytes(b.dtype), &elementBytes))
      return invalid("buffer '" + b.name + "' of " + std::to_string(elements) +
                     " " + dtypeName(b.dtype) +
                     " elements has more bytes than fit in int64");
    if (b.init.count("row_stride")) {
      // Padded rows (PadRows.cpp): a temporary of rank 2 or more, each row
      // at least its last dimension long, rows x stride elements in all.
      int64_t stride = rowStride(b), last = b.shape.empty() ? 0 : b.shape.back();
      if (b.role != BufferRole::kTemporary || b.shape.size() < 2 || stride < last ||
          last == 0 || !storagePermutation(b).empty())
        return invalid("buffer '" + b.name + "' has a row stride of " + std::to_string(stride) +
                       ", but only a temporary of rank 2 or more whose rows are at most that "
                       "long, stored in its own order, can have padded rows");
      if (__builtin_mul_overflow(elements / last, stride, &elements) ||
          __builtin_mul_overflow(elements, dtypeBytes(b.dtype), &elementBytes))
        return invalid("buffer '" + b.name + "' with a row stride of " +
                       std::to_string(stride) + " has more bytes than fit in int64");
    }
    if (b.bytes != elementBytes)
      return invalid("buffer '" + b.name + "' has " + std::to_string(b.bytes) +
                     " bytes for " + std::to_string(elements) + " " +
                     dtypeName(b.dtype) + " elements" +
                     (rowStride(b) > 0 ? " (padded rows included)" : ""));
    if (b.init.count("storage") &&
        !isPermutation(storagePermutation(b), b.shape.size()))
      return invalid("buffer '" + b.name + "' has a storage order that is not a "
                     "permutation of its " + std::to_string(b.shape.size()) +
                     " dimensions");
    if (b.init.count("view_of")) {
      const int64_t *owner = findAttr<int64_t>(b.init, "view_of");
      const PlanBuffer *o = owner && *owner >= 0 && *owner < static_cast<int64_t>(plan.buffers.size()) &&
                                    *owner != static_cast<int64_t>(i)
                                ? &plan.buffers[*owner]
                                : nullptr;
      if (!o || o->offset != b.offset || o->bytes != b.bytes || o->init.count("view_of"))
        return invalid("buffer '" + b.name + "' is a view of " +
                       (o ? "'" + o->name + "'" : std::string("no buffer")) +
                       ", but a view shares another buffer's offset and bytes, and that "
                       "buffer is no view itself");
    }
    if (b.role == BufferRole::kConstant &&
        static_cast<int64_t>(b.data.size()) != b.bytes)
      return invalid("constant '" + b.name + "' carries " +
                     std::to_string(b.data.size()) + " bytes for " +
                     std::to_string(b.bytes));
    if (b.offset < 0 || __builtin_add_overflow(b.offset, b.bytes, &end) ||
        end > plan.arenaBytes)
      return invalid("buffer '" + b.name + "' at offset " +
                     std::to_string(b.offset) + " (" + std::to_string(b.bytes) +
                     " bytes) lies outside the arena of " +
                     std::to_string(plan.arenaBytes) + " bytes");
  }
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    const PlanKernel &kernel = plan.kernels[k];
    if (static_cast<size_t>(kernel.id) >= kNumOps || kernel.op != opName(kernel.id))
      return invalid("kernel #" + std::to_string(k) + " is named '" + kernel.op +
                     "' but its op id is " + std::to_string(static_cast<int>(kernel.id)) +
                     " ('" + std::string(opName(kernel.id)) + "'): set both with setOp");
    for (const auto *list : {&kernel.inputs, &kernel.outputs})
      for (int32_t id : *list)
        if (id < 0 || static_cast<size_t>(id) >= plan.buffers.size())
          return invalid("kernel #" + std::to_string(k) + " (" + kernel.op +
                         ") names buffer #" + std::to_string(id) + " of " +
                         std::to_string(plan.buffers.size()));
    // A buffer with padded rows reaches only kernels that take a row stride.
    for (const auto *list : {&kernel.inputs, &kernel.outputs})
      for (int32_t id : *list)
        if (rowStride(plan.buffers[id]) > 0)
          if (std::string refusal = rowStrideRefusal(plan, kernel, id); !refusal.empty())
            return invalid("kernel #" + std::to_string(k) + ": " + refusal +
                           ", but that buffer's rows are padded (row stride " +
                           std::to_string(rowStride(plan.buffers[id])) + ")");
  }
  return Status::ok();
}

} // namespace

Status validatePlan(const Plan &plan) {
  if (Status status = validateBuffers(plan); !status.isOk())
    return status;
  // What each kernel's op takes: operands, types, shapes, attributes.
  for (size_t k = 0; k < plan.kernels.size(); ++k)
    if (Status status = checkKernelRule(plan, k); !status.isOk())
      return status;
  return Status::ok();
}

std::string serializePlan(const Plan &plan) {
  Writer payload;
  payload.pod<uint64_t>(opTableFingerprint());
  payload.pod<uint64_t>(kNumOps);
  payload.str(plan.model);
  payload.pod(plan.batch);
  payload.str(plan.precision);
  payload.str(plan.fusion);
  payload.pod(plan.arenaBytes);
  payload.pod<uint64_t>(plan.buffers.size());
  for (const PlanBuffer &b : plan.buffers) {
    payload.str(b.name);
    payload.pod(static_cast<uint8_t>(b.dtype));
    payload.ints(b.shape);
    payload.pod(static_cast<uint8_t>(b.role));
    payload.pod(b.offset);
    payload.pod(b.bytes);
    writeAttrs(payload, b.init);
    payload.str(b.data);
  }
  payload.pod<uint64_t>(plan.kernels.size());
  for (const PlanKernel &k : plan.kernels) {
    payload.pod(static_cast<uint16_t>(k.id));
    payload.ints(std::vector<int64_t>(k.inputs.begin(), k.inputs.end()));
    payload.ints(std::vector<int64_t>(k.outputs.begin(), k.outputs.end()));
    writeAttrs(payload, k.attrs);
    payload.pod(static_cast<uint8_t>(k.opClass));
    payload.pod(static_cast<uint8_t>(k.fusionKind));
  }

  Writer file;
  file.out.append(kMagic, sizeof(kMagic));
  file.pod<uint32_t>(kPlanFormatVersion);
  file.pod<uint64_t>(payload.out.size());
  file.out += payload.out;
  file.pod<uint64_t>(fnv1a(payload.out));
  return file.out;
}

StatusOr<Plan> deserializePlan(std::string_view bytes,
                               const std::string &source) {
  auto error = [&](StatusCode code, const std::string &message) {
    return Status(code, source + ": " + message);
  };
  if (bytes.size() < sizeof(kMagic) ||
      std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    return error(StatusCode::kInvalidArgument, "not a dlc plan file");
  if (bytes.size() < kHeaderBytes)
    return error(StatusCode::kDataLoss, "truncated plan file (no header)");
  Reader header(bytes.substr(sizeof(kMagic)));
  uint32_t version = header.pod<uint32_t>();
  uint64_t payloadBytes = header.pod<uint64_t>();
  if (version != kPlanFormatVersion)
    return error(StatusCode::kInvalidArgument,
                 "plan format version " + std::to_string(version) +
                     ", this runtime reads version " +
                     std::to_string(kPlanFormatVersion) +
                     ": compile the model again with this dlc");
  uint64_t expected = kHeaderBytes + payloadBytes + kTrailerBytes;
  if (payloadBytes > bytes.size() || bytes.size() < expected)
    return error(StatusCode::kDataLoss,
                 "truncated plan file: " + std::to_string(bytes.size()) +
                     " bytes, the header announces " +
                     std::to_string(expected));
  if (bytes.size() > expected)
    return error(StatusCode::kDataLoss,
                 "corrupt plan file: " +
                     std::to_string(bytes.size() - expected) +
                     " bytes after the end");
  std::string_view payload = bytes.substr(kHeaderBytes, payloadBytes);
  Reader trailer(bytes.substr(kHeaderBytes + payloadBytes));
  if (trailer.pod<uint64_t>() != fnv1a(payload))
    return error(StatusCode::kDataLoss,
                 "corrupt plan file: the checksum does not match");

  Reader in(payload);
  uint64_t opTable = in.pod<uint64_t>();
  uint64_t numOps = in.pod<uint64_t>();
  if (in.ok() && (opTable != opTableFingerprint() || numOps != kNumOps))
    return error(StatusCode::kInvalidArgument,
                 "the plan was compiled for another set of ops (" + std::to_string(numOps) +
                     " ops, table fingerprint " + hex(opTable) + "; this runtime has " +
                     std::to_string(kNumOps) + ", " + hex(opTableFingerprint()) +
                     "): compile the model again with this dlc");
  Plan plan;
  plan.model = in.str();
  plan.batch = in.pod<int64_t>();
  plan.precision = in.str();
  plan.fusion = in.str();
  plan.arenaBytes = in.pod<int64_t>();
  uint64_t numBuffers = in.pod<uint64_t>();
  if (in.plausibleCount(numBuffers, 8))
    for (uint64_t i = 0; i < numBuffers && in.ok(); ++i) {
      PlanBuffer b;
      b.name = in.str();
      b.dtype = static_cast<DType>(in.pod<uint8_t>());
      b.shape = in.ints();
      b.role = static_cast<BufferRole>(in.pod<uint8_t>());
      b.offset = in.pod<int64_t>();
      b.bytes = in.pod<int64_t>();
      bool attrsOk = readAttrs(in, b.init);
      b.data = in.str();
      if (!attrsOk ||
          static_cast<uint8_t>(b.dtype) > static_cast<uint8_t>(DType::kI64) ||
          static_cast<uint8_t>(b.role) > static_cast<uint8_t>(BufferRole::kUpdate))
        return error(StatusCode::kDataLoss,
                     "corrupt plan file: buffer #" + std::to_string(i) +
                         " has an unknown element type, role or initializer");
      plan.buffers.push_back(std::move(b));
    }
  uint64_t numKernels = in.pod<uint64_t>();
  if (in.plausibleCount(numKernels, 8))
    for (uint64_t k = 0; k < numKernels && in.ok(); ++k) {
      PlanKernel kernel;
      uint16_t id = in.pod<uint16_t>();
      if (id >= kNumOps)
        return error(StatusCode::kDataLoss, "corrupt plan file: kernel #" + std::to_string(k) +
                                                " has op id " + std::to_string(id) + " of " +
                                                std::to_string(kNumOps));
      kernel.setOp(static_cast<OpId>(id));
      // Ids are int32 in memory: one past that range would wrap to another
      // buffer's id and pass validatePlan, so it is refused as it is read.
      for (auto *list : {&kernel.inputs, &kernel.outputs})
        for (int64_t id : in.ints()) {
          if (id < 0 || id > INT32_MAX)
            return error(StatusCode::kInvalidArgument,
                         "kernel #" + std::to_string(k) + " (" + kernel.op +
                             ") names buffer #" + std::to_string(id) + " of " +
                             std::to_string(plan.buffers.size()));
          list->push_back(static_cast<int32_t>(id));
        }
      if (!readAttrs(in, kernel.attrs))
        return error(StatusCode::kDataLoss,
                     "corrupt plan file: kernel #" + std::to_string(k) +
                         " has an attribute of unknown kind");
      kernel.opClass = static_cast<OpClass>(in.pod<uint8_t>());
      kernel.fusionKind = static_cast<FusionKind>(in.pod<uint8_t>());
      if (static_cast<uint8_t>(kernel.opClass) > static_cast<uint8_t>(OpClass::kCollective) ||
          static_cast<uint8_t>(kernel.fusionKind) >
              static_cast<uint8_t>(FusionKind::kOutput))
        return error(StatusCode::kDataLoss,
                     "corrupt plan file: kernel #" + std::to_string(k) + " (" + kernel.op +
                         ") has an unknown op class or fusion kind");
      plan.kernels.push_back(std::move(kernel));
    }
  if (!in.ok() || !in.atEnd())
    return error(StatusCode::kDataLoss,
                 "corrupt plan file: the payload does not parse");
  if (Status status = validateBuffers(plan); !status.isOk())
    return error(StatusCode::kInvalidArgument, status.message());
  // A kernel its op cannot run is a corrupt file, not a caller's mistake.
  for (size_t k = 0; k < plan.kernels.size(); ++k)
    if (Status status = checkKernelRule(plan, k); !status.isOk())
      return error(StatusCode::kInvalidArgument, "corrupt plan file: " + status.message());
  return plan;
}

Status writePlanFile(const Plan &plan, const std::string &path) {
  if (Status status = validatePlan(plan); !status.isOk())
    return status;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  std::string bytes = serializePlan(plan);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out)
    return Status(StatusCode::kUnavailable, "cannot write plan file " + path);
  return Status::ok();
}

StatusOr<Plan> readPlanFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status(StatusCode::kInvalidArgument,
                  "cannot open plan file " + path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return deserializePlan(bytes.str(), path);
}

} // namespace dlc::rt
