# Warnings and sanitizers as INTERFACE targets: first-party targets link them, dependencies don't.
add_library(cudaenv_warnings INTERFACE)
target_compile_options(cudaenv_warnings INTERFACE
  -Wall -Wextra -Wshadow -Wcast-align
  $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor -Woverloaded-virtual>
  $<$<BOOL:${CUDAENV_WERROR}>:-Werror>)
# GCC 12 reports -Wrestrict false positives inside libstdc++ when optimising
# `"literal" + std::string&&` (operator+ inlines to an insert whose memcpy it cannot bound; GCC
# bug 105329, fixed in GCC 13). They hit many call sites in the release build and none is real,
# so the warning is off for GCC 12 alone; every other compiler keeps it.
set(_gcc12 "$<AND:$<CXX_COMPILER_ID:GNU>,$<VERSION_GREATER_EQUAL:$<CXX_COMPILER_VERSION>,12>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>")
target_compile_options(cudaenv_warnings INTERFACE $<$<AND:$<COMPILE_LANGUAGE:CXX>,${_gcc12}>:-Wno-restrict>)

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

# cudaenv_embed_files(<out-var> INPUTS <files...> HEADER <h> NAMESPACE <ns> FUNCTION <fn> TYPE <t>
#                     [DELIMITER <d>] [ORIGIN <text>] COMMENT <text>)
# Generates a C++ source (path returned in <out-var>) whose FUNCTION returns the files' contents,
# regenerated whenever one of them or cmake/EmbedFiles.cmake changes.
function(cudaenv_embed_files out_var)
  cmake_parse_arguments(EMBED "" "HEADER;NAMESPACE;FUNCTION;TYPE;DELIMITER;ORIGIN;COMMENT" "INPUTS" ${ARGN})
  set(output ${CMAKE_CURRENT_BINARY_DIR}/${EMBED_FUNCTION}.cpp)
  string(REPLACE ";" "|" input_list "${EMBED_INPUTS}")
  set(extra)
  if(EMBED_DELIMITER)
    list(APPEND extra -DDELIMITER=${EMBED_DELIMITER})
  endif()
  if(EMBED_ORIGIN)
    list(APPEND extra "-DORIGIN=${EMBED_ORIGIN}")
  endif()
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} "-DINPUTS=${input_list}" -DOUTPUT=${output}
            -DHEADER=${EMBED_HEADER} -DNAMESPACE=${EMBED_NAMESPACE}
            -DFUNCTION=${EMBED_FUNCTION} -DTYPE=${EMBED_TYPE} ${extra}
            -P ${PROJECT_SOURCE_DIR}/cmake/EmbedFiles.cmake
    VERBATIM
    DEPENDS ${EMBED_INPUTS} ${PROJECT_SOURCE_DIR}/cmake/EmbedFiles.cmake
    COMMENT "${EMBED_COMMENT}")
  set(${out_var} ${output} PARENT_SCOPE)
endfunction()
