// The environment a recipe gives its image: the one `cudaenv env` and the prompt hook compute,
// for the paths inside the image.

#include "activate/toolkit_env.hpp"
#include "core/text.hpp"
#include "export/recipe.hpp"
#include "project/targets.hpp"

namespace cudaenv::recipes {

namespace {

// The base image's own list, as Docker's ENV and sh expand it; cudaenv's entries go in front.
constexpr const char* own_library_path = "${LD_LIBRARY_PATH}";

std::string joined(const std::vector<std::string>& items, bool digits) {
  std::vector<std::string> out;
  for (const auto& item : items)
    out.push_back(digits ? project::arch_digits(*Version::parse(item)) : item);
  return text::join(out, ";");
}

// An image without LD_LIBRARY_PATH must not get a trailing ':' (the current directory).
std::string expanded_list(const std::string& name, std::string value) {
  const std::string tail = std::string(":") + own_library_path;
  if (name == "LD_LIBRARY_PATH" && text::ends_with(value, tail))
    value.replace(value.size() - tail.size(), tail.size(),
                  "${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}");
  return value;
}

activate::ToolkitPrefix image_toolkit(const RecipePlan& plan) {
  const std::string root = image_data_root;
  activate::ToolkitPrefix prefix{root + "/toolkits/" + plan.toolkit, plan.toolkit};
  // NVIDIA's cuDNN archives ship lib/ (the hook's choice where both could be).
  if (!plan.cudnn.empty())
    prefix.cudnn_lib = root + "/cudnn/" + plan.cudnn + "-" + plan.cudnn_variant + "/lib";
  return prefix;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> image_environment(const RecipePlan& plan) {
  Environment image;
  // The frameworks' virtualenv first, as its activation puts it, so `python3` is the one they are
  // in.
  const auto venv_bin = plan.venv.empty() ? std::string() : plan.venv + "/bin:";
  image.set("PATH", venv_bin + image_prefix + "/bin:$PATH");
  image.set("LD_LIBRARY_PATH", own_library_path);
  activate::HostCompilerChoice host;
  if (!plan.host_compiler.empty()) host.compiler = "/usr/bin/" + plan.host_compiler;
  std::vector<std::pair<std::string, std::string>> vars = {{"CUDAENV_ROOT", image_data_root}};
  for (auto& [name, value] : activate::toolkit_variables(image, image_toolkit(plan), host))
    vars.emplace_back(name, expanded_list(name, value));
  if (!plan.venv.empty()) vars.emplace_back("VIRTUAL_ENV", plan.venv);
  vars.emplace_back("NVIDIA_REQUIRE_CUDA", plan.require_cuda);
  if (!plan.archs.empty()) {
    vars.emplace_back("TORCH_CUDA_ARCH_LIST", joined(plan.archs, false));
    vars.emplace_back("CMAKE_CUDA_ARCHITECTURES", joined(plan.archs, true));
  }
  return vars;
}

}  // namespace cudaenv::recipes
