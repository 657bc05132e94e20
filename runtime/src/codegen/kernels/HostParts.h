#ifndef DLC_HOST_PARTS
#define DLC_HOST_PARTS
// Part p of P owns items [dlc_part_begin(n, p, P), dlc_part_begin(n, p + 1, P)),
// cut at multiples of 16 items so that two parts seldom share a cache line.
inline long long dlc_part_begin(long long n, int p, int P) {
  return p >= P ? n : n * p / P / 16 * 16;
}
#undef __shared__
#define __shared__ static thread_local
#endif // DLC_HOST_PARTS
