#include "verify/program_output.hpp"

#include <cstdlib>

#include "core/text.hpp"

namespace cudaenv::verify {

namespace {

using Fields = std::map<std::string, std::string>;

// Values the program prints as numbers; a malformed one reads as 0 rather than failing the parse:
// the classifier works from the error lines, not from these.
std::uint64_t number(const Fields& fields, const std::string& key) {
  const auto it = fields.find(key);
  if (it == fields.end()) return 0;
  return static_cast<std::uint64_t>(text::parse_integer(it->second).value_or(0));
}

std::string field(const Fields& fields, const std::string& key) {
  const auto it = fields.find(key);
  return it == fields.end() ? std::string() : it->second;
}

GpuReport* gpu_with_index(ProgramReport& report, int index) {
  for (auto& gpu : report.gpus) {
    if (gpu.index == index) return &gpu;
  }
  return nullptr;
}

void read_gpu(ProgramReport& report, const Fields& fields) {
  GpuReport gpu;
  gpu.index = static_cast<int>(number(fields, "index"));
  gpu.name = field(fields, "name");
  gpu.compute_capability = Version::parse(field(fields, "cc")).value_or(Version{});
  gpu.multiprocessors = static_cast<int>(number(fields, "sms"));
  gpu.memory_bytes = number(fields, "memory");
  report.gpus.push_back(std::move(gpu));
}

void read_kernel(ProgramReport& report, const Fields& fields) {
  auto* gpu = gpu_with_index(report, static_cast<int>(number(fields, "gpu")));
  if (gpu == nullptr) return;
  KernelCheck check;
  check.ok = field(fields, "status") == "ok";
  check.elements = number(fields, "elements");
  check.mismatches = number(fields, "mismatches");
  check.first_index = number(fields, "first_index");
  check.expected = field(fields, "expected");
  check.got = field(fields, "got");
  gpu->kernel = check;
}

void read_bandwidth(ProgramReport& report, const Fields& fields) {
  auto* gpu = gpu_with_index(report, static_cast<int>(number(fields, "gpu")));
  const auto value = field(fields, "device_to_device_gbs");
  if (gpu == nullptr || value.empty()) return;
  gpu->bandwidth_gbs = std::strtod(value.c_str(), nullptr);
}

void read_error(ProgramReport& report, const Fields& fields) {
  CudaErrorLine error;
  error.call = field(fields, "call");
  error.code = static_cast<int>(number(fields, "code"));
  error.name = field(fields, "error_name");
  error.message = field(fields, "message");
  // The program checks devices in order and prints a device's "gpu" line before its checks.
  if (!report.gpus.empty()) error.gpu = report.gpus.back().index;
  report.errors.push_back(std::move(error));
}

void read_cudnn(ProgramReport& report, const Fields& fields) {
  CudnnLoad cudnn;
  cudnn.loaded = field(fields, "status") == "loaded";
  if (cudnn.loaded) cudnn.version = static_cast<long long>(number(fields, "version"));
  cudnn.message = field(fields, "message");
  report.cudnn = cudnn;
}

void read_line(ProgramReport& report, std::string_view kind, const Fields& fields) {
  if (kind == "versions") {
    report.driver_version = static_cast<int>(number(fields, "driver"));
    report.runtime_version = static_cast<int>(number(fields, "runtime"));
  } else if (kind == "devices") {
    report.device_count = static_cast<int>(number(fields, "count"));
  } else if (kind == "gpu") {
    read_gpu(report, fields);
  } else if (kind == "kernel") {
    read_kernel(report, fields);
  } else if (kind == "bandwidth") {
    read_bandwidth(report, fields);
  } else if (kind == "error") {
    read_error(report, fields);
  } else if (kind == "cudnn") {
    read_cudnn(report, fields);
  } else if (kind == "done") {
    report.finished_ok = field(fields, "status") == "ok";
  }
}

}  // namespace

Fields parse_fields(std::string_view fields) {
  Fields result;
  while (!fields.empty()) {
    fields = text::trim(fields);
    const auto equals = fields.find('=');
    if (equals == std::string_view::npos) break;
    const std::string key(fields.substr(0, equals));
    fields.remove_prefix(equals + 1);
    // Free text (a GPU's name, CUDA's error string) is printed last and runs to the line's end.
    const auto end = key == "name" || key == "message" ? fields.size() : fields.find(' ');
    result[key] = std::string(end == std::string_view::npos ? fields : fields.substr(0, end));
    fields.remove_prefix(end == std::string_view::npos ? fields.size() : end);
  }
  return result;
}

ProgramReport parse_program_output(std::string_view output) {
  ProgramReport report;
  for (const auto& line : text::lines(output)) {
    const auto space = line.find(' ');
    const std::string_view kind = std::string_view(line).substr(0, space);
    const std::string_view rest =
        space == std::string::npos ? std::string_view() : std::string_view(line).substr(space + 1);
    read_line(report, kind, parse_fields(rest));
  }
  return report;
}

}  // namespace cudaenv::verify
