# All dependencies come from Debian packages; nothing is downloaded at configure time.
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 2.1 REQUIRED)
if(CUDAENV_TESTS)
  find_package(doctest 2.4 REQUIRED)
endif()
find_package(Threads REQUIRED)
# toml++ (libtomlplusplus-dev) is used header-only; only its headers are needed.
find_path(TOMLPLUSPLUS_INCLUDE_DIR toml++/toml.h REQUIRED)
