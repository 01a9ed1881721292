#include "cli/verify_json.hpp"

#include "resolve/rules.hpp"

namespace cudaenv::cli {

namespace {

using json = nlohmann::ordered_json;

json cause_json(const std::optional<verify::Cause>& cause) {
  if (!cause) return nullptr;
  return {{"id", verify::to_string(cause->id)}, {"message", cause->message}, {"fix", cause->fix}};
}

json cuda_version_or_null(const std::optional<int>& encoded) {
  if (!encoded || *encoded == 0) return nullptr;
  return Version::from_cuda_int(*encoded).str();
}

json build_json(const verify::Verification& v) {
  json archs = json::array();
  for (const auto& cc : v.archs.sass) archs.push_back(resolve::sm_name(cc));
  const auto& compile = v.build.compile;
  return {{"archs", archs},
          {"ptx", v.archs.ptx ? json("compute_" + std::to_string(v.archs.ptx->major()) +
                                     std::to_string(v.archs.ptx->minor()))
                              : json(nullptr)},
          {"arch_source", v.archs.source},
          {"cached", v.build.cached},
          {"ok", v.build.ok()},
          {"binary", v.build.binary.string()},
          {"command", v.build.command.empty() ? json(nullptr) : json(v.build.command)},
          {"seconds", compile ? json(v.build.seconds) : json(nullptr)},
          {"exit_code", compile ? json(compile->exit_code) : json(nullptr)},
          {"output", compile ? json(compile->err + compile->out) : json(nullptr)}};
}

json run_json(const verify::Verification& v) {
  if (!v.run) return nullptr;
  json errors = json::array();
  for (const auto& e : v.program.errors) {
    errors.push_back({{"call", e.call},
                      {"name", e.name},
                      {"code", e.code},
                      {"message", e.message},
                      {"gpu", e.gpu ? json(*e.gpu) : json(nullptr)}});
  }
  return {{"exit_code", v.run->exit_code},
          {"driver_cuda_version", cuda_version_or_null(v.program.driver_version)},
          {"runtime_version", cuda_version_or_null(v.program.runtime_version)},
          {"device_count", v.program.device_count ? json(*v.program.device_count) : json(nullptr)},
          {"errors", errors},
          {"stderr", v.run->err}};
}

json gpus_json(const verify::Verification& v) {
  json gpus = json::array();
  for (const auto& gpu : v.program.gpus) {
    json kernel = nullptr;
    if (gpu.kernel) {
      kernel = {{"ok", gpu.kernel->ok},
                {"elements", gpu.kernel->elements},
                {"mismatches", gpu.kernel->mismatches}};
    }
    gpus.push_back(
        {{"index", gpu.index},
         {"name", gpu.name},
         {"compute_capability", gpu.compute_capability.str()},
         {"sm", resolve::sm_name(gpu.compute_capability)},
         {"multiprocessors", gpu.multiprocessors},
         {"memory_bytes", gpu.memory_bytes},
         {"kernel", kernel},
         {"bandwidth_gbs", gpu.bandwidth_gbs ? json(*gpu.bandwidth_gbs) : json(nullptr)}});
  }
  return gpus;
}

json cudnn_json(const verify::Verification& v) {
  if (!v.cudnn) return nullptr;
  const auto& loaded = v.program.cudnn;
  return {{"library", v.cudnn->library},
          {"loaded", loaded ? json(loaded->loaded) : json(nullptr)},
          {"version", loaded && loaded->version ? json(*loaded->version) : json(nullptr)},
          {"expected", v.cudnn->expected ? json(*v.cudnn->expected) : json(nullptr)},
          {"header", v.cudnn->header.empty() ? json(nullptr) : json(v.cudnn->header)},
          {"message", loaded && !loaded->message.empty() ? json(loaded->message) : json(nullptr)}};
}

json frameworks_json(const verify::Verification& v) {
  json frameworks = json::array();
  for (const auto& f : v.frameworks) {
    json coverage = json::array();
    for (const auto& [gpu, level] : f.coverage) {
      coverage.push_back({{"sm", resolve::sm_name(gpu)}, {"coverage", verify::to_string(level)}});
    }
    frameworks.push_back({{"name", f.name},
                          {"installed", f.installed},
                          {"version", f.version.empty() ? json(nullptr) : json(f.version)},
                          {"cuda", f.cuda ? json(*f.cuda) : json(nullptr)},
                          {"gpus", f.gpus},
                          {"archs", f.archs},
                          {"coverage", coverage},
                          {"library_scan", f.library_scan},
                          {"op_ok", f.op_ok ? json(*f.op_ok) : json(nullptr)},
                          {"message", f.message.empty() ? json(nullptr) : json(f.message)},
                          {"ok", !f.cause},
                          {"cause", cause_json(f.cause)}});
  }
  return frameworks;
}

}  // namespace

json verification_to_json(const verify::Verification& v) {
  const auto& toolkit = v.toolkit;
  json out;
  out["schema_version"] = 1;
  out["ok"] = v.ok();
  out["cause"] = v.cause ? json(verify::to_string(v.cause->id)) : json(nullptr);
  out["message"] = v.cause ? json(v.cause->message) : json(nullptr);
  out["fix"] = v.cause ? json(v.cause->fix) : json(nullptr);
  out["toolkit"] = {
      {"version", toolkit.facts.version ? json(toolkit.facts.version->str()) : json(nullptr)},
      {"nvcc_version",
       toolkit.facts.nvcc_version ? json(toolkit.facts.nvcc_version->str()) : json(nullptr)},
      {"path", toolkit.facts.path},
      {"selected_by", toolkit.selected_by},
      {"reason", toolkit.reason}};
  out["build"] = build_json(v);
  out["build_only"] = v.build_only;
  out["run"] = run_json(v);
  out["gpus"] = gpus_json(v);
  out["cudnn"] = cudnn_json(v);
  out["frameworks"] = frameworks_json(v);
  return out;
}

}  // namespace cudaenv::cli
