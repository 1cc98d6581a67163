"""The search kernel: numba-compiled functions over int64 bitboards and one int64 array.

Importing any module here compiles the kernel, or loads it from numba's on-disk
cache; the protocol process therefore imports it in the background."""
