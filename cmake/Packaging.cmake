# The Debian package (`cpack -G DEB`, run by scripts/deb on the release build): the install rules'
# layout under /usr, with the shared libraries the full program needs declared as dependencies
# (dpkg-shlibdeps) instead of shipped as the release bundle ships them. docs/install.md, "A
# Debian package".
set(CPACK_PACKAGE_NAME cudaenv)
set(CPACK_PACKAGE_VENDOR "The cudaenv authors")
# The Maintainer field; scripts/deb puts DEBFULLNAME/DEBEMAIL there when they are set, as dch does.
set(CPACK_PACKAGE_CONTACT "The cudaenv authors <cudaenv@invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "environment manager for multi-version CUDA toolchains")
# The extended description (Debian's Description field: the summary, then this, indented).
string(CONCAT CPACK_PACKAGE_DESCRIPTION
  "cudaenv installs CUDA toolkits and cuDNN side by side without root, switches\n"
  "them per project through a shell hook, tells which driver, CUDA, cuDNN and\n"
  "framework builds fit a machine, proves a toolkit by compiling and running a\n"
  "kernel, and diagnoses broken machines.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # cudaenv_VERSION_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends: from the libraries the programs load (libcurl4, zlib1g, ...), as dpkg-shlibdeps finds
# their packages on the build machine; the front program and the shim are static.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bash-completion")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# Where Debian's programs look, for what the install rules put elsewhere (docs/install.md).
set(CPACK_PRE_BUILD_SCRIPTS ${CMAKE_CURRENT_LIST_DIR}/DebianLayout.cmake)
include(CPack)
