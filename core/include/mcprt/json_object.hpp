#pragma once
// json_object({{"status", 404}, {"url", url}}): a JSON object from its members without
// nlohmann's initializer-list constructor. That constructor decides at run time whether
// the list is an object or an array, and each call site instantiates the deciding code:
// in the web module, where code size is budgeted (SPEC §12), 0.3–1 KB per site. Here every
// site shares one out-of-line function. Values are copied in.

#include <initializer_list>
#include <utility>

#include "mcprt/result.hpp"

namespace mcprt {

json json_object(std::initializer_list<std::pair<const char*, json>> members);

}  // namespace mcprt
