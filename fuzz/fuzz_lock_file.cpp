// The .cudaenv.lock reader: every input gives a lock or an error naming the file, never an
// exception or a crash; a lock it accepts holds only values that passed their grammars (nothing
// in it can climb out of the store, leave the mirror or break out of a shell word), and writing
// it and reading it back gives the same lock.

#include <string>

#include "core/untrusted.hpp"
#include "fuzz_input.hpp"
#include "lock/lock_file.hpp"

using namespace cudaenv;
using untrusted::Field;

namespace {

void require_valid(Field field, const std::string& value, const char* what) {
  fuzz::require(untrusted::is_valid(field, value), what);
}

void require_archives(const std::vector<lock::LockedArchive>& archives) {
  for (const auto& archive : archives) {
    require_valid(Field::component_name, archive.name, "an archive's name is a name");
    require_valid(Field::component_version, archive.version, "an archive's version is a version");
    require_valid(Field::relative_path, archive.relative_path, "an archive's path stays below");
    require_valid(Field::sha256, archive.sha256, "an archive's sha256 is 64 hex digits");
    fuzz::require(archive.size > 0, "an archive is never empty");
  }
}

void require_checked(const lock::LockFile& lock) {
  require_valid(Field::revision, lock.database_revision, "the database revision is one");
  require_valid(Field::release_version, lock.toolkit.version, "the toolkit version is a release");
  require_archives(lock.toolkit.components);
  if (lock.cudnn) {
    require_valid(Field::release_version, lock.cudnn->version, "the cuDNN version is a release");
    require_valid(Field::component_name, lock.cudnn->cuda_variant, "the variant is a name");
    require_archives(lock.cudnn->components);
  }
  for (const auto& [name, framework] : lock.frameworks) {
    require_valid(Field::component_name, name, "a framework's name is a name");
    fuzz::require(!framework.pip_args.empty(), "a framework's pip line names a requirement");
    for (const auto& arg : framework.pip_args)
      fuzz::require(arg.find_first_of(" \t\n'\"`$;&|<>\\") == std::string::npos,
                    "a pip argument holds no shell-special character");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = fuzz::as_text(data, size);
  const std::string path = "/repo/.cudaenv.lock";
  auto lock = lock::parse_lock_file(text, path);
  if (!lock) {
    fuzz::require(lock.error().message.starts_with(path + ":"), "a lock error names the file");
    return 0;
  }
  require_checked(*lock);
  const auto written = lock::render_lock_file(*lock);
  auto back = lock::parse_lock_file(written, path);
  fuzz::require(back.ok(), "a lock read back is a lock");
  fuzz::require(lock::render_lock_file(*back) == written, "a lock reads back as written");
  return 0;
}
