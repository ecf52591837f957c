// The programmatic provider (SPEC §2.1): a host's in-memory `{"mcpServers": {...}}`
// document. It has its own file, apart from the built-in file providers (providers.cpp),
// so that a host without files (the web module) links it without them.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mcprt/json_object.hpp"
#include "mcprt/discovery.hpp"

namespace mcprt {

namespace {

class ProgrammaticProvider final : public ConfigProvider {
 public:
  ProgrammaticProvider(std::string id, std::string name, int priority, SourceInfo::Level level,
                       json document, std::string label)
      : id_(std::move(id)), name_(std::move(name)), priority_(priority), level_(level),
        document_(std::move(document)), label_(std::move(label)) {}
  std::string id() const override { return id_; }
  std::string display_name() const override { return name_; }
  int priority() const override { return priority_; }
  std::vector<ParsedConfig> load(const DiscoveryContext&) const override {
    ParseOptions options;
    options.source.provider = id_;
    options.source.provider_name = name_;
    options.source.path = label_.empty() ? "<" + id_ + ">" : label_;
    options.source.level = level_;
    // `{"mcpServers": {...}}`, or the bare server map.
    const bool wrapped = document_.is_object() && document_.contains("mcpServers");
    if (wrapped || !document_.is_object()) {
      return {parse_mcp_servers(document_, options.source.path, options)};
    }
    return {parse_mcp_servers(json_object({{"mcpServers", document_}}), options.source.path, options)};
  }

 private:
  std::string id_, name_;
  int priority_;
  SourceInfo::Level level_;
  json document_;
  std::string label_;
};

}  // namespace

std::shared_ptr<const ConfigProvider> make_programmatic_provider(std::string id, std::string display_name,
                                                                 int priority, SourceInfo::Level level,
                                                                 json document, std::string label) {
  return std::make_shared<ProgrammaticProvider>(std::move(id), std::move(display_name), priority, level,
                                                std::move(document), std::move(label));
}

}  // namespace mcprt
