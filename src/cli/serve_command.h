// `stepscope serve [ROOT_OR_RUN] [--host H] [--port P] [--token T]`: the live dashboard
// (docs/dashboard.md) over the runs under ROOT (default ./stepscope-runs) or one run. Prints the
// URL to open, serves until SIGINT or SIGTERM, then shuts down cleanly (exit 0).
//
// The server itself is src/server (dashboard_server.h); this file resolves the options, makes
// the token, hands the server `stepscope ctl`'s code for the Control page, and waits for the
// signal. Callers: main.cc. Threading: the main thread serves; one thread waits for signals.
#pragma once

#include <string>

namespace stepscope::cli {

struct ServeInvocation {
  std::string root = "stepscope-runs";
  std::string host = "127.0.0.1";
  int port = 8421;
  std::string token;  // "": generated when the host is not a loopback address
};

// Returns the exit code: 0 after a signal, 1 the root or the address cannot be used, 2 bad values.
int ServeCommand(const ServeInvocation& invocation);

}  // namespace stepscope::cli
