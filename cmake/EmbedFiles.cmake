# Writes OUTPUT, a C++ file defining a function that returns the contents of every file in INPUTS
# (paths separated by "|") as {file name, text} pairs of raw string literals. Run with cmake -P.
#
# The defaults produce the compatibility database, cudaenv::manifest::embedded_manifests()
# returning ManifestFile values declared in manifest/load.hpp. Other embedded sources set:
#   HEADER     the header declaring TYPE and FUNCTION
#   NAMESPACE  the namespace the function is defined in
#   FUNCTION   the function's name
#   TYPE       an aggregate {std::string name; std::string text; ...}
#   DELIMITER  the raw-string delimiter; a file containing it is refused
#   ORIGIN     what the generated file says it was generated from
if(NOT HEADER)
  set(HEADER "manifest/load.hpp")
endif()
if(NOT NAMESPACE)
  set(NAMESPACE "cudaenv::manifest")
endif()
if(NOT FUNCTION)
  set(FUNCTION "embedded_manifests")
endif()
if(NOT TYPE)
  set(TYPE "ManifestFile")
endif()
if(NOT DELIMITER)
  set(DELIMITER "cudaenv_manifest")
endif()
if(NOT ORIGIN)
  set(ORIGIN "the embedded files")
endif()

string(REPLACE "|" ";" inputs "${INPUTS}")
set(body "")
foreach(input ${inputs})
  get_filename_component(name ${input} NAME)
  file(READ ${input} content)
  string(FIND "${content}" ")${DELIMITER}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${input} contains the raw-string delimiter")
  endif()
  string(APPEND body "      {\"${name}\", R\"${DELIMITER}(${content})${DELIMITER}\"},\n")
endforeach()
file(WRITE ${OUTPUT}.tmp
"// Generated from ${ORIGIN} by cmake/EmbedFiles.cmake; do not edit.
#include \"${HEADER}\"

namespace ${NAMESPACE} {

const std::vector<${TYPE}>& ${FUNCTION}() {
  static const std::vector<${TYPE}> files = {
${body}  };
  return files;
}

}  // namespace ${NAMESPACE}
")
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
