# -DCUDAENV_PORTABLE=ON: the full program linked for the relocatable release bundle
# (scripts/package, docs/install.md "The release bundle"). The bundle must start on any glibc
# from 2.34 on; what it is built on (Debian 12) has 2.36. So:
# - libstdc++ is linked statically (Debian 12's libstdc++.so.6 needs arc4random@GLIBC_2.36);
#   libgcc_s stays the system's (its unwinder needs the running glibc's _dl_find_object);
# - libarchive is linked statically (libarchive.so.13 needs arc4random_buf@GLIBC_2.36), its
#   compression libraries stay shared and travel in the bundle;
# - src/compat/arc4random.c provides those two functions on top of getrandom(2).
# scripts/package then checks every ELF file it ships for a glibc version above 2.34.
function(cudaenv_link_portable target)
  find_library(CUDAENV_LIBARCHIVE_STATIC NAMES libarchive.a REQUIRED)
  # libarchive's own dependencies (what libarchive.so.13 needs), named by soname because Debian
  # ships no -dev package for some; less libxml2: only the XAR format needs it, and cudaenv
  # reads tar and zip alone. --as-needed drops any left unused.
  set(archive_deps -l:libnettle.so.8 -l:libacl.so.1 -l:liblzma.so.5 -l:libzstd.so.1
                   -l:liblz4.so.1 -l:libbz2.so.1.0 -l:libz.so.1)
  target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/src/compat/arc4random.c)
  set_target_properties(LibArchive::LibArchive PROPERTIES
    IMPORTED_LOCATION ${CUDAENV_LIBARCHIVE_STATIC} INTERFACE_LINK_LIBRARIES "${archive_deps}")
  # --gc-sections: writing any tar (the wheel mirror) pulls archive_write_set_format.o, whose
  # format table names the XAR writer; its libxml2 calls are then in unused sections and go.
  target_link_options(${target} PRIVATE -static-libstdc++ -Wl,--as-needed -Wl,--gc-sections)
endfunction()
