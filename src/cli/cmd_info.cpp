// `cudaenv info [--json]`: what probe sees on this machine.

#include <iomanip>
#include <sstream>

#include "cli/cmd_lock.hpp"
#include "cli/commands.hpp"
#include "cli/info_json.hpp"
#include "cli/terminal.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "manifest/load.hpp"
#include "probe/machine.hpp"
#include "resolve/toolkit_identity.hpp"

namespace cudaenv::cli {

namespace {

// Every fact below was read from the machine's files and programs: shown escaped and cut.
std::string shown(const std::string& fact) { return text::printable(fact, text::message_limit); }

std::vector<std::string> shown(const std::vector<std::string>& facts) {
  std::vector<std::string> escaped;
  for (const auto& fact : facts) escaped.push_back(shown(fact));
  return escaped;
}

class InfoPrinter {
 public:
  InfoPrinter(std::ostream& out, bool colour) : out_(out), colour_(colour) {}

  void print(const probe::MachineFacts& facts) {
    print_driver(facts);
    print_gpus(facts.gpus);
    if (facts.wsl.wsl2) {
      print_wsl(facts.wsl);
    } else {
      print_modules(facts.modules);
    }
    print_toolkits(facts);
    print_compilers(facts.compilers);
    print_os(facts.os);
    print_env(facts.env);
    for (const auto& note : facts.notes) line("Note", styled(shown(note), Tone::dim, colour_));
  }

 private:
  void line(std::string_view label, const std::string& value) {
    std::ostringstream padded;
    padded << std::left << std::setw(11) << label;
    out_ << styled(padded.str(), Tone::heading, colour_) << value << '\n';
  }
  void continuation(const std::string& value) { out_ << std::string(11, ' ') << value << '\n'; }

  void print_driver(const probe::MachineFacts& facts) {
    if (!facts.driver && facts.wsl.wsl2) {
      line("Driver", styled("none", Tone::warn, colour_) +
                         " (WSL2: no Windows NVIDIA driver answers through /usr/lib/wsl/lib)");
      return;
    }
    if (!facts.driver) {
      line("Driver",
           styled("none", Tone::warn, colour_) +
               " (no NVIDIA driver: no libnvidia-ml/libcuda, no /proc/driver/nvidia/version)");
      return;
    }
    const auto& driver = *facts.driver;
    std::string value = shown(driver.version);
    if (!driver.loaded)
      value += styled(" (installed, kernel module not loaded)", Tone::bad, colour_);
    value += driver.cuda_version ? "  supports CUDA <= " + driver.cuda_version->str()
                                 : "  (CUDA version unknown: libcuda not loadable)";
    value += styled("  [" + std::string(probe::to_string(driver.version_source)) + "]", Tone::dim,
                    colour_);
    line("Driver", value);
    if (facts.wsl.wsl2)
      continuation("the Windows driver, mapped into WSL2 at " + shown(driver.library));
  }

  void print_gpus(const std::vector<probe::GpuFacts>& gpus) {
    if (gpus.empty()) {
      line("GPUs", "none visible");
      return;
    }
    bool first = true;
    for (const auto& gpu : gpus) {
      const auto& cc = gpu.compute_capability;
      std::string value = std::to_string(gpu.index) + ": " + shown(gpu.name) + "  compute " +
                          cc.str() + " (sm_" + std::to_string(cc.major()) +
                          std::to_string(cc.minor()) + ")  " + human_bytes(gpu.memory_bytes);
      first ? line("GPUs", value) : continuation(value);
      first = false;
    }
  }

  std::string flag(const char* name, bool loaded) {
    return std::string(name) + " " +
           styled(loaded ? "loaded" : "absent", loaded ? Tone::good : Tone::dim, colour_);
  }

  void print_modules(const probe::KernelModuleFacts& modules) {
    if (!modules.modules_readable) {
      line("Modules", "unknown (/proc/modules unreadable)");
    } else {
      line("Modules", flag("nvidia", modules.nvidia) + ", " +
                          flag("nvidia_uvm", modules.nvidia_uvm) + ", " +
                          flag("nouveau", modules.nouveau));
    }
    continuation(modules.device_nodes.empty() ? "no /dev/nvidia* device nodes"
                                              : text::join(shown(modules.device_nodes), " "));
  }

  // Inside WSL2 no Linux kernel module drives the GPU: the Windows driver serves it through
  // /dev/dxg, and a Linux driver's libcuda only gets in the way.
  void print_wsl(const probe::WslFacts& wsl) {
    line("WSL2", shown(wsl.evidence));
    continuation(wsl.dxg_device
                     ? "/dev/dxg present (the GPU, paravirtualised by Windows)"
                     : styled("no /dev/dxg: this WSL kernel offers no GPU", Tone::bad, colour_));
    for (const auto& library : wsl.linux_driver_libraries) {
      continuation(styled("a Linux driver's " + shown(library) +
                              " shadows the Windows driver's (remove the Linux driver)",
                          Tone::bad, colour_));
    }
  }

  void print_toolkits(const probe::MachineFacts& facts) {
    if (facts.toolkits.empty()) line("Toolkits", "none found");
    bool first = true;
    for (const auto& toolkit : facts.toolkits) {
      std::vector<std::string> via;
      for (size_t i = 0; i < toolkit.origins.size(); ++i) {
        via.push_back(toolkit.origins[i] == probe::ToolkitOrigin::path_nvcc ? "nvcc on PATH"
                      : toolkit.origins[i] == probe::ToolkitOrigin::cuda_home
                          ? "CUDA_HOME"
                          : shown(toolkit.found_at[i]));
      }
      // The release leads (what install and .cudaenv take); nvcc's version follows in detail.
      const auto releases = resolve::possible_releases(toolkit);
      std::string value =
          (releases.size() == 1 ? releases.front().str() : resolve::toolkit_name(toolkit)) + "  " +
          shown(toolkit.path);
      std::string detail = "from " + shown(toolkit.version_source);
      if (toolkit.nvcc_version) detail += ", nvcc " + toolkit.nvcc_version->str();
      // Where the database named the release, the versions it went by.
      if (toolkit.version_source != "version.json" && toolkit.version_source != "version.txt" &&
          toolkit.version_source != "dpkg" && !releases.empty()) {
        if (toolkit.cudart_version) detail += ", cudart " + toolkit.cudart_version->str();
        detail += ", release from the compatibility database";
      }
      if (toolkit.from_wheels) detail += ", assembled from NVIDIA pip wheels";
      value += styled("  (" + detail + "; via " + text::join(via, ", ") + ")", Tone::dim, colour_);
      first ? line("Toolkits", value) : continuation(value);
      first = false;
    }
    if (facts.default_link) {
      const auto& link = *facts.default_link;
      continuation(text::join(shown(link.chain), " -> ") +
                   (link.dangling ? styled("  (dangling)", Tone::bad, colour_) : ""));
    }
  }

  void print_compilers(const std::vector<probe::CompilerFacts>& compilers) {
    std::vector<std::string> items;
    for (const auto& compiler : compilers) {
      items.push_back(shown(compiler.name) + " " +
                      (compiler.version ? compiler.version->str() : "?"));
    }
    line("Compilers", items.empty() ? "none on PATH" : text::join(items, ", "));
  }

  void print_os(const probe::OsFacts& os) {
    std::string value = os.pretty_name.empty()
                            ? (os.id.empty() ? "unknown" : os.id + " " + os.version_id)
                            : os.pretty_name;
    if (!os.kernel.empty()) value += ", kernel " + os.kernel;
    if (!os.architecture.empty()) value += ", " + os.architecture;
    line("OS", shown(value));
  }

  void print_env(const probe::CudaEnvFacts& env) {
    if (env.variables.empty() && env.cuda_library_paths.empty()) {
      line("Env", "no CUDA variables set");
      return;
    }
    bool first = true;
    for (const auto& variable : env.variables) {
      const auto value = shown(variable.name + "=" + variable.value);
      first ? line("Env", value) : continuation(value);
      first = false;
    }
    for (const auto& entry : env.cuda_library_paths) {
      const auto value = "LD_LIBRARY_PATH has CUDA toolkit libraries in " + shown(entry);
      first ? line("Env", value) : continuation(value);
      first = false;
    }
  }

  std::ostream& out_;
  bool colour_;
};

}  // namespace

int run_info(const InfoOptions& options, Context& context) {
  const auto data_root = paths::data_root(context.env);
  auto facts = probe::probe_machine(
      {context.sysroot, context.loader, context.runner, context.env, data_root});
  // Without the database (a broken override copy), toolkits keep the names they record.
  if (auto db = manifest::load_default_database(data_root)) {
    resolve::name_toolkits(*db, facts.toolkits);
  } else {
    facts.notes.push_back("toolkit releases not named: " + db.error().message);
  }
  remember_live_gpus(facts, context);
  if (options.json) {
    context.out << info_to_json(facts).dump(2, ' ', true, nlohmann::json::error_handler_t::replace)
                << '\n';
  } else {
    InfoPrinter(context.out, context.colour).print(facts);
  }
  return 0;
}

void add_info_command(CLI::App& app, Context& context, Outcome& outcome) {
  auto options = std::make_shared<InfoOptions>();
  auto* command = app.add_subcommand("info", "Show what cudaenv sees on this machine");
  command->add_flag("--json", options->json, "Print the report as JSON");
  command->callback(
      [options, &context, &outcome] { outcome.exit_code = run_info(*options, context); });
}

}  // namespace cudaenv::cli
