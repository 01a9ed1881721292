# All dependencies come from Debian packages; nothing is downloaded at configure time.
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 2.1 REQUIRED)
if(CUDAENV_TESTS AND CUDAENV_UNIT_TESTS)
  find_package(doctest 2.4 REQUIRED)
endif()
find_package(Threads REQUIRED)
# Found now so a machine missing them fails at configure time, not halfway through a feature:
# libcurl (OpenSSL flavour) and libarchive serve fetching and installing toolkits, OpenSSL the
# streaming sha256 checks.
find_package(CURL 7.74 REQUIRED)
find_package(LibArchive 3.4 REQUIRED)
find_package(OpenSSL 3 REQUIRED COMPONENTS Crypto)
# toml++ (libtomlplusplus-dev) is used header-only; only its headers are needed.
find_path(TOMLPLUSPLUS_INCLUDE_DIR toml++/toml.h REQUIRED)
