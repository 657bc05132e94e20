//===- DnnlCommon.cpp - engine, scratch memory, operands, layouts ---------===//

#include "dnnl/DnnlCommon.h"

#include "dlc/runtime/cpu/Dnnl.h"
#include "dlc/runtime/Parallel.h"

#include <atomic>
#include <cstdlib>

#if defined(DLC_DNNL_OPENMP) && DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
#include <omp.h>
#define DLC_DNNL_SET_OMP_THREADS 1
#endif

namespace dlc::rt::cpu::onednn {

dnnl::engine &engine() {
  static dnnl::engine cpu(dnnl::engine::kind::cpu, 0);
  return cpu;
}

dnnl::stream &stream() {
  thread_local dnnl::stream s(engine());
  return s;
}

void useCpuThreads() {
#ifdef DLC_DNNL_SET_OMP_THREADS
  omp_set_num_threads(cpuThreadCount());
#endif
}

ScopedOneThread::ScopedOneThread() {
#ifdef DLC_DNNL_SET_OMP_THREADS
  previous_ = omp_get_max_threads();
  omp_set_num_threads(1);
#endif
}

ScopedOneThread::~ScopedOneThread() {
#ifdef DLC_DNNL_SET_OMP_THREADS
  omp_set_num_threads(previous_);
#endif
}

std::atomic<int64_t> referenceCalls{0};

Status runReference(const KernelContext &c) {
  ++referenceCalls;
  return cpuKernels().at(c.op())(c);
}

Status requireF32(const KernelContext &c, bool bf16) {
  auto allowed = [&](DType d) { return d == DType::kF32 || (bf16 && d == DType::kBF16); };
  const char *want = bf16 ? ", not f32 or bf16" : ", not f32";
  for (size_t i = 0; i < c.numInputs(); ++i)
    if (!allowed(c.in(i).dtype))
      return c.error(std::string("operand ") + std::to_string(i) + " is " +
                     dtypeName(c.in(i).dtype) + want);
  for (size_t i = 0; i < c.numOutputs(); ++i)
    if (!allowed(c.out(i).dtype))
      return c.error(std::string("result ") + std::to_string(i) + " is " +
                     dtypeName(c.out(i).dtype) + want);
  return Status::ok();
}

dnnl::memory::data_type dataType(const TensorRef &t) {
  return t.dtype == DType::kBF16 ? dnnl::memory::data_type::bf16 : kF32;
}

Key shapeKey(const KernelContext &c, int64_t opTag) {
  Key key{opTag, static_cast<int64_t>(c.numInputs()),
          static_cast<int64_t>(c.numOutputs())};
  auto addShape = [&](const TensorRef &t) {
    key.push_back(static_cast<int64_t>(t.dtype)); // f32, or bf16 run natively
    key.push_back(t.rank());
    key.insert(key.end(), t.shape->begin(), t.shape->end());
  };
  for (size_t i = 0; i < c.numInputs(); ++i)
    addShape(c.in(i));
  for (size_t i = 0; i < c.numOutputs(); ++i)
    addShape(c.out(i));
  return key;
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

namespace {
/// Cache-line (and AVX-512) aligned, as oneDNN prefers its buffers.
constexpr size_t kAlignment = 64;

struct FreeAligned {
  void operator()(void *p) const { std::free(p); }
};

struct ThreadBuffers {
  std::unique_ptr<void, FreeAligned> data[static_cast<int>(Slot::kCount)];
  size_t size[static_cast<int>(Slot::kCount)] = {};
};
} // namespace

void *threadBuffer(Slot slot, size_t bytes) {
  thread_local ThreadBuffers buffers;
  int i = static_cast<int>(slot);
  if (bytes > buffers.size[i]) {
    size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    buffers.data[i].reset(std::aligned_alloc(kAlignment, rounded));
    if (!buffers.data[i])
      throw dnnl::error(dnnl_out_of_memory, "cannot allocate scratch memory");
    buffers.size[i] = rounded;
  }
  return buffers.data[i].get();
}

dnnl::primitive_attr userScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void execute(const Prim &p, std::unordered_map<int, dnnl::memory> args) {
  if (size_t bytes = p.scratchpad.get_size())
    args.emplace(DNNL_ARG_SCRATCHPAD,
                 dnnl::memory(p.scratchpad, engine(),
                              threadBuffer(Slot::kScratchpad, bytes)));
  p.primitive.execute(stream(), args);
  stream().wait();
}

Operand Operand::make(const md &user, const md &want, bool input) {
  Operand o{user, want, input, std::nullopt};
  if (user == want)
    return o;
  const md &from = input ? user : want, &to = input ? want : user;
  dnnl::reorder::primitive_desc pd(engine(), from, engine(), to, userScratchpad());
  o.reorder = makePrim<dnnl::reorder>(pd);
  return o;
}

dnnl::memory Operand::bind(void *data, Slot slot) const {
  dnnl::memory buffer(user, engine(), data);
  if (!reorder)
    return buffer;
  dnnl::memory copy(want, engine(), threadBuffer(slot, want.get_size()));
  if (input)
    execute(*reorder, {{DNNL_ARG_FROM, buffer}, {DNNL_ARG_TO, copy}});
  return copy;
}

void Operand::finish(const dnnl::memory &bound, void *data) const {
  if (!reorder || input)
    return;
  execute(*reorder, {{DNNL_ARG_FROM, bound},
                     {DNNL_ARG_TO, dnnl::memory(user, engine(), data)}});
}

//===----------------------------------------------------------------------===//
// Layouts
//===----------------------------------------------------------------------===//

StatusOr<Layout> layoutOf(const KernelContext &c) {
  std::string layout = c.kernel().stringAttr("layout", "NCHW");
  if (layout == "NCHW")
    return Layout::kNchw;
  if (layout == "NHWC")
    return Layout::kNhwc;
  return c.error("unknown layout '" + layout + "' (NCHW or NHWC)");
}

dims nchwDims(const std::vector<int64_t> &s, Layout layout) {
  if (layout == Layout::kNhwc)
    return {s[0], s[3], s[1], s[2]};
  return {s[0], s[1], s[2], s[3]};
}

md activationDesc(const dims &nchw, Layout layout, dnnl::memory::data_type type) {
  return md(nchw, type, layout == Layout::kNhwc ? tag::nhwc : tag::nchw);
}

md plainDesc(const std::vector<int64_t> &shape, dnnl::memory::data_type type) {
  dims strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return md(dims(shape.begin(), shape.end()), type, strides);
}

} // namespace dlc::rt::cpu::onednn

int64_t dlc::rt::cpu::dnnlReferenceCalls() { return onednn::referenceCalls; }
