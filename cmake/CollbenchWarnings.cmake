# collbench_warnings: an interface target every collbench C++ target links, so warning policy lives
# in one place. CUDA sources get the host-compiler flags through -Xcompiler.
add_library(collbench_warnings INTERFACE)
target_compile_options(collbench_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
