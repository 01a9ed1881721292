#include "probe/nvidia_smi.hpp"

#include "core/text.hpp"
#include "probe/executables.hpp"
#include "probe/wsl.hpp"

namespace cudaenv::probe {

SmiOutcome classify_nvidia_smi(int exit_code, std::string_view output) {
  if (text::contains(output, "couldn't communicate with the NVIDIA driver"))
    return SmiOutcome::no_communication;
  if (text::contains(output, "Driver/library version mismatch"))
    return SmiOutcome::version_mismatch;
  return exit_code == 0 ? SmiOutcome::ok : SmiOutcome::failed;
}

NvidiaSmiFacts probe_nvidia_smi(const Sysroot& sysroot, ProcessRunner& runner,
                                const Environment& env) {
  NvidiaSmiFacts facts;
  // WSL2 maps the Windows driver's nvidia-smi in with its libraries, off PATH in a bare shell.
  const auto path = find_tool(sysroot, env, "nvidia-smi", {"/usr/bin", wsl_driver_directory});
  if (!path) return facts;
  facts.path = *path;
  // The CSV query is stable across the banner's layout changes (R610 renamed its fields).
  const std::vector<std::string> arguments = {"--query-gpu=driver_version,name",
                                              "--format=csv,noheader"};
  facts.command = *path + " " + text::join(arguments, " ");
  std::vector<std::string> argv = {runnable(sysroot, *path)};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  auto result = runner.run(Command{argv, std::nullopt, std::chrono::seconds(20)});
  if (!result) {
    facts.outcome = SmiOutcome::failed;
    facts.output = result.error().message;
    return facts;
  }
  facts.exit_code = result->exit_code;
  const auto output = result->out + result->err;
  facts.outcome =
      result->timed_out ? SmiOutcome::failed : classify_nvidia_smi(facts.exit_code, output);
  for (const auto& line : text::lines(output)) {
    if (!text::trim(line).empty()) {
      facts.output = text::trim(line);
      break;
    }
  }
  return facts;
}

}  // namespace cudaenv::probe
