#include "activate/here.hpp"

#include <unistd.h>

#include "activate/activation.hpp"
#include "activate/host_compiler.hpp"
#include "activate/toolkit_env.hpp"
#include "core/text.hpp"

namespace cudaenv::activate {

namespace fs = std::filesystem;

namespace {

// NVIDIA's cuDNN archives ship lib/; some repackagings use lib64/.
std::string cudnn_library_directory(const fs::path& prefix) {
  std::error_code ec;
  for (const char* candidate : {"lib", "lib64"}) {
    if (fs::is_directory(prefix / candidate, ec)) return (prefix / candidate).string();
  }
  return (prefix / "lib").string();
}

// CUDAENV_DEBUG=1: the host compiler's rule, after find_here's trace, on stderr.
void debug_line(const std::string& line) {
  const auto text = "cudaenv: debug: " + text::printable(line, text::message_limit) + "\n";
  (void)!::write(STDERR_FILENO, text.data(), text.size());
}

}  // namespace

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
  auto here = here::find_here(result.base, cwd, forced_cuda);
  if (!here) return here.error();
  const bool debug = here::debug_enabled(current);
  result.selection = here->selection;
  if (here->missing) return *here->missing;
  if (!here->toolkit) {
    result.environment = result.base;
    result.here = std::move(*here);
    return result;
  }
  result.toolkit = here->toolkit->installed;
  result.cudnn = here->cudnn;
  ToolkitPrefix prefix{result.toolkit->path.string(), result.toolkit->version.str(), "",
                       result.selection.host_compiler};
  if (result.cudnn) prefix.cudnn_lib = cudnn_library_directory(result.cudnn->path);
  // Chosen once: the environment and the absent-pin warning read the same choice.
  const auto host =
      choose_host_compiler(result.base, prefix.path, prefix.host_compiler, prefix.version);
  result.environment = toolkit_environment(result.base, prefix, host);
  if (auto absent = absent_pin_warning(host, prefix.host_compiler, result.selection.file.string());
      !absent.empty())
    result.selection.warnings.push_back(make_error(ErrorKind::usage, absent));
  here->trace.push_back("host compiler: " + host.compiler.value_or("nvcc's default") + " (" +
                        host.reason + ")");
  if (debug) debug_line(here->trace.back());
  result.here = std::move(*here);
  return result;
}

namespace {

// The hook already activated this directory's toolkit in `current`: what a process started from
// this shell gets is `current` itself, with whatever a later rc line changed after the hook.
bool carries(const Environment& current, const Environment& activated) {
  for (const char* name : {"CUDA_HOME", "CUDAENV_ACTIVE"}) {
    if (current.get(name) != activated.get(name)) return false;
  }
  return true;
}

}  // namespace

Result<Environment> environment_here(const Environment& current, const fs::path& cwd) {
  auto activated = activate_here(current, cwd);
  if (!activated) {
    if (activated.error().kind != ErrorKind::not_found) return activated.error();
    return without_activation(current);
  }
  if (carries(current, activated->environment)) return current;
  return activated->environment;
}

}  // namespace cudaenv::activate
