// The shim: $CUDAENV_ROOT/shims/nvcc (and every other tool) links here. It finds the toolkit
// that applies in the current directory with the same rules as the prompt hook and replaces
// itself with that toolkit's tool, arguments untouched, in the environment `cudaenv exec` gives.
// It links only cudaenv's activation code (libstdc++ statically), so it starts in well under a
// millisecond.
#include <cstdio>
#include <string>
#include <vector>

#include "activate/shims.hpp"
#include "core/paths.hpp"
#include "core/process.hpp"

namespace {

int fail(const std::string& tool, const cudaenv::Error& error) {
  std::fprintf(stderr, "cudaenv: %s: %s\n", tool.c_str(), error.message.c_str());
  if (!error.hint.empty()) std::fprintf(stderr, "hint: %s\n", error.hint.c_str());
  return static_cast<int>(error.kind);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace cudaenv;
  const std::string invoked = argc > 0 ? argv[0] : "";
  const std::string tool = invoked.substr(invoked.find_last_of('/') + 1);
  if (tool == activate::shim_program_name) {
    std::fprintf(stderr,
                 "cudaenv-shim: run it through a link named after a tool "
                 "($CUDAENV_ROOT/shims/nvcc); 'cudaenv rehash' creates them\n");
    return static_cast<int>(ErrorKind::usage);
  }
  const auto env = Environment::from_process();
  auto target = activate::resolve_tool(env, paths::working_directory(env), tool);
  if (!target) return fail(tool, target.error());
  std::vector<std::string> args{target->path};
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return fail(tool, replace_process(args, target->environment.variables()));
}
