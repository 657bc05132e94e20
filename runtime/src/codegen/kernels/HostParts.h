#ifndef DLC_HOST_PARTS
#define DLC_HOST_PARTS
// Part p of P owns items [dlc_part_begin(n, p, P), dlc_part_begin(n, p + 1, P)),
// cut at multiples of 16 items so that two parts seldom share a cache line.
inline long long dlc_part_begin(long long n, int p, int P) {
  return p >= P ? n : n * p / P / 16 * 16;
}
// A block's shared memory is the one thread's own: a local array, which
// the compiler keeps in registers or on the stack and vectorizes loops over
// (a static thread_local array went through the TLS block of a loaded
// library at every access, and kept a fused layer norm's row scalar).
#undef __shared__
#define __shared__
#endif // DLC_HOST_PARTS
