#include "server/dashboard_server.h"

#include <httplib.h>
#include <netdb.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "base/clock.h"
#include "compare/run_comparison.h"
#include "report/report_model.h"
#include "report/run_report.h"
#include "rules/instance_catalog.h"
#include "rules/profiler_report.h"
#include "server/dashboard_page.h"
#include "server/event_hub.h"
#include "server/loaded_runs.h"
#include "server/request_guard.h"
#include "server/run_views.h"
#include "server/timeline_answer.h"

namespace stepscope::server {
namespace {

// Scripts only from the served bundle (no inline script, no eval), data only from this origin.
// Styles may be inline: charts set element styles.
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
constexpr const char* kJson = "application/json; charset=utf-8";
// How often the follower lists the root again to tell open pages that runs came or went.
constexpr int kListEveryFollowPasses = 4;
// An idle event stream sends a comment this often, so proxies and the page see it alive and a
// closed connection is noticed.
constexpr std::chrono::seconds kEventKeepAlive{15};
// Event streams and keep-alive connections each hold a thread.
constexpr size_t kRequestThreads = 64;
// The largest request body: ctl's settings are a few hundred bytes.
constexpr size_t kMaxBodyBytes = 64 * 1024;

int64_t NowNs() { return static_cast<int64_t>(RealtimeNowNs()); }

std::string JsonText(const nlohmann::json& json) {
  // Names are untrusted text: invalid UTF-8 is replaced, never a throw.
  return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void Answer(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  res.set_content(JsonText(body), kJson);
}

void Fail(httplib::Response& res, int status, const std::string& message) {
  Answer(res, status, {{"error", message}});
}

void Fail(httplib::Response& res, const Status& status) { Fail(res, HttpStatusFor(status), status.message()); }

// A non-negative integer query parameter; `fallback` when absent. False (and a 400) when malformed.
bool IntParam(const httplib::Request& req, httplib::Response& res, const char* name, int64_t fallback, int64_t* out) {
  *out = fallback;
  if (!req.has_param(name)) return true;
  const std::string text = req.get_param_value(name);
  if (text.empty()) return true;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0' || value < 0) {
    Fail(res, 400, std::string("query parameter '") + name + "' must be a non-negative integer, not '" + text + "'");
    return false;
  }
  *out = value;
  return true;
}

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!part.empty()) parts.push_back(std::move(part));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return parts;
}

}  // namespace

int HttpStatusFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk: return 200;
    case StatusCode::kInvalidArgument: return 400;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kUnavailable: return 409;
    case StatusCode::kDataLoss:
    case StatusCode::kUnimplemented: return 422;
    case StatusCode::kIoError:
    case StatusCode::kInternal: break;
  }
  return 500;
}

// A loaded run as the handlers name it.
struct LoadedRunRef {
  std::string id;
  std::string directory;
};

class DashboardServer::Impl {
 public:
  explicit Impl(ServerOptions options) : options_(std::move(options)), loaded_(&events_) {
    policy_.token = options_.token;
    policy_.loopback_bind = IsLoopbackHost(options_.host);
    Routes();
  }

  Status Bind() {
    if (!policy_.loopback_bind && options_.token.empty()) {
      return InvalidArgumentError("--host " + options_.host + " is not a loopback address, so the server needs a "
                                  "token; it generates one unless --token is given");
    }
    addrinfo hints{};
    hints.ai_flags = AI_PASSIVE;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (const int error = getaddrinfo(options_.host.c_str(), nullptr, &hints, &found); error != 0) {
      return InvalidArgumentError("--host '" + options_.host + "' is not an address of this machine (" +
                                  gai_strerror(error) + "); pass 127.0.0.1 (the default) or 0.0.0.0 for every address");
    }
    freeaddrinfo(found);
    errno = 0;
    if (options_.port == 0) {
      port_ = server_.bind_to_any_port(options_.host);
    } else if (server_.bind_to_port(options_.host, options_.port)) {
      port_ = options_.port;
    }
    if (port_ <= 0) {
      const std::string why = errno != 0 ? std::strerror(errno) : "refused";
      return IoError("cannot listen on " + options_.host + ":" + std::to_string(options_.port) + " (" + why +
                     "); the port is taken or not allowed: pass another --port, or --port 0 for any free one");
    }
    return OkStatus();
  }

  int port() const { return port_; }

  std::string Url() const {
    // Every address: name the machine, which is what another machine can open.
    std::string host = options_.host;
    if (host == "0.0.0.0" || host == "::") {
      char name[256] = {};
      if (gethostname(name, sizeof name - 1) == 0 && name[0] != '\0') host = name;
    }
    const bool v6 = host.find(':') != std::string::npos;
    std::string url = "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port_) + "/";
    if (!options_.token.empty()) url += "?token=" + options_.token;
    return url;
  }

  Status Serve() {
    std::thread follower([this] { Follow(); });
    const bool served = server_.listen_after_bind();
    StopFollower();
    follower.join();
    if (!served && !stopping_) return IoError("the server stopped accepting connections on " + Url());
    return OkStatus();
  }

  void Stop() {
    stopping_ = true;
    events_.Close();  // ends the event streams, which would hold the thread pool
    StopFollower();
    server_.stop();
  }

 private:
  void StopFollower() {
    {
      std::lock_guard<std::mutex> lock(follow_mutex_);
      follow_stop_ = true;
    }
    follow_wake_.notify_all();
  }

  // The follower: refreshes loaded live runs, and now and then lists the root again.
  void Follow() {
    int pass = 0;
    std::unique_lock<std::mutex> lock(follow_mutex_);
    while (!follow_wake_.wait_for(lock, options_.follow_period, [this] { return follow_stop_; })) {
      lock.unlock();
      loaded_.RefreshAll();
      if (++pass % kListEveryFollowPasses == 0) {
        // A root that cannot be read now keeps its last listing; requests report the failure.
        [[maybe_unused]] auto listed = List();
      }
      lock.lock();
    }
  }

  // Lists the root again; publishes "runs" when the listing changed. NotFound/IoError when the
  // root itself cannot be read (the last listing stays).
  StatusOr<std::vector<RunEntry>> List() {
    auto runs = ListRuns(options_.root);
    if (!runs.ok()) return runs.status();
    nlohmann::json fingerprint = nlohmann::json::array();
    for (const RunEntry& run : *runs) fingerprint.push_back(RunEntryJson(run, false));
    bool changed = false;
    {
      std::lock_guard<std::mutex> lock(listing_mutex_);
      changed = listed_once_ && fingerprint != fingerprint_;
      listed_once_ = true;
      fingerprint_ = std::move(fingerprint);
      listing_ = *runs;
    }
    if (changed) events_.Publish("runs", {{"count", runs->size()}});
    return runs;
  }

  // The listed run with this id: from the last listing, or a fresh one when it is not there
  // (a run that just appeared). Only ids of the listing are ever resolved to directories.
  std::optional<RunEntry> Lookup(const std::string& id) {
    {
      std::lock_guard<std::mutex> lock(listing_mutex_);
      if (const RunEntry* run = FindRun(listing_, id)) return *run;
    }
    auto runs = List();
    if (!runs.ok()) return std::nullopt;
    const RunEntry* run = FindRun(*runs, id);
    return run ? std::optional<RunEntry>(*run) : std::nullopt;
  }

  // The run of the request's {id}, loaded: a loaded run (even one whose files vanished since),
  // else a listed one, loaded now. Answers 404 or the load's error otherwise.
  std::optional<LoadedRunRef> LoadedRun(const httplib::Request& req, httplib::Response& res) {
    return LoadedRunById(req.matches[1], res);
  }

  // The run `id` from the server's own listing, loaded on demand; 404 for anything else.
  std::optional<LoadedRunRef> LoadedRunById(const std::string& id, httplib::Response& res) {
    if (std::optional<std::string> directory = loaded_.Directory(id)) return LoadedRunRef{id, *directory};
    std::optional<RunEntry> run = Lookup(id);
    if (!run) {
      Fail(res, 404, "no run '" + id + "' under " + options_.root.root + "; GET /api/runs lists the runs");
      return std::nullopt;
    }
    if (Status loaded = loaded_.Load(run->id, run->directory); !loaded.ok()) {
      Fail(res, loaded);
      return std::nullopt;
    }
    return LoadedRunRef{run->id, run->directory};
  }

  void Routes() {
    server_.new_task_queue = [] { return new httplib::ThreadPool(kRequestThreads); };
    server_.set_payload_max_length(kMaxBodyBytes);
    server_.set_default_headers({{"Content-Security-Policy", kContentSecurityPolicy},
                                 {"X-Content-Type-Options", "nosniff"},
                                 {"X-Frame-Options", "DENY"},
                                 {"Referrer-Policy", "no-referrer"}});
    server_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      RequestCredentials credentials{req.method,
                                     req.get_header_value("Host"),
                                     req.get_header_value("Origin"),
                                     req.get_header_value("Authorization"),
                                     req.get_header_value("Cookie"),
                                     req.get_param_value("token")};
      const GuardVerdict verdict = CheckRequest(policy_, credentials);
      if (verdict.http_status != 200) {
        Fail(res, verdict.http_status, verdict.error);
        return httplib::Server::HandlerResponse::Handled;
      }
      if (verdict.token_from_query) res.set_header("Set-Cookie", TokenCookieHeader(policy_.token));
      return httplib::Server::HandlerResponse::Unhandled;
    });
    server_.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;  // a handler's own answer
      Fail(res, res.status, res.status == 404 ? "no such page: " + req.path + " (docs/dashboard.md lists the API)"
                                              : "request refused (" + std::to_string(res.status) + ")");
    });

    // The core returns Status; an exception here is a bug (or std::bad_alloc): answer it as one
    // line instead of the library's default, which puts e.what() in a header.
    server_.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr error) {
      std::string what = "unknown exception";
      try {
        std::rethrow_exception(error);
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
      }
      Fail(res, 500, "internal error in stepscope serve (" + what + "); please report it");
    });
    server_.Get("/", [](const httplib::Request& req, httplib::Response& res) {
      if (req.has_param("token")) {  // the cookie is set; take the token out of the address bar
        res.set_redirect("/", 303);
        return;
      }
      res.set_header("Cache-Control", "no-store");
      res.set_content(std::string(DashboardPageHtml()), "text/html; charset=utf-8");
    });
    server_.Get("/assets/dashboard.js", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(DashboardScript(), "text/javascript; charset=utf-8");
    });
    server_.Get("/assets/dashboard.css", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(DashboardStyle(), "text/css; charset=utf-8");
    });

    server_.Get("/api/runs", [this](const httplib::Request& req, httplib::Response& res) { ListHandler(req, res); });
    server_.Post(R"(/api/runs/([^/]+)/load)", [this](const httplib::Request& req, httplib::Response& res) {
      if (std::optional<LoadedRunRef> run = LoadedRun(req, res)) Answer(res, 200, {{"id", run->id}, {"loaded", true}});
    });
    server_.Post(R"(/api/runs/([^/]+)/unload)", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string id = req.matches[1];
      if (!Lookup(id) && !loaded_.IsLoaded(id)) return Fail(res, 404, "no run '" + id + "'; GET /api/runs lists the runs");
      loaded_.Unload(id);
      Answer(res, 200, {{"id", id}, {"loaded", false}});
    });
    server_.Get(R"(/api/runs/([^/]+)/report)", [this](const httplib::Request& req, httplib::Response& res) {
      ReportHandler(req, res);
    });
    server_.Get(R"(/api/runs/([^/]+)/series)", [this](const httplib::Request& req, httplib::Response& res) {
      SeriesHandler(req, res);
    });
    server_.Get(R"(/api/runs/([^/]+)/steps)", [this](const httplib::Request& req, httplib::Response& res) {
      int64_t last = 30;
      if (!IntParam(req, res, "last", 30, &last)) return;
      std::optional<LoadedRunRef> run = LoadedRun(req, res);
      if (!run) return;
      nlohmann::json answer;
      Status read = loaded_.Read(run->id, [&](const analysis::Model& model, const LiveState&) {
        answer = RecentStepsAnswer(model, static_cast<size_t>(last));
      });
      read.ok() ? Answer(res, 200, answer) : Fail(res, read);
    });
    server_.Get("/api/compare", [this](const httplib::Request& req, httplib::Response& res) { CompareHandler(req, res); });
    server_.Get(R"(/api/runs/([^/]+)/timeline)", [this](const httplib::Request& req, httplib::Response& res) {
      TimelineHandler(req, res);
    });
    server_.Post(R"(/api/runs/([^/]+)/ctl)", [this](const httplib::Request& req, httplib::Response& res) {
      ControlHandler(req, res);
    });
    server_.Get("/api/events", [this](const httplib::Request&, httplib::Response& res) { EventsHandler(res); });
  }

  void ListHandler(const httplib::Request& req, httplib::Response& res) {
    RunFilter filter;
    filter.query = req.get_param_value("q");
    if (const std::string status = req.get_param_value("status"); !status.empty()) {
      filter.status = RunStatusFromName(status);
      if (!filter.status) {
        return Fail(res, 400, "status must be running, completed, failed, killed or unknown, not '" + status + "'");
      }
    }
    if (!IntParam(req, res, "from_ns", 0, &filter.from_ns) || !IntParam(req, res, "to_ns", 0, &filter.to_ns)) return;
    const auto started = std::chrono::steady_clock::now();
    auto runs = List();
    if (!runs.ok()) return Fail(res, runs.status());
    const double listed_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    nlohmann::json listed = nlohmann::json::array();
    const int64_t now_ns = NowNs();
    for (const RunEntry& run : *runs) {
      if (MatchesFilter(run, filter, now_ns)) listed.push_back(RunEntryJson(run, loaded_.IsLoaded(run.id)));
    }
    // A loaded run whose directory went away stays open (its last model) until unloaded.
    for (const std::string& id : loaded_.Ids()) {
      if (FindRun(*runs, id)) continue;
      RunEntry vanished;
      vanished.id = vanished.job = vanished.path = id;
      vanished.directory = loaded_.Directory(id).value_or("");
      vanished.problems.push_back({"run_vanished", analysis::ProblemSeverity::kError, 1,
                                   "the run's directory is no longer under the root; its last data stays loaded "
                                   "until it is unloaded"});
      if (MatchesFilter(vanished, filter, now_ns)) listed.push_back(RunEntryJson(vanished, true));
    }
    Answer(res, 200, {{"root", options_.root.root}, {"runs", std::move(listed)}, {"listed_ms", listed_ms}});
  }

  void ReportHandler(const httplib::Request& req, httplib::Response& res) {
    std::optional<LoadedRunRef> run = LoadedRun(req, res);
    if (!run) return;
    nlohmann::json report;
    uint64_t generation = 0;
    const bool cached = loaded_.LastValue(run->id, &report, &generation);
    LiveState live;
    StatusOr<report::RunReport> built = InternalError("not built");
    // The document `stepscope report --json` writes, built by the same code from the model the
    // server holds (refreshed while the job runs) under the run's lock: never a second read of
    // the run, and never a model half-way through a refresh. The rules' outputs are the loaded
    // run's (live_rules.h): only the windows completed since the last report are evaluated.
    if (Status read = loaded_.ReadWithRules(
            run->id, [&](const analysis::Model& model, const LiveState& state, const LiveRules& rules) {
              live = state;
              if (cached && generation == live.generation) return;
              if (!rules.failure().ok()) {
                built = rules.failure();
                return;
              }
              const report::PrecomputedRules precomputed{&rules.document(), rules.source()};
              built = report::BuildRunReportFromModel(model, run->directory, NowNs(), options_.generated_by,
                                                      /*catalog=*/nullptr, &precomputed);
            });
        !read.ok()) {
      return Fail(res, read);
    }
    if (!cached || generation != live.generation) {
      if (built.ok()) {
        report = std::move(built->model);
        loaded_.StoreValue(run->id, live.generation, report);
      } else if (cached) {
        live.problem = built.status().message() + "; showing the report built before";
      } else {
        return Fail(res, built.status());
      }
    }
    report["live"] = LiveStateJson(live);
    Answer(res, 200, report);
  }

  // `stepscope compare A B`'s document for two loaded runs (the job list's compare of two).
  void CompareHandler(const httplib::Request& req, httplib::Response& res) {
    const std::string a_id = req.get_param_value("a"), b_id = req.get_param_value("b");
    if (a_id.empty() || b_id.empty()) {
      return Fail(res, 400, "pass two runs: /api/compare?a=ID&b=ID, ids from GET /api/runs");
    }
    std::optional<LoadedRunRef> a = LoadedRunById(a_id, res);
    if (!a) return;
    std::optional<LoadedRunRef> b = LoadedRunById(b_id, res);
    if (!b) return;
    const std::vector<rules::InstanceType> catalog = rules::BuiltinInstanceCatalog();
    nlohmann::json document;
    // Each run's findings are the ones its report shows: the loaded run's rules, kept up to date
    // window by window (live_rules.h) instead of evaluated again for every compare request.
    auto build = [&](const analysis::Model& model_a, const LiveRules& rules_a, const analysis::Model& model_b,
                     const LiveRules& rules_b) {
      compare::ComparedRun run_a{&model_a, a->directory, "", 0, {}};
      compare::ComparedRun run_b{&model_b, b->directory, "", 0, {}};
      if (rules_a.failure().ok()) run_a.rules = rules_a.document();
      if (rules_b.failure().ok()) run_b.rules = rules_b.document();
      document = compare::BuildComparison(run_a, run_b, catalog, options_.generated_by);
    };
    // Both runs are read under their locks, taken in id order so two compares never wait on each
    // other; a run compared with itself is locked once.
    Status read = OkStatus();
    if (a->id == b->id) {
      read = loaded_.ReadWithRules(a->id, [&](const analysis::Model& model, const LiveState&, const LiveRules& rules) {
        build(model, rules, model, rules);
      });
    } else {
      const bool a_first = a->id < b->id;
      Status inner = OkStatus();
      read = loaded_.ReadWithRules(
          a_first ? a->id : b->id, [&](const analysis::Model& first, const LiveState&, const LiveRules& first_rules) {
            inner = loaded_.ReadWithRules(a_first ? b->id : a->id, [&](const analysis::Model& second, const LiveState&,
                                                                       const LiveRules& second_rules) {
              if (a_first) build(first, first_rules, second, second_rules);
              else build(second, second_rules, first, first_rules);
            });
          });
      if (read.ok()) read = inner;
    }
    if (!read.ok()) return Fail(res, read);
    Answer(res, 200, document);
  }

  void SeriesHandler(const httplib::Request& req, httplib::Response& res) {
    SeriesQuery query;
    query.keys = SplitCommas(req.get_param_value("keys"));
    int64_t points = 600;
    if (!IntParam(req, res, "from_ns", 0, &query.from_ns) || !IntParam(req, res, "to_ns", 0, &query.to_ns) ||
        !IntParam(req, res, "points", 600, &points)) {
      return;
    }
    query.points = static_cast<size_t>(points);
    std::optional<LoadedRunRef> run = LoadedRun(req, res);
    if (!run) return;
    nlohmann::json answer;
    Status read = loaded_.Read(run->id, [&](const analysis::Model& model, const LiveState&) {
      answer = SeriesAnswer(model, query);
    });
    read.ok() ? Answer(res, 200, answer) : Fail(res, read);
  }

  void TimelineHandler(const httplib::Request& req, httplib::Response& res) {
    TimelineQuery query;
    int64_t width_px = query.width_px, step = -1;
    if (!IntParam(req, res, "from_ns", 0, &query.from_ns) || !IntParam(req, res, "to_ns", 0, &query.to_ns) ||
        !IntParam(req, res, "width_px", query.width_px, &width_px) || !IntParam(req, res, "step", -1, &step)) {
      return;
    }
    query.width_px = static_cast<uint32_t>(std::min<int64_t>(width_px, UINT32_MAX));
    if (step >= 0) query.step = step;
    std::optional<LoadedRunRef> run = LoadedRun(req, res);
    if (!run) return;
    StatusOr<nlohmann::json> answer = NotFoundError("run '" + run->id + "' is not loaded");
    Status read = loaded_.ReadTimeline(run->id, [&](const analysis::Model& model, const analysis::TimelineIndex& index) {
      answer = TimelineAnswer(model, index, query);
    });
    if (!read.ok()) return Fail(res, read);
    answer.ok() ? Answer(res, 200, *answer) : Fail(res, answer.status());
  }

  void ControlHandler(const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    std::optional<RunEntry> run = Lookup(id);
    if (!run) return Fail(res, 404, "no run '" + id + "'; GET /api/runs lists the runs");
    if (!options_.control) return Fail(res, 501, "this server cannot change runs");
    const nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
    if (!body.is_object()) return Fail(res, 400, "the body must be a JSON object of ctl's settings (docs/dashboard.md)");
    ControlChange change;
    const std::pair<const char*, std::string*> fields[] = {{"node", &change.node},
                                                           {"interval", &change.interval},
                                                           {"detailed_steps", &change.detailed_steps},
                                                           {"python_steps", &change.python_steps},
                                                           {"dataloader_steps", &change.dataloader_steps},
                                                           {"gpu_steps", &change.gpu_steps}};
    for (const auto& [key, value] : body.items()) {
      auto field = std::find_if(std::begin(fields), std::end(fields), [&](const auto& f) { return key == f.first; });
      if (field == std::end(fields)) return Fail(res, 400, "unknown setting '" + key + "'; see docs/dashboard.md");
      if (!value.is_string()) return Fail(res, 400, "setting '" + key + "' must be a string, as on ctl's command line");
      *field->second = value.get<std::string>();
    }
    auto done = options_.control(run->directory, change);
    done.ok() ? Answer(res, 200, *done) : Fail(res, done.status());
  }

  void EventsHandler(httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    auto cursor = std::make_shared<uint64_t>(events_.Newest());
    auto greeted = std::make_shared<bool>(false);
    res.set_chunked_content_provider("text/event-stream", [this, cursor, greeted](size_t, httplib::DataSink& sink) {
      std::string text;
      if (!*greeted) {
        *greeted = true;
        text = "retry: 1000\n: stepscope events\n\n";
      } else {
        const std::vector<ServerEvent> events = events_.WaitAfter(*cursor, kEventKeepAlive);
        if (events_.closed()) {
          sink.done();
          return false;
        }
        for (const ServerEvent& event : events) {
          text += FormatServerEvent(event);
          *cursor = event.sequence;
        }
        if (text.empty()) text = ": keep-alive\n\n";
      }
      return sink.write(text.data(), text.size());
    });
  }

  ServerOptions options_;
  AccessPolicy policy_;
  httplib::Server server_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  EventHub events_;
  LoadedRuns loaded_;
  std::mutex listing_mutex_;
  std::vector<RunEntry> listing_;
  nlohmann::json fingerprint_;
  bool listed_once_ = false;
  std::mutex follow_mutex_;
  std::condition_variable follow_wake_;
  bool follow_stop_ = false;
};

DashboardServer::DashboardServer(ServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
DashboardServer::~DashboardServer() = default;
Status DashboardServer::Bind() { return impl_->Bind(); }
int DashboardServer::port() const { return impl_->port(); }
std::string DashboardServer::Url() const { return impl_->Url(); }
Status DashboardServer::Serve() { return impl_->Serve(); }
void DashboardServer::Stop() { impl_->Stop(); }

}  // namespace stepscope::server
