#include "activate/here.hpp"

#include "activate/activation.hpp"
#include "activate/host_compiler.hpp"
#include "activate/toolkit_env.hpp"
#include "core/ownership.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "project/stores.hpp"

namespace cudaenv::activate {

namespace fs = std::filesystem;

namespace {

Error not_installed(const std::string& what, const std::string& install_command) {
  return make_error(ErrorKind::not_found, what + " is not installed", "run: " + install_command);
}

// nvcc's own version pinned (12.4.131; releases of CUDA 11 and later have small patch levels).
// This path loads no database to name its release, so the hint is the no-SPEC install, which
// installs the project's pin as the release that ships that nvcc.
bool names_nvcc_version(const VersionSpec& spec) {
  if (!spec.is_exact_beyond(2)) return false;
  const auto version = Version::parse(spec.str());
  return version && version->major() >= 11 && version->patch() >= 10;
}

std::string install_command(const project::Selection& selection) {
  if (selection.source == project::SelectionSource::project_file &&
      names_nvcc_version(*selection.cuda))
    return "cudaenv install (in " + selection.file.parent_path().string() +
           "; it installs the release that ships nvcc " + selection.cuda->str() + ")";
  return "cudaenv install " + selection.cuda->str();
}

// NVIDIA's cuDNN archives ship lib/; some repackagings use lib64/.
std::string cudnn_library_directory(const fs::path& prefix) {
  std::error_code ec;
  for (const char* candidate : {"lib", "lib64"}) {
    if (fs::is_directory(prefix / candidate, ec)) return (prefix / candidate).string();
  }
  return (prefix / "lib").string();
}

Result<project::Selection> selection_for(const Environment& env, const fs::path& cwd,
                                         const std::optional<VersionSpec>& forced_cuda) {
  if (forced_cuda) {
    project::Selection selection;
    selection.cuda = *forced_cuda;
    selection.source = project::SelectionSource::command_line;
    return selection;
  }
  return project::select(env, cwd);
}

}  // namespace

std::string describe_selection(const project::Selection& selection) {
  const auto spec = selection.cuda ? selection.cuda->str() : std::string("system");
  return spec + " (from " + project::describe_source(selection) + ")";
}

std::string warning_lines(const project::Selection& selection) {
  std::string lines;
  for (const auto& warning : selection.warnings)
    lines += "warning: " + text::printable(warning.message, text::message_limit) + "\n";
  return lines;
}

Result<Activated> activate_here(const Environment& current, const fs::path& cwd,
                                const std::optional<VersionSpec>& forced_cuda) {
  Activated result;
  result.base = without_activation(current);
  auto selection = selection_for(result.base, cwd, forced_cuda);
  if (!selection) return selection.error();
  result.selection = *selection;
  if (!selection->cuda) {
    result.environment = result.base;
    return result;
  }

  const install::Store store = project::store_for(result.base);
  if (auto trusted = ownership::check_data_root(store.root); !trusted) return trusted.error();
  result.toolkit = project::installed_match(*selection, store, install::Receipts::skip);
  if (!result.toolkit)
    return not_installed("CUDA " + describe_selection(*selection), install_command(*selection));
  // The one place every path that runs a store's programs goes through (env, exec, which, the
  // hook, the shims): its programs and libraries are checked before anything points at them.
  if (auto trusted =
          ownership::check_prefix(result.toolkit->path, ownership::toolkit_layout(), "toolkit");
      !trusted)
    return trusted.error();
  ToolkitPrefix prefix{result.toolkit->path.string(), result.toolkit->version.str(), "",
                       selection->host_compiler};
  if (selection->cudnn) {
    const int major = result.toolkit->version.major();
    result.cudnn =
        project::installed_cudnn_match(*selection->cudnn, major, store, install::Receipts::skip);
    if (!result.cudnn)
      return not_installed("cuDNN " + selection->cudnn->str() + " for CUDA " +
                               std::to_string(major) + " (from " +
                               project::describe_source(*selection) + ")",
                           "cudaenv install " + result.toolkit->version.str() + " --cudnn " +
                               selection->cudnn->str());
    if (auto trusted =
            ownership::check_prefix(result.cudnn->path, ownership::cudnn_layout(), "cuDNN");
        !trusted)
      return trusted.error();
    prefix.cudnn_lib = cudnn_library_directory(result.cudnn->path);
  }
  result.environment = toolkit_environment(result.base, prefix);
  const auto host =
      choose_host_compiler(result.base, prefix.path, prefix.host_compiler, prefix.version);
  if (auto absent = absent_pin_warning(host, prefix.host_compiler, selection->file.string());
      !absent.empty())
    result.selection.warnings.push_back(make_error(ErrorKind::usage, absent));
  return result;
}

}  // namespace cudaenv::activate
