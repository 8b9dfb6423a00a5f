// The content-addressed compile cache. Layout (docs/compile.md):
//   <dir>/<key>/            one finished entry: kf_task.h, the candidate, the glue file,
//                           meta.json (CompileInfo + ok, key, command, compile_seconds) and
//                           candidate.so when the compile succeeded
//   <dir>/tmp-<key>-XXXXXX/ a compile in progress; renamed to <key>/ when done
// Readers only look at <key>/ folders, and rename() is atomic, so a crash (or a concurrent
// process) can never expose a half-written entry.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kf/compile.h"
#include "kf/process.h"
#include "kf/sandbox_view.h"
#include "kf/sha256.h"
#include "kf/text.h"

namespace kf {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::size_t kMaxLog = 64 * 1024;
constexpr int kMetaFormat = 1;

std::string env_or_empty(const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : std::string();
}

/**
 * How much the compiler yields the processors (niceness added, KF_COMPILE_NICE, 0 to 19,
 * default 10): compiles run beside evaluations, whose runners, judge and timed calls should
 * not wait for a processor behind nvcc or g++.
 */
int compile_niceness() {
    const auto n = util::env_integer("KF_COMPILE_NICE");
    return n ? static_cast<int>(std::clamp<long>(*n, 0, 19)) : 10;
}

std::string read_text(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void write_text(const fs::path& p, const std::string& text) {
    std::ofstream out(p, std::ios::binary);
    out << text;
    out.close();
    if (!out) throw std::runtime_error("cannot write " + p.string());
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
    if (from.empty()) return;
    for (std::size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
        s.replace(pos, from.size(), to);
}

/**
 * Replaces bytes that are not valid UTF-8 with '?': compiler output can echo arbitrary source
 * bytes, and JSON serialisation (meta.json, the diagnosis record) rejects invalid UTF-8.
 */
std::string valid_utf8(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    std::size_t i = 0;
    while (i < s.size()) {
        auto c = static_cast<unsigned char>(s[i]);
        std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
        bool ok = len > 0 && i + len <= s.size();
        for (std::size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + k]) >> 6) == 0x2;
        if (ok) {
            out.append(s, i, len);
            i += len;
        } else {
            out.push_back('?');
            ++i;
        }
    }
    return out;
}

/** Keeps the beginning (the first errors) and the end (the summary) of a long log. */
std::string truncate_log(const std::string& log) {
    if (log.size() <= kMaxLog) return valid_utf8(log);
    std::size_t head = kMaxLog * 3 / 4, tail = kMaxLog / 4;
    return valid_utf8(log.substr(0, head) + "\n[... " + std::to_string(log.size() - head - tail) +
                      " bytes omitted ...]\n" + log.substr(log.size() - tail));
}

std::string format_seconds(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", s);
    return buf;
}

/** The readable line of `--version` output: "nvcc: Cuda compilation tools, release 13.0, V13.0.88". */
std::string display_name(const std::string& program, const std::string& version_output) {
    std::string name = fs::path(program).filename().string();
    std::istringstream in(version_output);
    std::string line, first;
    while (std::getline(in, line)) {
        if (first.empty() && !line.empty()) first = line;
        if (line.find("release") != std::string::npos) return name + ": " + line;  // nvcc's first line names no version
    }
    if (first.empty()) return name;
    return first.rfind(name, 0) == 0 ? first : name + ": " + first;
}

void add_length_prefixed(std::string& out, std::string_view field, std::string_view value) {
    out += field;
    out += '=';
    out += std::to_string(value.size());
    out += ':';
    out += value;
    out += '\n';
}

Diagnostic error_diagnostic(std::string message, std::string tool) {
    Diagnostic d;
    d.severity = Severity::Error;
    d.message = std::move(message);
    d.tool = std::move(tool);
    return d;
}

std::string tool_of(Backend b) { return b == Backend::Cuda ? "nvcc" : "g++"; }

std::string format_bytes(std::uint64_t bytes) {
    constexpr std::uint64_t MiB = 1024 * 1024;
    char buf[48];
    if (bytes >= 1024 * MiB && bytes % (1024 * MiB) == 0)
        std::snprintf(buf, sizeof buf, "%llu GiB", static_cast<unsigned long long>(bytes / (1024 * MiB)));
    else
        std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / MiB);
    return buf;
}

bool contains(const std::string& text, const char* what) { return text.find(what) != std::string::npos; }

/** Whether the compiler's bwrap sandbox can run here; the reason when not. */
bool use_sandbox(std::string& why) { return bwrap_usable(&why); }

/**
 * What the compiler sees (docs/compile.md): the system and the compiler's installation,
 * the request's include folders read-only, the compile's own folder read-write.
 */
SandboxView compile_view(const CompileRequest& req, const fs::path& scratch) {
    SandboxView view;
    view.read_only = system_read_only_paths();
    if (fs::path root = compiler_root(req.backend); !root.empty()) view.read_only.push_back(root);
    if (req.backend == Backend::Cuda) view.read_only.push_back("/usr/local/cuda");
    for (const auto& dir : req.include_dirs) view.read_only.push_back(fs::absolute(dir));
    view.scratch = scratch;
    return view;
}

/** Folders whose files a compiler message may quote: system and toolkit headers. */
std::vector<fs::path> quotable_roots(Backend b) {
    std::vector<fs::path> roots = {"/usr"};
    if (fs::path root = compiler_root(b); !root.empty()) roots.push_back(root);
    return roots;
}

/**
 * Reads a finished entry. Returns nullopt for a missing entry, and removes (then returns
 * nullopt for) an entry that is unreadable or claims success without its library.
 */
std::optional<CompileResult> read_entry(const fs::path& entry, const std::string& key) {
    std::error_code ec;
    if (!fs::is_directory(entry, ec)) return std::nullopt;
    try {
        json meta = json::parse(read_text(entry / "meta.json"));
        CompileResult r;
        r.info = meta.get<CompileInfo>();
        r.ok = meta.at("ok").get<bool>();
        r.key = key;
        r.info.ok = r.ok;
        r.info.cached = true;
        r.info.seconds = 0;
        if (r.ok) {
            r.library = entry / "candidate.so";
            if (!fs::is_regular_file(r.library, ec)) throw std::runtime_error("library missing");
            // A library changed since it was built (by a candidate run without the sandbox,
            // say) is never served: compile again.
            if (meta.value("library_sha256", std::string()) != sha256_hex(read_text(r.library)))
                throw std::runtime_error("library changed");
        }
        return r;
    } catch (const std::exception&) {
        fs::remove_all(entry, ec);  // corrupt: compile again
        return std::nullopt;
    }
}

/** Removes temporary folders left by compiles that crashed more than a day ago. */
void remove_stale_temporaries(const fs::path& dir) {
    std::error_code ec;
    auto now = fs::file_time_type::clock::now();
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().filename().string().rfind("tmp-", 0) != 0) continue;
        std::error_code tec;
        auto written = fs::last_write_time(it->path(), tec);
        if (!tec && now - written > std::chrono::hours(24)) fs::remove_all(it->path(), tec);
    }
}

/** One compile in its temporary folder `tmp`, to be stored as `entry`: what it ran and what it printed. */
struct CompileRun {
    CompileRun(const CompileRequest& r, const std::string& name, const fs::path& folder, const fs::path& final_entry)
        : req(r),
          source_name(name),
          tmp(folder),
          entry(final_entry),
          limits(effective_limits(r)),
          tool(tool_of(r.backend)),
          cmd(compiler_command(r, folder)) {}

    /** Runs the compiler, unless the candidate's includes are refused or the compiler is missing. */
    void run(CompileInfo& info);
    /** The limits that were hit (time, memory, file size, CPU time, output), said plainly. */
    void explain_limits(CompileInfo& info);
    /** Sets info.ok: the compiler succeeded and left a library within its size limit (a larger one is removed). */
    void check_library(CompileInfo& info) const;
    /** A failure that no diagnostic explains yet: how the compiler ended. */
    void explain_failure(CompileInfo& info) const;
    /** Never silent: the record says the compiler ran without its sandbox, and why. */
    void warn_unsandboxed(CompileInfo& info);
    /** Only deterministic outcomes are kept: a timeout or a killed compiler may succeed next time. */
    bool deterministic() const;
    /** meta.json of the entry, naming the final entry instead of the temporary folder. */
    void write_meta(const CompileInfo& info, const std::string& key);

    const CompileRequest& req;
    const std::string& source_name;
    const fs::path& tmp;
    const fs::path& entry;
    const CompileLimits limits;
    const std::string tool;
    std::vector<std::string> cmd;
    ProcessResult pr;
    std::vector<Diagnostic> refused;
    std::string sandbox_problem;
    bool sandboxed = false;
    std::string output;

private:
    void run_compiler(CompileInfo& info);
};

void CompileRun::run(CompileInfo& info) {
    refused = screen_includes(req.source, source_name);
    sandboxed = use_sandbox(sandbox_problem);
    if (!refused.empty()) {
        // Not compiled at all: the outcome is as deterministic as a compile error.
        pr.exit_code = 1;
        for (auto& d : refused) d.message = valid_utf8(d.message);
        info.diagnostics = refused;
        output = "kfoundry: the candidate was not compiled:\n";
        for (const auto& d : refused) output += d.file + ":" + std::to_string(d.line) + ": error: " + d.message + "\n";
    } else if (sandboxed && compiler_root(req.backend).empty()) {
        // Inside bwrap a missing compiler would read as bwrap's exit code 1.
        pr.start_failed = true;
        pr.output = "cannot run '" + cmd[0] + "': not found";
        output = pr.output;
    } else {
        run_compiler(info);
    }
}

void CompileRun::run_compiler(CompileInfo& info) {
    std::vector<std::string> argv = cmd;
    if (sandboxed) {
        argv = bwrap_prefix(compile_view(req, tmp));
        argv.insert(argv.end(), cmd.begin(), cmd.end());
    }
    ProcessLimits plimits;
    plimits.address_space_bytes = limits.memory_bytes;
    plimits.file_size_bytes = limits.file_bytes;
    plimits.cpu_seconds = static_cast<std::uint64_t>(req.timeout_s) + 1;
    plimits.nice = compile_niceness();
    auto timeout = std::chrono::milliseconds(static_cast<long long>(req.timeout_s * 1000));
    pr = run_process(argv, timeout, tmp, limits.output_bytes, plimits);
    // Quotes of files the candidate may not read are withheld; messages and the log
    // name the final entry, not the temporary folder.
    output = withhold_outside_quotes(pr.output, tmp, quotable_roots(req.backend));
    replace_all(output, tmp.string(), entry.string());
    const std::map<std::string, std::string> files = {
        {"kf_task.h", req.header}, {source_name, req.source}, {glue_file_name(req.backend), req.glue}};
    info.diagnostics = parse_compiler_output(output, source_name, files);
    for (auto& d : info.diagnostics) d.message = valid_utf8(d.message);
    if (req.backend == Backend::Cuda) info.resources = parse_ptxas_usage(output);
}

void CompileRun::explain_limits(CompileInfo& info) {
    if (pr.timed_out)
        info.diagnostics.push_back(
            error_diagnostic("compilation timed out after " + format_seconds(req.timeout_s) + " s", tool));
    else if (pr.start_failed)
        info.diagnostics.push_back(error_diagnostic("could not start " + cmd[0] + ": " + valid_utf8(pr.output), tool));
    // A limit that was hit, said plainly (the compiler's own words vary).
    const bool out_of_memory = contains(output, "out of memory") || contains(output, "virtual memory exhausted") ||
                               contains(output, "Cannot allocate memory") || contains(output, "std::bad_alloc");
    const bool file_too_large =
        pr.signal == SIGXFSZ || contains(output, "File size limit exceeded") || contains(output, "File too large");
    if (pr.exit_code != 0 && out_of_memory)
        info.diagnostics.push_back(error_diagnostic(
            "the compiler ran out of memory: each compiler process may use " + format_bytes(limits.memory_bytes) +
                " of address space", tool));
    if (pr.exit_code != 0 && file_too_large)
        info.diagnostics.push_back(error_diagnostic(
            "the compiler's output is too large: no file it writes may exceed " + format_bytes(limits.file_bytes),
            tool));
    if (pr.signal == SIGXCPU)
        info.diagnostics.push_back(error_diagnostic(
            "the compiler used more than " + std::to_string(static_cast<long long>(req.timeout_s) + 1) +
                " s of CPU time", tool));
    if (pr.output.size() >= limits.output_bytes)
        output += "\n[kfoundry: compiler output cut at " + format_bytes(limits.output_bytes) + "]\n";
}

void CompileRun::check_library(CompileInfo& info) const {
    std::error_code ec;
    info.ok = refused.empty() && pr.exit_code == 0 && !pr.timed_out && fs::is_regular_file(tmp / "candidate.so", ec);
    if (info.ok) {
        std::uintmax_t size = fs::file_size(tmp / "candidate.so", ec);
        if (ec || size > limits.library_bytes) {
            info.ok = false;
            fs::remove(tmp / "candidate.so", ec);
            info.diagnostics.push_back(error_diagnostic(
                "the compiled library is " + format_bytes(size) + ", over the limit of " +
                    format_bytes(limits.library_bytes) + " (large static arrays or heavy unrolling?)", "kfoundry"));
        }
    }
}

void CompileRun::explain_failure(CompileInfo& info) const {
    bool has_error = false;
    for (const auto& d : info.diagnostics) has_error = has_error || d.severity == Severity::Error;
    if (!info.ok && !has_error) {
        std::string why = pr.signal != 0 ? "was killed by signal " + std::to_string(pr.signal)
                          : pr.exit_code == 0 ? "produced no library"
                                              : "failed with exit code " + std::to_string(pr.exit_code);
        info.diagnostics.push_back(error_diagnostic(fs::path(cmd[0]).filename().string() + " " + why, tool));
    }
}

void CompileRun::warn_unsandboxed(CompileInfo& info) {
    if (!sandboxed && refused.empty()) {
        std::string warning = "the compiler ran without a sandbox: " + sandbox_problem +
                              "; it could read any file this user can read";
        info.diagnostics.push_back(error_diagnostic(warning, "kfoundry"));
        info.diagnostics.back().severity = Severity::Warning;
        output = "kfoundry: warning: " + warning + "\n" + output;
    }
}

bool CompileRun::deterministic() const {
    return !pr.timed_out && !pr.start_failed && (pr.signal == 0 || pr.signal == SIGXFSZ) && pr.exit_code >= 0;
}

void CompileRun::write_meta(const CompileInfo& info, const std::string& key) {
    json meta = info;
    meta["key"] = key;
    meta["ok"] = info.ok;
    meta["compile_seconds"] = info.seconds;  // info.seconds reads 0 on a cache hit
    meta["format"] = kMetaFormat;
    if (info.ok) meta["library_sha256"] = sha256_hex(read_text(tmp / "candidate.so"));
    for (auto& arg : cmd) replace_all(arg, tmp.string(), entry.string());
    meta["command"] = cmd;
    write_text(tmp / "meta.json", meta.dump(2, ' ', false, json::error_handler_t::replace));
}

/**
 * Renames the finished compile `tmp` to its entry. When the entry exists already, another
 * compile of the same key finished first (its entry is kept when it is whole, and its outcome
 * returned), or a broken one was left behind (read_entry removes it).
 */
void store_entry(const fs::path& tmp, const fs::path& entry, const std::string& key, CompileResult& result) {
    std::error_code ec;
    fs::rename(tmp, entry, ec);
    if (ec) {
        if (auto other = read_entry(entry, key)) {
            fs::remove_all(tmp, ec);
            result.ok = other->ok;
            result.library = other->library;
            return;
        }
        fs::rename(tmp, entry, ec);
        if (ec) {
            fs::remove_all(tmp, ec);
            result.ok = result.info.ok = false;
            result.info.diagnostics.push_back(
                error_diagnostic("cannot store the compiled library in " + entry.string(), "kfoundry"));
            return;
        }
    }
    if (result.ok) result.library = entry / "candidate.so";
}

}  // namespace

CompileCache::CompileCache(fs::path dir) : dir_(std::move(dir)) {
    std::error_code ec;
    fs::create_directories(dir_, ec);  // a failure shows up (with a message) at the first compile
    remove_stale_temporaries(dir_);
}

fs::path CompileCache::default_dir() {
    if (auto v = env_or_empty("KF_CACHE_DIR"); !v.empty()) return v;
    if (auto v = env_or_empty("XDG_CACHE_HOME"); !v.empty()) return fs::path(v) / "kernel-foundry" / "compile";
    if (auto v = env_or_empty("HOME"); !v.empty()) return fs::path(v) / ".cache" / "kernel-foundry" / "compile";
    return fs::temp_directory_path() / "kernel-foundry-compile";
}

std::string CompileCache::compiler_identity(Backend b) {
    {
        std::lock_guard lock(mutex_);
        if (auto it = identities_.find(static_cast<int>(b)); it != identities_.end()) return it->second;
    }
    // Run outside the lock; two threads racing here compute the same text.
    std::string program = compiler_program(b);
    ProcessResult r = run_process({program, "--version"}, std::chrono::seconds(30));
    std::string identity = program + "\n" + (r.start_failed ? std::string("(not found)") : r.output);
    std::lock_guard lock(mutex_);
    return identities_.emplace(static_cast<int>(b), identity).first->second;
}

std::string CompileCache::key_of(const CompileRequest& req) {
    // Length-prefixed fields, so that no two different requests serialise to the same text.
    std::string text = "kf-compile-key-v2\n";
    add_length_prefixed(text, "backend", to_string(req.backend));
    add_length_prefixed(text, "source", req.source);
    add_length_prefixed(text, "source_name", req.source_name.empty() ? default_source_name(req.backend) : req.source_name);
    add_length_prefixed(text, "header", req.header);
    add_length_prefixed(text, "glue", req.glue);
    add_length_prefixed(text, "arch", req.backend == Backend::Cuda ? req.arch : std::string());
    for (const auto& lib : req.libraries) add_length_prefixed(text, "library", lib);
    for (const auto& flag : req.extra_flags) add_length_prefixed(text, "flag", flag);
    for (const auto& dir : req.include_dirs) add_length_prefixed(text, "include_dir", dir.string());
    const CompileLimits limits = effective_limits(req);
    add_length_prefixed(text, "limits", std::to_string(limits.memory_bytes) + " " + std::to_string(limits.file_bytes) +
                                            " " + std::to_string(limits.library_bytes) + " " +
                                            std::to_string(limits.output_bytes));
    std::string why;
    add_length_prefixed(text, "sandbox", use_sandbox(why) ? "bwrap" : "none");
    add_length_prefixed(text, "compiler", compiler_identity(req.backend));
    return sha256_hex(text);
}

CompileResult CompileCache::compile(const CompileRequest& req) {
    CompileResult result;
    std::promise<CompileResult> promise;
    try {
        result.key = key_of(req);
        std::shared_future<CompileResult> running;
        {
            std::lock_guard lock(mutex_);
            if (auto it = in_flight_.find(result.key); it != in_flight_.end())
                running = it->second;
            else
                in_flight_.emplace(result.key, promise.get_future().share());
        }
        if (running.valid()) {
            // An identical request is compiling right now: share its result.
            CompileResult shared = running.get();
            shared.info.cached = true;
            shared.info.seconds = 0;
            return shared;
        }
        if (auto hit = read_entry(dir_ / result.key, result.key))
            result = std::move(*hit);
        else
            result = build(req, result.key);
    } catch (const std::exception& e) {
        result.ok = false;
        result.info.ok = false;
        result.info.diagnostics.push_back(error_diagnostic(std::string("compile failed: ") + e.what(), "kfoundry"));
    }
    std::lock_guard lock(mutex_);
    if (auto it = in_flight_.find(result.key); it != in_flight_.end()) {
        promise.set_value(result);
        in_flight_.erase(it);
    }
    return result;
}

CompileResult CompileCache::build(const CompileRequest& req, const std::string& key) {
    CompileResult result;
    result.key = key;
    CompileInfo& info = result.info;
    const std::string source_name = req.source_name.empty() ? default_source_name(req.backend) : req.source_name;
    const fs::path entry = dir_ / key;

    fs::create_directories(dir_);
    std::string templ = (dir_ / ("tmp-" + key + "-XXXXXX")).string();
    if (!mkdtemp(templ.data())) throw std::runtime_error("cannot create a folder in " + dir_.string());
    const fs::path tmp = templ;
    std::error_code ec;
    try {
        write_text(tmp / "kf_task.h", req.header);
        write_text(tmp / source_name, req.source);
        write_text(tmp / glue_file_name(req.backend), req.glue);

        CompileRun c(req, source_name, tmp, entry);
        std::string identity = compiler_identity(req.backend);
        info.compiler = display_name(c.cmd[0], identity.substr(identity.find('\n') + 1));
        c.run(info);
        info.seconds = c.pr.seconds;
        c.explain_limits(info);
        c.check_library(info);
        c.explain_failure(info);
        c.warn_unsandboxed(info);
        info.log = truncate_log(c.output);
        result.ok = info.ok;
        if (!c.deterministic()) {
            fs::remove_all(tmp, ec);
            return result;
        }
        c.write_meta(info, key);
    } catch (...) {
        fs::remove_all(tmp, ec);
        throw;
    }
    store_entry(tmp, entry, key, result);
    return result;
}

}  // namespace kf
