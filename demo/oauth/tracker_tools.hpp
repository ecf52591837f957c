#pragma once
// The OAuth fixture's own tools: a small in-memory issue tracker (projects, issues,
// comments, labels, assignees), the kind of hosted server that wants OAuth. Sixteen tools
// on top of the demo server's six, so a protected server lists a realistic number of
// tools; writes need a scope only when the fixture is told so (step-up tests).
//
// Implements:
//  [x] read tools: list_projects, get_project, list_labels, list_issues, get_issue,
//      search_issues, list_comments
//  [x] write tools: create_issue, update_issue, close_issue, reopen_issue, delete_issue,
//      add_comment, add_label, remove_label, assign_issue
//  [x] bad arguments and unknown projects/issues are tool errors (isError) naming what
//      was wrong; sizes are capped (titles, bodies, issues per project)
//  [ ] no persistence: the tracker lives as long as the fixture process
//
// Threading: one tracker is shared by every session of the fixture; its own mutex makes
// each call atomic, whatever thread the front end calls it on.

#include <vector>

#include "mcp_demo_server.hpp"

namespace mcprt::demo {

// The tools of one fresh tracker (seeded with two projects and a few issues); every tool
// returned shares that tracker.
std::vector<ExtraTool> make_tracker_tools();

}  // namespace mcprt::demo
