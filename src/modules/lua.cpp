// Lua modulefiles for Lmod.

#include "modules/render.hpp"

namespace cudaenv::modules {

namespace {

// Reads the node's driver at load time (below $CUDAENV_SYSROOT when set: fixture machines) and
// compares it with the floors. Only digits and dots are taken from the files it reads.
constexpr const char* lua_driver_check = R"lua(local function cudaenv_driver()
  local root = os.getenv("CUDAENV_SYSROOT") or ""
  for _, file in ipairs({"/sys/module/nvidia/version", "/proc/driver/nvidia/version"}) do
    local f = io.open(root .. file, "r")
    if f then
      local text = f:read(4096) or ""
      f:close()
      local found = text:match("%d+%.%d+[%.%d]*")
      if found then return found end
    end
  end
  return nil
end

local function cudaenv_older(a, b)
  local x, y = {}, {}
  for n in a:gmatch("%d+") do x[#x + 1] = tonumber(n) end
  for n in b:gmatch("%d+") do y[#y + 1] = tonumber(n) end
  for i = 1, math.max(#x, #y) do
    local p, q = x[i] or 0, y[i] or 0
    if p ~= q then return p < q end
  end
  return false
end

if mode() == "load" and lowest then
  local driver = cudaenv_driver()
  if not driver then
    LmodMessage(name .. ": no NVIDIA driver on this node: loaded for building only (running needs driver >= " .. lowest .. ")")
  elseif cudaenv_older(driver, lowest) then
    local works = nil
    for _, t in ipairs(fallbacks) do
      if not cudaenv_older(driver, t[2]) then works = t[1]; break end
    end
    local advice = works and ("the newest installed toolkit that works here is cuda/" .. works)
      or ("no installed toolkit works with it: upgrade the driver to >= " .. lowest)
    LmodError(name .. " needs NVIDIA driver " .. floor .. "; this node's driver is " .. driver .. ": " .. advice)
  elseif full and cudaenv_older(driver, full) then
    LmodMessage(name .. ": driver " .. driver .. " is below " .. full .. " (full support): running under minor-version compatibility (no JIT of newer PTX)")
  end
end

)lua";

// CUDAHOSTCXX and -ccbin for a toolkit that refuses the default c++ (what activation sets),
// after `local host_compiler = …`. Ours goes first in NVCC_PREPEND_FLAGS: nvcc takes the last
// -ccbin, so one of the user's own (later in the variable or on the command line) wins. pushenv:
// unloading gives back the user's values (Lmod pops; the value at unload is the loaded one).
constexpr const char* lua_host_compiler =
    R"lua(local nvcc_flags = os.getenv("NVCC_PREPEND_FLAGS") or ""
if mode() == "load" then
  nvcc_flags = "-ccbin " .. host_compiler .. (nvcc_flags ~= "" and (" " .. nvcc_flags) or "")
end
pushenv("CUDAHOSTCXX", host_compiler)
pushenv("NVCC_PREPEND_FLAGS", nvcc_flags)
)lua";

std::string lua_optional(const std::optional<std::string>& value) {
  return value ? lua_string(*value) : "nil";
}

std::string header(const std::string& what) {
  return std::string("-- ") + generated_marker + ": " + what +
         "\n-- Rerun `cudaenv modules write` after installing or removing toolkits.\n\n";
}

}  // namespace

std::string lua_toolkit(const ToolkitModule& toolkit, const ModuleSet& set) {
  std::string text = header("CUDA Toolkit " + toolkit.version);
  text +=
      "help(" + lua_string("CUDA Toolkit " + toolkit.version + " from " + toolkit.prefix) + ")\n";
  for (const auto& line : whatis_lines(toolkit)) text += "whatis(" + lua_string(line) + ")\n";
  text += "family(\"cuda\")\n\n";
  text += "local name = " + lua_string("cuda/" + toolkit.version) + "\n";
  text += "local prefix = " + lua_string(toolkit.prefix) + "\n";
  text += "local lowest = " + lua_optional(toolkit.lowest_driver()) + "\n";
  text += "local full = " + lua_optional(toolkit.full_floor) + "\n";
  text += "local floor = " + lua_string(describe_floor(toolkit)) + "\n";
  text += "local fallbacks = {";
  for (const auto& [version, floor] : fallbacks(set))
    text += "{" + lua_string(version) + ", " + lua_string(floor) + "}, ";
  text += "}\n";
  text += lua_driver_check;
  // pushenv, not setenv: unloading gives back a CUDA_HOME the user had set before.
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH", "CUDAToolkit_ROOT"})
    text += "pushenv(\"" + std::string(variable) + "\", prefix)\n";
  if (toolkit.has_nvcc) text += "pushenv(\"CUDACXX\", pathJoin(prefix, \"bin/nvcc\"))\n";
  if (toolkit.host_compiler)
    text +=
        "local host_compiler = " + lua_string(*toolkit.host_compiler) + "\n" + lua_host_compiler;
  text += "prepend_path(\"PATH\", pathJoin(prefix, \"bin\"))\n";
  text += "prepend_path(\"LD_LIBRARY_PATH\", pathJoin(prefix, \"lib64\"))\n";
  text += "prepend_path(\"LIBRARY_PATH\", pathJoin(prefix, \"lib64\"))\n";
  if (toolkit.has_stubs)
    text += "prepend_path(\"LIBRARY_PATH\", pathJoin(prefix, \"lib64/stubs\"))\n";
  if (toolkit.has_include) text += "prepend_path(\"CPATH\", pathJoin(prefix, \"include\"))\n";
  text += "prepend_path(\"CMAKE_PREFIX_PATH\", prefix)\n";
  if (toolkit.has_man) text += "prepend_path(\"MANPATH\", pathJoin(prefix, \"share/man\"))\n";
  return text;
}

std::string lua_cudnn(const CudnnModule& cudnn, const ModuleSet& set) {
  const auto name = "cudnn/" + cudnn.version + "-cuda" + std::to_string(cudnn.cuda_major);
  const auto cudas = cuda_modules_of_major(set, cudnn.cuda_major);
  std::string text =
      header("cuDNN " + cudnn.version + " for CUDA " + std::to_string(cudnn.cuda_major));
  text += "help(" + lua_string("cuDNN " + cudnn.version + " from " + cudnn.prefix) + ")\n";
  text += "whatis(\"Name: cuDNN\")\nwhatis(" + lua_string("Version: " + cudnn.version) + ")\n";
  text += "whatis(" +
          lua_string("Needs: a cuda/" + std::to_string(cudnn.cuda_major) + ".x module") +
          ")\nfamily(\"cudnn\")\n\n";
  text += "local prefix = " + lua_string(cudnn.prefix) + "\n";
  text += "if mode() == \"load\" then\n  local cudas = {";
  for (const auto& cuda : cudas) text += lua_string(cuda) + ", ";
  text += "}\n  local found = false\n";
  text += "  for _, m in ipairs(cudas) do if isloaded(m) then found = true end end\n";
  text +=
      "  if not found then\n    LmodError(" +
      lua_string(
          name + " needs a CUDA " + std::to_string(cudnn.cuda_major) + " toolkit loaded first: " +
          (cudas.empty() ? std::string("none is installed") : "module load " + cudas.front())) +
      ")\n  end\nend\n";
  text += "prepend_path(\"LD_LIBRARY_PATH\", pathJoin(prefix, \"lib\"))\n";
  text += "prepend_path(\"LIBRARY_PATH\", pathJoin(prefix, \"lib\"))\n";
  text += "prepend_path(\"CPATH\", pathJoin(prefix, \"include\"))\n";
  text += "prepend_path(\"CMAKE_PREFIX_PATH\", prefix)\n";
  return text;
}

}  // namespace cudaenv::modules
