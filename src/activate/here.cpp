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

Activated activate(here::Here here, const Environment& current) {
  Activated result;
  result.base = without_activation(current);
  result.selection = here.selection;
  if (!here.toolkit || here.missing) {
    result.environment = result.base;
    result.here = std::move(here);
    return result;
  }
  result.toolkit = here.toolkit->installed;
  result.cudnn = here.cudnn;
  ToolkitPrefix prefix{result.toolkit->path.string(), result.toolkit->version.str(), "",
                       result.selection.host_compiler};
  if (result.cudnn) prefix.cudnn_lib = cudnn_library_directory(result.cudnn->path);
  prefix.has_compiler = has_compiler(result.toolkit->path);
  if (here.forward_compat && here.forward_compat->decision.use())
    prefix.forward_compat_lib = here.forward_compat->directory.string();
  result.host =
      choose_host_compiler(result.base, prefix.path, prefix.host_compiler, prefix.version);
  result.environment = toolkit_environment(result.base, prefix, *result.host);
  if (auto absent =
          absent_pin_warning(*result.host, prefix.host_compiler, result.selection.file.string());
      !absent.empty())
    result.selection.warnings.push_back(make_error(ErrorKind::usage, absent));
  here.trace.push_back("host compiler: " + result.host->compiler.value_or("nvcc's default") + " (" +
                       result.host->reason + ")");
  if (here::debug_enabled(current)) debug_line(here.trace.back());
  result.here = std::move(here);
  return result;
}

Result<Activated> activate_here(const Environment& current, const fs::path& cwd,
                                const std::optional<VersionSpec>& forced_cuda) {
  auto here = here::find_here(without_activation(current), cwd, forced_cuda);
  if (!here) return here.error();
  if (here->missing) return *here->missing;
  return activate(std::move(*here), current);
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

Applied apply(here::Here here, const Environment& current) {
  auto activated = activate(std::move(here), current);
  Applied applied{std::move(activated.here), activated.environment,
                  std::move(activated.environment), std::move(activated.host)};
  if (applied.here.toolkit && !applied.here.missing && carries(current, applied.environment))
    applied.environment = current;
  return applied;
}

Result<Applied> environment_here(const Environment& current, const fs::path& cwd) {
  auto here = here::find_here(without_activation(current), cwd);
  if (!here) return here.error();
  return apply(std::move(*here), current);
}

}  // namespace cudaenv::activate
