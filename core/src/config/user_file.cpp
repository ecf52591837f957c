// The user file (native_user_config_path): one reader and one writer for every rewrite of
// it (/mcp enable|disable|add|remove, trust, untrust), so each keeps the keys it does not
// know, and the project trust records in its `trustedProjects` (SPEC §17). Its own file,
// apart from trust.cpp, so that a host without files (the web module) links trust without
// a file writer.

#include <map>
#include <string>

#include "mcprt/discovery.hpp"

namespace mcprt {

namespace {

constexpr const char* kTrustKey = "trustedProjects";

}  // namespace

// The one ordered parse (parse_json builds the sorted `json` every reader uses): a rewrite
// must keep the user's key order. Without exceptions, comments allowed as discovery reads
// them.
Result<ordered_json> read_user_config(FileSystem& fs, const std::string& path) {
  auto text = fs.read_file(path);
  if (!text.ok()) return text.error();
  if (!text->has_value()) return ordered_json::object();
  const std::string& body = **text;
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) return ordered_json::object();
  ordered_json doc =
      ordered_json::parse(body, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (doc.is_discarded()) {
    return Error::make(ErrorCode::invalid_config, path + " is not valid JSON; fix it by hand first");
  }
  if (doc.is_null()) doc = ordered_json::object();
  if (!doc.is_object()) return Error::make(ErrorCode::invalid_config, path + " does not hold a JSON object");
  return doc;
}

Status write_user_config(FileSystem& fs, const std::string& path, const ordered_json& doc) {
  return fs.write_file(path, doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
}

Status record_project_trust(FileSystem& fs, const std::string& user_file, const std::string& folder,
                            const std::map<std::string, std::string>& servers, bool replace) {
  if (user_file.empty()) {
    return Error::make(ErrorCode::invalid_argument, "there is no user config file to record trust in");
  }
  if (folder.empty()) return Error::make(ErrorCode::invalid_argument, "no project folder to trust");
  auto doc = read_user_config(fs, user_file);
  if (!doc.ok()) return doc.error();
  // A malformed record is the user's to fix: rewriting it would lose what they wrote.
  auto malformed = [&] {
    return Error::make(ErrorCode::invalid_config, "\"" + std::string(kTrustKey) + "\" in " + user_file +
                                                      " is malformed; fix it by hand first");
  };
  ordered_json& projects = (*doc)[kTrustKey];
  if (projects.is_null()) projects = ordered_json::object();
  if (!projects.is_object()) return malformed();
  ordered_json& record = projects[folder];
  if (record.is_null()) record = ordered_json::object();
  if (!record.is_object()) return malformed();
  ordered_json& grants = record["servers"];
  if (grants.is_null() || replace) grants = ordered_json::object();
  if (!grants.is_object()) return malformed();
  for (const auto& [name, hash] : servers) grants[name] = hash;
  return write_user_config(fs, user_file, *doc);
}

Result<bool> remove_project_trust(FileSystem& fs, const std::string& user_file, const std::string& folder) {
  if (user_file.empty()) {
    return Error::make(ErrorCode::invalid_argument, "there is no user config file to edit");
  }
  auto doc = read_user_config(fs, user_file);
  if (!doc.ok()) return doc.error();
  auto projects = doc->find(kTrustKey);
  if (projects == doc->end() || !projects->is_object() || !projects->contains(folder)) return false;
  projects->erase(folder);
  if (auto w = write_user_config(fs, user_file, *doc); !w.ok()) return w.error();
  return true;
}

}  // namespace mcprt
