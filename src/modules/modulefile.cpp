#include "modules/modulefile.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "core/text.hpp"
#include "core/untrusted.hpp"
#include "modules/render.hpp"

namespace cudaenv::modules {

namespace {

bool quotable_char(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  static constexpr std::string_view allowed = " /._-+@,=~%";
  return allowed.find(c) != std::string_view::npos;
}

bool is_control(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte < 0x20 || byte == 0x7f;
}

std::string file_name(const std::string& name, Format format) {
  return format == Format::lua ? name + ".lua" : name;
}

}  // namespace

Status check_quotable(const std::string& path) {
  for (const char c : path) {
    if (quotable_char(c)) continue;
    const auto shown = (c > ' ' && c < 127)
                           ? std::string("'") + c + "'"
                           : "byte " + std::to_string(static_cast<unsigned char>(c));
    return make_error(ErrorKind::usage,
                      "cannot write modulefiles for " + text::printable(path, text::message_limit) +
                          ": it holds " + shown + ", which a modulefile cannot carry safely",
                      "keep store paths to letters, digits, spaces and / . _ - + @ , = ~ % "
                      "(set CUDAENV_ROOT or the system store elsewhere)");
  }
  return Ok{};
}

std::string lua_string(const std::string& value) {
  std::string quoted = "\"";
  for (const char c : value) {
    if (is_control(c)) {
      char escape[5];  // Lua's \ddd takes up to three decimal digits: always write three
      std::snprintf(escape, sizeof escape, "\\%03u", static_cast<unsigned char>(c));
      quoted += escape;
      continue;
    }
    if (c == '\\' || c == '"') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

std::string tcl_word(const std::string& value) {
  // Braces stop every substitution; only a brace or a backslash inside could end them early.
  const bool braces_hold = std::none_of(value.begin(), value.end(), [](char c) {
    return c == '{' || c == '}' || c == '\\' || is_control(c);
  });
  if (braces_hold) return "{" + value + "}";
  // Else a bare word with every character that is not plain escaped: \uNNNN (always four hex
  // digits) for controls, a backslash before the rest. Tcl substitutes it back to the value.
  std::string word;
  for (const char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (is_control(c)) {
      char escape[7];
      std::snprintf(escape, sizeof escape, "\\u%04x", byte);
      word += escape;
    } else if (std::isalnum(byte) != 0 || byte >= 0x80 || c == '/' || c == '.' || c == '_' ||
               c == '-') {
      word += c;
    } else {
      word += '\\';
      word += c;
    }
  }
  return word.empty() ? "{}" : word;
}

namespace {

Error unsafe_value(const std::string& module, const char* what, const std::string& value,
                   untrusted::Field grammar) {
  return make_error(ErrorKind::integrity,
                    "cannot write the modulefile of " + text::printable(module) + ": its " + what +
                        " \"" + text::printable(value) + "\" is not " +
                        std::string(untrusted::describe(grammar)),
                    "the compatibility database in use is corrupt or hostile: remove the copy in "
                    "the data root (cudaenv db shows where it comes from)");
}

// Every value a toolkit's modulefile splices in, checked for what it is: paths and labels
// quotable, versions and floors versions, architectures sm names.
Status check_toolkit(const ToolkitModule& toolkit) {
  using untrusted::Field;
  const auto module = "cuda/" + toolkit.version;
  if (!untrusted::is_valid(Field::release_version, toolkit.version))
    return unsafe_value(module, "version", toolkit.version, Field::release_version);
  for (const auto& floor : {toolkit.full_floor, toolkit.minor_floor}) {
    if (floor && !untrusted::is_valid(Field::release_version, *floor))
      return unsafe_value(module, "driver floor", *floor, Field::release_version);
  }
  for (const auto& arch : text::split_whitespace(toolkit.archs)) {
    if (!untrusted::is_valid(Field::gpu_arch, arch))
      return unsafe_value(module, "GPU architecture", arch, Field::gpu_arch);
  }
  for (const auto* path : {&toolkit.prefix, &toolkit.store}) {
    if (auto ok = check_quotable(*path); !ok) return ok;
  }
  if (toolkit.host_compiler) return check_quotable(*toolkit.host_compiler);
  return Ok{};
}

Status check_cudnn(const CudnnModule& cudnn) {
  using untrusted::Field;
  if (!untrusted::is_valid(Field::release_version, cudnn.version))
    return unsafe_value("cudnn/" + cudnn.version, "version", cudnn.version, Field::release_version);
  return check_quotable(cudnn.prefix);
}

}  // namespace

Result<std::vector<ModuleFile>> modulefiles(const ModuleSet& set, Format format) {
  std::vector<ModuleFile> files;
  for (const auto& toolkit : set.toolkits) {
    if (auto ok = check_toolkit(toolkit); !ok) return ok.error();
    const auto text = format == Format::lua ? lua_toolkit(toolkit, set) : tcl_toolkit(toolkit, set);
    files.push_back({file_name("cuda/" + toolkit.version, format), text});
  }
  for (const auto& cudnn : set.cudnn) {
    if (auto ok = check_cudnn(cudnn); !ok) return ok.error();
    const auto name = "cudnn/" + cudnn.version + "-cuda" + std::to_string(cudnn.cuda_major);
    const auto text = format == Format::lua ? lua_cudnn(cudnn, set) : tcl_cudnn(cudnn, set);
    files.push_back({file_name(name, format), text});
  }
  return files;
}

}  // namespace cudaenv::modules
