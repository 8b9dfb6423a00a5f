// The spellings of the engine's fixed words (kf/vocabulary.h): they are what the project
// store and the events hold, so they never change; a new word is added, never renamed.
#include "kf/vocabulary.h"

#include <cstdio>
#include <cstdlib>
#include <regex>

#include "kf/error.h"

namespace kf {

std::string_view to_string(Status s) {
    switch (s) {
    case Status::Ok: return "ok";
    case Status::CompileError: return "compile_error";
    case Status::LoadError: return "load_error";
    case Status::RuntimeError: return "runtime_error";
    case Status::Timeout: return "timeout";
    case Status::Incorrect: return "incorrect";
    case Status::IntegrityViolation: return "integrity_violation";
    }
    return "runtime_error";
}

std::optional<Status> parse_status(std::string_view s) {
    for (Status st : kStatuses)
        if (to_string(st) == s) return st;
    return std::nullopt;
}

Status status_from_string(std::string_view s) {
    if (auto st = parse_status(s)) return *st;
    throw Error("unknown diagnosis status '" + std::string(s) + "'");
}

std::string_view to_string(RunState s) {
    switch (s) {
    case RunState::Running: return "running";
    case RunState::Paused: return "paused";
    case RunState::Done: return "done";
    case RunState::Failed: return "failed";
    case RunState::Stopped: return "stopped";
    }
    return "failed";
}

std::optional<RunState> parse_run_state(std::string_view s) {
    for (RunState st : kRunStates)
        if (to_string(st) == s) return st;
    return std::nullopt;
}

std::string_view to_string(EventKind k) {
    switch (k) {
    case EventKind::Seeded: return "seeded";
    case EventKind::Proposed: return "proposed";
    case EventKind::Evaluated: return "evaluated";
    case EventKind::Improved: return "improved";
    case EventKind::Migrated: return "migrated";
    case EventKind::Refused: return "refused";
    case EventKind::Stopped: return "stopped";
    case EventKind::Paused: return "paused";
    case EventKind::Resumed: return "resumed";
    case EventKind::Log: return "log";
    case EventKind::LlmUsage: return "llm_usage";
    case EventKind::Confirmation: return "confirmation";
    case EventKind::Retrieval: return "retrieval";
    case EventKind::Templates: return "templates";
    case EventKind::Generic: return "generic";
    }
    return "log";
}

std::optional<EventKind> parse_event_kind(std::string_view s) {
    for (EventKind k : kEventKinds)
        if (to_string(k) == s) return k;
    return std::nullopt;
}

std::string_view to_string(DiagnosisClass c) {
    switch (c) {
    case DiagnosisClass::CompileError: return "compile_error";
    case DiagnosisClass::LoadError: return "load_error";
    case DiagnosisClass::RuntimeError: return "runtime_error";
    case DiagnosisClass::Timeout: return "timeout";
    case DiagnosisClass::Incorrect: return "incorrect";
    case DiagnosisClass::IntegrityViolation: return "integrity_violation";
    case DiagnosisClass::Memory: return "memory";
    case DiagnosisClass::Compute: return "compute";
    case DiagnosisClass::Latency: return "latency";
    case DiagnosisClass::Occupancy: return "occupancy";
    case DiagnosisClass::Spills: return "spills";
    }
    return "latency";
}

std::optional<DiagnosisClass> parse_diagnosis_class(std::string_view s) {
    for (DiagnosisClass c : kDiagnosisClasses)
        if (to_string(c) == s) return c;
    return std::nullopt;
}

DiagnosisClass diagnosis_class_from_string(std::string_view s) {
    if (auto c = parse_diagnosis_class(s)) return *c;
    throw Error("unknown diagnosis class '" + std::string(s) + "'");
}

std::optional<DiagnosisClass> failure_class(Status s) {
    switch (s) {
    case Status::Ok: return std::nullopt;
    case Status::CompileError: return DiagnosisClass::CompileError;
    case Status::LoadError: return DiagnosisClass::LoadError;
    case Status::RuntimeError: return DiagnosisClass::RuntimeError;
    case Status::Timeout: return DiagnosisClass::Timeout;
    case Status::Incorrect: return DiagnosisClass::Incorrect;
    case Status::IntegrityViolation: return DiagnosisClass::IntegrityViolation;
    }
    return DiagnosisClass::RuntimeError;
}

Status status_of(DiagnosisClass c) {
    for (Status s : kStatuses)
        if (failure_class(s) == c) return s;
    return Status::Ok;
}

bool is_failure(DiagnosisClass c) { return status_of(c) != Status::Ok; }

bool StopReason::stopped() const {
    return kind == StopKind::Requested || kind == StopKind::LlmCalls || kind == StopKind::LlmTokens ||
           kind == StopKind::LlmCost;
}

namespace {
std::string integer(double v) { return std::to_string(static_cast<long long>(v)); }
}  // namespace

std::string to_string(const StopReason& r) {
    switch (r.kind) {
    case StopKind::Requested: return "stopped on request";
    case StopKind::EvaluationBudget: return "evaluation budget of " + integer(r.limit) + " spent";
    case StopKind::TimeLimit: return "time limit of " + std::to_string(static_cast<int>(r.limit)) + " s reached";
    case StopKind::Stagnation: return "no improvement in " + integer(r.used) + " rounds";
    case StopKind::Exhausted: return "search space exhausted: no expert can propose a new child on any island";
    case StopKind::LlmCalls: return "LLM budget spent: " + integer(r.used) + " of " + integer(r.limit) + " calls";
    case StopKind::LlmTokens: return "LLM budget spent: " + integer(r.used) + " of " + integer(r.limit) + " tokens";
    case StopKind::LlmCost: {
        char buf[120];
        std::snprintf(buf, sizeof buf, "LLM budget spent: cost %.4f of %.4f", r.used, r.limit);
        return buf;
    }
    case StopKind::Other: return r.text;
    }
    return r.text;
}

StopReason stop_reason_from_string(std::string_view text) {
    const std::string s(text);
    StopReason r;
    if (s == "stopped on request") return r;
    if (s == to_string(StopReason::exhausted())) return StopReason::exhausted();
    struct Form {
        const char* pattern;
        StopKind kind;
        bool has_used, has_limit;
    };
    static const Form forms[] = {
        {"^evaluation budget of (\\d+) spent$", StopKind::EvaluationBudget, false, true},
        {"^time limit of (\\d+) s reached$", StopKind::TimeLimit, false, true},
        {"^no improvement in (\\d+) rounds$", StopKind::Stagnation, true, false},
        {"^LLM budget spent: (\\d+) of (\\d+) calls$", StopKind::LlmCalls, true, true},
        {"^LLM budget spent: (\\d+) of (\\d+) tokens$", StopKind::LlmTokens, true, true},
        {"^LLM budget spent: cost ([0-9.]+) of ([0-9.]+)$", StopKind::LlmCost, true, true},
    };
    for (const Form& f : forms) {
        std::smatch m;
        if (!std::regex_match(s, m, std::regex(f.pattern))) continue;
        r.kind = f.kind;
        std::size_t k = 1;
        if (f.has_used) r.used = std::strtod(m[k++].str().c_str(), nullptr);
        if (f.has_limit) r.limit = std::strtod(m[k].str().c_str(), nullptr);
        return r;
    }
    r.kind = StopKind::Other;
    r.text = s;
    return r;
}

}  // namespace kf
