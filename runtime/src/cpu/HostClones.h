//===- HostClones.h - hot loops compiled for this CPU's vector width ------===//
//
// The runtime is built for any x86-64 (SSE2). Generated kernels get
// -march=native when they are compiled at run time; the CPU backend's own
// fast kernels mark their hot loops DLC_HOST_CLONES instead: GCC compiles
// them for AVX-512 and AVX2 besides the baseline, and the loader picks the
// clone this CPU runs (an ifunc). Softmax cross-entropy's exponentials ran
// 8x faster on an AVX-512 core this way.
//
// The libraries that use it take -ffp-contract=off (runtime/CMakeLists.txt),
// so a clone never fuses a * b + c where the baseline rounds twice: every
// clone gives the same bits.
//
// Only the marked function is cloned: a lambda or a template it calls is
// compiled once, for the baseline, unless it is inlined (always_inline).
// Put the loop itself in the marked function.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CPU_HOSTCLONES_H
#define DLC_RUNTIME_CPU_HOSTCLONES_H

#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__) &&           \
    !defined(__SANITIZE_ADDRESS__)
#define DLC_HOST_CLONES                                                        \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define DLC_HOST_CLONES
#endif

#endif // DLC_RUNTIME_CPU_HOSTCLONES_H
