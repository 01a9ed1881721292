# Writes OUTPUT, a C++ file defining cudaenv::manifest::embedded_manifests() that returns the
# contents of every file in INPUTS (paths separated by "|") as raw string literals.
# Run with cmake -P.
string(REPLACE "|" ";" inputs "${INPUTS}")
set(body "")
foreach(input ${inputs})
  get_filename_component(name ${input} NAME)
  file(READ ${input} content)
  string(FIND "${content}" ")cudaenv_manifest\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${input} contains the raw-string delimiter")
  endif()
  string(APPEND body "      {\"${name}\", R\"cudaenv_manifest(${content})cudaenv_manifest\"},\n")
endforeach()
file(WRITE ${OUTPUT}.tmp
"// Generated from manifests/*.toml by cmake/EmbedFiles.cmake; do not edit.
#include \"manifest/load.hpp\"

namespace cudaenv::manifest {

const std::vector<ManifestFile>& embedded_manifests() {
  static const std::vector<ManifestFile> files = {
${body}  };
  return files;
}

}  // namespace cudaenv::manifest
")
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
