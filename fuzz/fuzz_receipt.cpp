// The receipt reader: a receipt in the store may be damaged or edited; every text gives a
// receipt or an error naming the file, never an exception.

#include <string>

#include "fuzz_input.hpp"
#include "install/store.hpp"

using namespace cudaenv;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string origin = "/root/toolkits/12.4.1/cudaenv-receipt.json";
  auto receipt = install::parse_receipt(fuzz::as_text(data, size), origin);
  if (!receipt) {
    fuzz::require(receipt.error().message.starts_with(origin), "an error names the file");
    fuzz::require(receipt.error().kind == ErrorKind::usage, "a bad receipt is a usage error");
  }
  return 0;
}
