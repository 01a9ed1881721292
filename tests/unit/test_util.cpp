#include "test_util.hpp"

#include <stdlib.h>

#include <fstream>

#include <doctest/doctest.h>

#include "manifest/load.hpp"

namespace cudaenv::test {

const manifest::Database& embedded_database() {
  static const manifest::Database database =
      std::move(manifest::load_database(manifest::embedded_manifests())).value();
  return database;
}

namespace fs = std::filesystem;

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "cudaenv-test-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void write_file(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << content;
}

namespace {

bool is_driver_placeholder(const fs::path& file) {
  std::ifstream in(file);
  std::string first;
  std::getline(in, first);
  return first == "FAKE_NVIDIA_DRIVER";
}

}  // namespace

FixtureMachine::FixtureMachine(const std::string& name) {
  const fs::path source = fs::path(CUDAENV_FIXTURES_DIR) / "machines" / name;
  REQUIRE_MESSAGE(fs::is_directory(source), "no fixture machine " << source);
  fs::copy(source, root(), fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  for (const auto& entry : fs::recursive_directory_iterator(root())) {
    if (entry.is_regular_file() && !entry.is_symlink() && is_driver_placeholder(entry.path())) {
      fs::copy_file(CUDAENV_FAKE_DRIVER, entry.path(), fs::copy_options::overwrite_existing);
    }
  }
}

}  // namespace cudaenv::test
