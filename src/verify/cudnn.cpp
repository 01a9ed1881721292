#include "verify/cudnn.hpp"

#include <fstream>
#include <regex>
#include <sstream>

#include "core/text.hpp"
#include "install/store.hpp"
#include "project/selection.hpp"

namespace cudaenv::verify {

namespace fs = std::filesystem;

namespace {

std::optional<long long> define_value(const std::string& text, const std::string& name) {
  const std::regex define("#define[ \\t]+" + name + "[ \\t]+([0-9]+)");
  std::smatch match;
  if (!std::regex_search(text, match, define)) return std::nullopt;
  return text::parse_integer(match[1].str());
}

// libcudnn.so.9 over libcudnn.so.8 over libcudnn.so (the development link).
std::optional<fs::path> library_in(const fs::path& directory) {
  std::optional<fs::path> best;
  long long best_major = -1;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(directory, error)) {
    const auto name = entry.path().filename().string();
    long long major = -1;
    if (name == "libcudnn.so") {
      major = 0;
    } else if (text::starts_with(name, "libcudnn.so.")) {
      major = text::parse_integer(name.substr(12)).value_or(-1);
    }
    if (major > best_major) {
      best_major = major;
      best = entry.path();
    }
  }
  return best;
}

std::optional<long long> header_version(const fs::path& header) {
  std::ifstream in(header);
  if (!in) return std::nullopt;
  std::stringstream content;
  content << in.rdbuf();
  return parse_cudnn_version_header(content.str());
}

}  // namespace

std::optional<long long> parse_cudnn_version_header(std::string_view text) {
  const std::string copy(text);
  const auto major = define_value(copy, "CUDNN_MAJOR");
  if (!major) return std::nullopt;
  const auto minor = define_value(copy, "CUDNN_MINOR").value_or(0);
  const auto patch = define_value(copy, "CUDNN_PATCHLEVEL").value_or(0);
  return *major * (*major >= 9 ? 10000 : 1000) + minor * 100 + patch;
}

Result<CudnnSelection> locate_cudnn(const fs::path& path) {
  CudnnSelection selection;
  fs::path prefix;
  std::error_code error;
  if (fs::is_regular_file(path, error)) {
    selection.library = fs::absolute(path).string();
    prefix = fs::absolute(path).parent_path().parent_path();
  } else if (fs::is_directory(path, error)) {
    prefix = fs::absolute(path);
    for (const char* sub : {"lib64", "lib", ""}) {
      if (auto library = library_in(prefix / sub)) {
        selection.library = library->lexically_normal().string();
        break;
      }
    }
  }
  if (selection.library.empty()) {
    return make_error(ErrorKind::not_found, "--cudnn: no libcudnn.so in " + path.string(),
                      "name a cuDNN directory (with lib/ or lib64/) or its libcudnn.so file");
  }
  selection.directory = fs::path(selection.library).parent_path().string();
  if (auto receipt = install::read_receipt(prefix); receipt && receipt->product == "cudnn") {
    if (auto version = Version::parse(receipt->version)) {
      selection.expected = version->major() * (version->major() >= 9 ? 10000 : 1000) +
                           version->minor() * 100 + version->patch();
      selection.header = (prefix / install::receipt_file_name).string();
      return selection;
    }
  }
  for (const char* sub : {"include/cudnn_version.h", "include/cudnn.h"}) {
    if (auto version = header_version(prefix / sub)) {
      selection.expected = version;
      selection.header = (prefix / sub).string();
      break;
    }
  }
  return selection;
}

Result<CudnnSelection> locate_installed_cudnn(const VersionSpec& spec, const install::Store& store,
                                              int cuda_major) {
  if (auto installed = project::installed_cudnn_match(spec, cuda_major, store))
    return locate_cudnn(installed->path);
  return make_error(
      ErrorKind::not_found,
      "--cudnn: no cuDNN matching \"" + spec.str() + "\" built for CUDA " +
          std::to_string(cuda_major) + " is installed",
      "cudaenv install <toolkit> --cudnn " + spec.str() + ", or name a cuDNN directory");
}

}  // namespace cudaenv::verify
