# Tests of the CPU spatial kernels against PyTorch and finite differences;
# paths are relative to test/unittest/, which include()s this file.
list(APPEND DLC_RUNTIME_TEST_SOURCES Runtime/SpatialTest.cpp)
