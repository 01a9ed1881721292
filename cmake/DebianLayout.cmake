# Run by CPack (CPACK_PRE_BUILD_SCRIPTS) on the staged /usr tree before it becomes the .deb:
# - Debian's zsh reads completions from /usr/share/zsh/vendor-completions, not site-functions
#   (the install rules' directory, which zsh on other systems and under /usr/local reads);
# - Debian policy wants the licence as /usr/share/doc/PACKAGE/copyright.
set(usr "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/usr")
if(NOT EXISTS "${usr}/bin/cudaenv")
  message(FATAL_ERROR "DebianLayout.cmake: no staged /usr/bin/cudaenv under ${CPACK_TEMPORARY_INSTALL_DIRECTORY}")
endif()
file(MAKE_DIRECTORY "${usr}/share/zsh/vendor-completions")
file(RENAME "${usr}/share/zsh/site-functions/_cudaenv" "${usr}/share/zsh/vendor-completions/_cudaenv")
file(GLOB left "${usr}/share/zsh/site-functions/*")
if(NOT left)
  file(REMOVE_RECURSE "${usr}/share/zsh/site-functions")
endif()
file(RENAME "${usr}/share/doc/cudaenv/LICENSE" "${usr}/share/doc/cudaenv/copyright")
# Debian's man pages are gzip'ed (-n: no name or time in the header, so the package is the same
# bytes each build).
execute_process(COMMAND gzip -9nf "${usr}/share/man/man1/cudaenv.1" COMMAND_ERROR_IS_FATAL ANY)
