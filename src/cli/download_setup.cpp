#include "cli/download_setup.hpp"

#include <thread>

#include "core/ownership.hpp"
#include "core/paths.hpp"
#include "core/text.hpp"
#include "core/untrusted.hpp"
#include "fetch/simple_index.hpp"
#include "install/interrupt.hpp"
#include "install/remote.hpp"

namespace cudaenv::cli {

namespace {

// A whole number >= `least` from the environment, or nullopt when the variable is unset.
Result<std::optional<int>> positive_setting(const Context& context, const std::string& name,
                                            int least) {
  const auto text = context.env.get_nonempty(name);
  if (!text) return std::optional<int>{};
  const auto value = text::parse_integer(*text);
  if (!value || *value < least || *value > 1000000) {
    return make_error(
        ErrorKind::usage,
        name + ": \"" + *text + "\" is not a whole number >= " + std::to_string(least),
        "set " + name + " to a number such as " + std::to_string(std::max(least, 1) * 5) +
            ", or unset it for the default");
  }
  return std::optional<int>(static_cast<int>(*value));
}

// A size or time limit from the environment (tests lower them): a whole number in [1, most].
Result<std::optional<std::uint64_t>> limit_setting(const Context& context, const std::string& name,
                                                   long long most) {
  const auto text = context.env.get_nonempty(name);
  if (!text) return std::optional<std::uint64_t>{};
  const auto value = text::parse_integer(*text);
  if (!value || *value < 1 || *value > most) {
    return make_error(
        ErrorKind::usage,
        name + ": \"" + *text + "\" is not a whole number from 1 to " + std::to_string(most),
        "unset " + name + " for the default");
  }
  return std::optional<std::uint64_t>(static_cast<std::uint64_t>(*value));
}

// The caps on what a mirror may send: unpacked bytes per archive, a download's and a document's
// size, a document's time.
Status apply_limits(const Context& context, install::InstallSettings& settings) {
  auto unpacked = limit_setting(context, "CUDAENV_MAX_UNPACKED_BYTES", 1LL << 50);
  if (!unpacked) return unpacked.error();
  if (*unpacked) settings.max_unpacked_bytes = **unpacked;
  auto document = limit_setting(context, "CUDAENV_MAX_DOCUMENT_BYTES", 1LL << 40);
  if (!document) return document.error();
  if (*document) settings.fetch.max_document_bytes = **document;
  auto download = limit_setting(context, "CUDAENV_MAX_DOWNLOAD_BYTES",
                                static_cast<long long>(untrusted::max_download_size));
  if (!download) return download.error();
  if (*download) settings.fetch.max_download_bytes = **download;
  auto deadline = limit_setting(context, "CUDAENV_DOCUMENT_TIMEOUT", 1000000);
  if (!deadline) return deadline.error();
  if (*deadline) settings.fetch.document_deadline = std::chrono::seconds(**deadline);
  return Ok{};
}

// --mirror, else CUDAENV_MIRROR, else the config's mirror, else NVIDIA's; and which it was.
void choose_mirror(const DownloadFlags& flags, const Context& context, DownloadSetup& setup) {
  std::string mirror = flags.mirror;
  setup.mirror_origin = "set by --mirror";
  if (mirror.empty()) {
    mirror = context.env.get_nonempty("CUDAENV_MIRROR").value_or("");
    setup.mirror_origin = "set by CUDAENV_MIRROR";
  }
  if (mirror.empty() && setup.config.mirror) {
    mirror = *setup.config.mirror;
    setup.mirror_origin = "set by mirror in " + paths::config_file(context.env).string();
  }
  if (mirror.empty()) {
    mirror = install::nvidia_base_url;
    setup.mirror_origin = "NVIDIA's, the default";
  }
  setup.mirror = install::normalize_mirror(mirror);
}

// --source, else pypi when --index-url is given, else the config's source, else redist; anything
// else is a usage error naming where it was set.
Status choose_source(const DownloadFlags& flags, const Context& context, DownloadSetup& setup) {
  std::string origin = "--source";
  std::string kind = flags.source;
  if (kind.empty() && !flags.index_url.empty()) kind = "pypi";  // --index-url names an index
  if (kind.empty() && setup.config.source) {
    kind = *setup.config.source;
    origin = "source in " + paths::config_file(context.env).string();
  }
  if (kind.empty()) kind = "redist";
  if (kind != "redist" && kind != "pypi") {
    return make_error(ErrorKind::usage,
                      origin + ": \"" + text::printable(kind) + "\" is not a source",
                      "use redist (NVIDIA's archives, the default) or pypi (a package index)");
  }
  setup.source_kind = kind;
  setup.source_flagged = !flags.source.empty() || !flags.index_url.empty();
  return Ok{};
}

// --index-url, else PIP_INDEX_URL (as pip reads it), else the config's index_url, else PyPI.
void choose_index(const DownloadFlags& flags, const Context& context, DownloadSetup& setup) {
  std::string index = flags.index_url;
  setup.index_origin = "set by --index-url";
  if (index.empty()) {
    index = context.env.get_nonempty("PIP_INDEX_URL").value_or("");
    setup.index_origin = "set by PIP_INDEX_URL";
  }
  if (index.empty() && setup.config.index_url) {
    index = *setup.config.index_url;
    setup.index_origin = "set by index_url in " + paths::config_file(context.env).string();
  }
  if (index.empty()) {
    index = fetch::pypi_index_url;
    setup.index_origin = "PyPI's, the default";
  }
  while (!index.empty() && index.back() == '/') index.pop_back();
  setup.index_url = index;
}

}  // namespace

Error DownloadSetup::explain(const Error& error) const {
  // What an index lacks is as much a matter of which index as a failed transfer is.
  if (from_index() && (error.kind == ErrorKind::network || error.kind == ErrorKind::not_found))
    return make_error(error.kind, error.message + " (index " + index_origin + ")", error.hint);
  if (error.kind != ErrorKind::network) return error;
  return make_error(error.kind, error.message + " (mirror " + mirror_origin + ")", error.hint);
}

std::string DownloadSetup::described() const {
  const bool index = from_index();
  return std::string(index ? "the index " : "the mirror ") + (index ? index_url : mirror) + " (" +
         (index ? index_origin : mirror_origin) + ")";
}

std::vector<std::string> DownloadSetup::install_flags() const {
  if (!from_index()) return {};
  return {"--source", "pypi", "--index-url", index_url};
}

void note_database_pins(const install::PypiToolkitPlan& plan, const DownloadSetup& setup,
                        Context& context) {
  if (!plan.from_database) return;
  context.err << "cudaenv: note: cuda-toolkit is not on "
              << text::printable(setup.described(), text::message_limit)
              << "; component versions from the database's redist rows for "
              << text::printable(plan.install.version) << "\n";
  if (!plan.not_on_index.empty()) {
    context.err << "cudaenv: note: left out, the index has no wheels of them: "
                << text::printable(text::join(plan.not_on_index, ", "), text::message_limit)
                << "\n";
  }
}

void add_download_flags(CLI::App& command, DownloadFlags& flags) {
  command.add_option("--mirror", flags.mirror,
                     "Base URL of a mirror in NVIDIA's layout (http://, https://, file://)");
  command.add_option("--jobs,-j", flags.jobs,
                     "Parallel downloads (default: the number of cores, at least 4)");
  command.add_option("--ca-bundle", flags.ca_bundle,
                     "Extra trusted CA certificates (PEM) for a mirror behind a corporate CA");
  command.add_option("--stall-timeout", flags.stall_timeout,
                     "Seconds a transfer may stall before it is retried (default 30)");
}

void add_source_flags(CLI::App& command, DownloadFlags& flags) {
  command.add_option("--source", flags.source,
                     "Where toolkits come from: redist (NVIDIA's archives, default) or pypi "
                     "(NVIDIA's wheels from a package index)");
  command.add_option("--index-url", flags.index_url,
                     "Simple index for --source pypi (default: PIP_INDEX_URL, then PyPI)");
}

Result<DownloadSetup> download_setup(const DownloadFlags& flags, const Context& context) {
  DownloadSetup setup;
  auto config = project::load_config(paths::config_file(context.env));
  if (!config) return config.error();
  setup.config = *config;
  setup.store.root = paths::data_root(context.env);
  if (auto trusted = ownership::check_data_root(setup.store.root); !trusted) return trusted.error();
  choose_mirror(flags, context, setup);
  if (auto source = choose_source(flags, context, setup); !source) return source.error();
  choose_index(flags, context, setup);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  setup.settings.jobs =
      flags.jobs > 0 ? flags.jobs : setup.config.jobs.value_or(std::max(4, cores));
  setup.settings.fetch.ca_bundle =
      !flags.ca_bundle.empty() ? flags.ca_bundle : setup.config.ca_bundle.value_or("");
  const int stall =
      flags.stall_timeout > 0 ? flags.stall_timeout : setup.config.stall_timeout.value_or(30);
  setup.settings.fetch.stall_timeout = std::chrono::seconds(stall);
  // Retry settings for very flaky links (and for tests): attempts per transfer, first wait.
  auto attempts = positive_setting(context, "CUDAENV_HTTP_ATTEMPTS", 1);
  if (!attempts) return attempts.error();
  if (*attempts) setup.settings.fetch.max_attempts = **attempts;
  auto backoff = positive_setting(context, "CUDAENV_HTTP_BACKOFF_MS", 0);
  if (!backoff) return backoff.error();
  if (*backoff) setup.settings.fetch.first_backoff = std::chrono::milliseconds(**backoff);
  if (auto limits = apply_limits(context, setup.settings); !limits) return limits.error();
  // Every transfer of a long command (manifests, indexes, archives) ends at once on a signal.
  setup.settings.fetch.should_stop = install::stop_requested;
  return setup;
}

}  // namespace cudaenv::cli
