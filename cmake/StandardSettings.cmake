# Warnings and sanitizers as INTERFACE targets: first-party targets link them, dependencies don't.
add_library(cudaenv_warnings INTERFACE)
target_compile_options(cudaenv_warnings INTERFACE
  -Wall -Wextra -Wshadow -Wcast-align
  $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor -Woverloaded-virtual>
  $<$<BOOL:${CUDAENV_WERROR}>:-Werror>)

add_library(cudaenv_sanitizers INTERFACE)
if(CUDAENV_SANITIZE)
  set(_san -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  target_compile_options(cudaenv_sanitizers INTERFACE ${_san})
  target_link_options(cudaenv_sanitizers INTERFACE ${_san})
endif()

# Every first-party library and executable gets both.
function(cudaenv_target_defaults target)
  target_link_libraries(${target} PRIVATE cudaenv_warnings cudaenv_sanitizers)
endfunction()
