#pragma once
// Helpers shared by the unit tests: temporary directories and fixture machines.

#include <filesystem>
#include <string>

#include "manifest/database.hpp"

namespace cudaenv::test {

// A fresh directory, removed with everything in it when the object goes out of scope.
class TempDir {
 public:
  TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Copies tests/fixtures/machines/<name> into a temp dir, keeping symbolic links as links, and
// puts the fake driver library wherever the fixture holds a FAKE_NVIDIA_DRIVER placeholder.
class FixtureMachine {
 public:
  explicit FixtureMachine(const std::string& name);
  const std::filesystem::path& root() const { return dir_.path(); }

 private:
  TempDir dir_;
};

// The compiled-in compatibility database, loaded once for all tests.
const manifest::Database& embedded_database();

void write_file(const std::filesystem::path& path, const std::string& content);

}  // namespace cudaenv::test
