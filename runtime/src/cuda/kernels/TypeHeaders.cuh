#if defined(__CUDACC__)
#include <cuda_fp16.h>
#endif
