#include "arch/formats.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include "core/text.hpp"

namespace cudaenv::arch {

namespace {

constexpr std::array<std::pair<Format, std::string_view>, 10> format_table = {{
    {Format::text, "text"},
    {Format::conda, "conda"},
    {Format::pixi, "pixi"},
    {Format::spack, "spack"},
    {Format::nix, "nix"},
    {Format::cmake, "cmake"},
    {Format::torch, "torch"},
    {Format::variant, "variant"},
    {Format::variant_env, "variant-env"},
    {Format::json, "json"},
}};

std::string who(const GpuSubject& subject) {
  return subject.declared ? "target " + subject.name : subject.name;
}

std::string where_to_look(const GpuSubject& subject) {
  return subject.declared ? "fix the target in " + subject.file
                          : "run it where the GPUs are, or name a declared target: cudaenv arch "
                            "--target NAME";
}

Error missing_gpus(const GpuSubject& subject, Format format) {
  return make_error(ErrorKind::not_found,
                    who(subject) + " shows no GPU: --format " + std::string(format_name(format)) +
                        " needs the GPUs' compute capabilities",
                    where_to_look(subject));
}

Error missing_driver_cuda(const GpuSubject& subject, Format format) {
  const auto what = subject.driver.empty() ? who(subject) + " shows no NVIDIA driver"
                                           : "the CUDA version of driver " +
                                                 text::printable(subject.driver) + " is not known";
  return make_error(
      ErrorKind::not_found,
      what + ": --format " + std::string(format_name(format)) +
          " needs the newest CUDA the driver supports",
      subject.driver.empty() ? where_to_look(subject) : "update the database: cudaenv db update");
}

std::vector<std::string> arch_names(const GpuSubject& subject) {
  std::vector<std::string> names;
  for (const auto& arch : subject.archs) names.push_back(arch.str());
  return names;
}

std::vector<std::string> arch_digits(const GpuSubject& subject) {
  std::vector<std::string> digits;
  for (const auto& arch : subject.archs) digits.push_back(project::arch_digits(arch));
  return digits;
}

// Every value printed is built from validated versions and names, so it holds only these: a
// double-quoted shell word of them expands nothing (no $, `, \ or "), in bash, zsh and fish.
bool shell_safe(std::string_view value) {
  return std::all_of(value.begin(), value.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view(".;,:=+_ ^@").find(c) != std::string_view::npos;
  });
}

Result<std::string> checked(std::string value) {
  if (!shell_safe(value))
    return make_error(ErrorKind::integrity,
                      "refusing to print \"" + text::printable(value) +
                          "\": a value of cudaenv arch holds a character a shell would expand",
                      "report this: the GPUs' facts passed their grammar but not the printer's");
  return value;
}

// `export NAME="value"` lines: what `eval "$(cudaenv arch --format conda)"` runs (a semicolon in
// TORCH_CUDA_ARCH_LIST would end the command unquoted).
Result<std::string> assignments(const Variables& variables) {
  std::string out;
  for (const auto& [name, value] : variables) {
    auto safe = checked(value);
    if (!safe) return safe.error();
    out += "export " + name + "=\"" + *safe + "\"\n";
  }
  return out;
}

std::string quoted_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (const auto& item : items) out += " \"" + item + "\"";
  return out + " ]";
}

Result<std::string> render_pixi(const GpuSubject& subject) {
  auto cuda = pixi_cuda(subject);
  if (!cuda) return cuda.error();
  if (auto safe = checked(*cuda); !safe) return safe.error();
  // pixi's manifest has no key for the GPUs themselves: the driver's CUDA is all it states.
  return "[system-requirements]\ncuda = \"" + *cuda + "\"\n";
}

Result<std::string> render_nix(const GpuSubject& subject) {
  auto capabilities = nix_capabilities(subject);
  if (!capabilities) return capabilities.error();
  for (const auto& capability : *capabilities) {
    if (auto safe = checked(capability); !safe) return safe.error();
  }
  return "{\n  cudaSupport = true;\n  cudaCapabilities = " + quoted_list(*capabilities) + ";\n}\n";
}

template <typename Value, typename Shape>
Result<std::string> shaped(const Result<Value>& value, Shape shape) {
  if (!value) return value.error();
  return Result<std::string>(shape(*value));
}

}  // namespace

std::optional<Format> parse_format(std::string_view name) {
  for (const auto& [format, spelling] : format_table) {
    if (spelling == name) return format;
  }
  return std::nullopt;
}

std::string_view format_name(Format format) {
  for (const auto& [each, spelling] : format_table) {
    if (each == format) return spelling;
  }
  return "text";
}

std::string format_names() {
  std::string out;
  for (std::size_t i = 0; i < format_table.size(); ++i) {
    if (i > 0) out += i + 1 == format_table.size() ? " or " : ", ";
    out += format_table[i].second;
  }
  return out;
}

Variables conda_variables(const GpuSubject& subject) {
  const auto cuda = subject.driver_cuda ? subject.driver_cuda->str() : std::string();
  // CEP 46: the lowest compute capability of all devices, absent whenever __cuda is.
  // Its override is VERSION or VERSION=MODEL; without a model the plugin warns and writes "0".
  auto arch = cuda.empty() || subject.archs.empty() ? std::string() : subject.archs.front().str();
  if (!arch.empty() && !subject.lowest_model.empty()) arch += "=" + subject.lowest_model;
  return {{"CONDA_OVERRIDE_CUDA", cuda}, {"CONDA_OVERRIDE_CUDA_ARCH", arch}};
}

Result<std::string> pixi_cuda(const GpuSubject& subject) {
  if (!subject.driver_cuda) return missing_driver_cuda(subject, Format::pixi);
  return subject.driver_cuda->str();
}

Result<std::string> spack_spec(const GpuSubject& subject) {
  if (subject.archs.empty()) return missing_gpus(subject, Format::spack);
  std::string spec = "+cuda cuda_arch=" + text::join(arch_digits(subject), ",");
  // Spack's ranges include what they end with: @:13.0 admits 13.0.2, never 13.1.
  if (subject.driver_cuda) spec += " ^cuda@:" + subject.driver_cuda->str();
  return spec;
}

Result<std::vector<std::string>> nix_capabilities(const GpuSubject& subject) {
  if (subject.archs.empty()) return missing_gpus(subject, Format::nix);
  return arch_names(subject);
}

Result<std::string> cmake_architectures(const GpuSubject& subject) {
  if (subject.archs.empty()) return missing_gpus(subject, Format::cmake);
  return text::join(arch_digits(subject), ";");
}

Result<std::string> torch_arch_list(const GpuSubject& subject) {
  if (subject.archs.empty()) return missing_gpus(subject, Format::torch);
  return text::join(arch_names(subject), ";") + "+PTX";
}

Result<std::string> render(Format format, const GpuSubject& subject) {
  switch (format) {
    case Format::conda: return assignments(conda_variables(subject));
    case Format::pixi: return render_pixi(subject);
    case Format::spack:
      return shaped(spack_spec(subject), [](const std::string& spec) {
        auto safe = checked(spec);
        if (!safe) return safe;
        return Result<std::string>(*safe + "\n");
      });
    case Format::nix: return render_nix(subject);
    case Format::cmake:
      // Quoted: pasted into a shell, an unquoted ';' would end the cmake command.
      return shaped(cmake_architectures(subject), [](const std::string& list) {
        auto safe = checked(list);
        if (!safe) return safe;
        return Result<std::string>("-DCMAKE_CUDA_ARCHITECTURES=\"" + *safe + "\"\n");
      });
    case Format::torch:
      return shaped(torch_arch_list(subject), [](const std::string& list) {
        return assignments({{"TORCH_CUDA_ARCH_LIST", list}});
      });
    case Format::variant:
      return shaped(variant_properties(subject), [](const std::vector<std::string>& lines) {
        auto safe = checked(text::join(lines, " "));
        if (!safe) return safe;
        return Result<std::string>(text::join(lines, "\n") + "\n");
      });
    case Format::variant_env: return shaped(variant_environment(subject), assignments);
    case Format::text:
    case Format::json: break;
  }
  return make_error(ErrorKind::usage, "--format " + std::string(format_name(format)) +
                                          " is printed by the command line, not rendered here");
}

std::vector<std::string> notes(Format format, const GpuSubject& subject) {
  const bool variant = format == Format::variant || format == Format::variant_env ||
                       format == Format::text || format == Format::json;
  if (!variant || subject.archs.size() < 2) return {};
  std::vector<Version> older(subject.archs.begin(), subject.archs.end() - 1);
  return {"the NVIDIA variant provider chooses for the newest GPU alone (" +
          sm_names({subject.archs.back()}) + "): a variant wheel it picks may carry no code for " +
          sm_names(older) + "; after installing, cudaenv scan shows whether every GPU has code"};
}

}  // namespace cudaenv::arch
