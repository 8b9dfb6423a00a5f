#include "run_steps.h"

#include <cstdio>

#include "kf/error.h"
#include "kf/evolution.h"
#include "kf/run_control.h"

namespace kf::evolve_steps {

using nlohmann::json;

ProviderBinding::ProviderBinding(ExpertProvider* provider, const Task& task, Backend backend, RunControl* control)
    : provider_(provider) {
    if (provider_) provider_->attach(&task, backend, control, [this] { return stopping_.load(); });
}

ProviderBinding::~ProviderBinding() {
    if (provider_) provider_->attach(nullptr, Backend::Host, nullptr, {});
}

std::optional<StopReason> ProviderBinding::spent_budget() const {
    return provider_ ? provider_->spent_budget() : std::nullopt;
}

Librarian::Librarian(ExperienceLibrary* library, const Task& task, std::int64_t run, const Retrieval& patterns,
                     EventSink on_event)
    : library_(library), task_(task), run_(run), patterns_(patterns), on_event_(std::move(on_event)) {}

void Librarian::child_evaluated(const SearchEvent& e) {
    if (library_) record_child_evidence(*library_, task_.op_class, e, run_);
}

void Librarian::pattern_used(const Child& c, const Diagnosis& d) {
    auto id = patterns_.ids.find(c.proposal.source);
    if (!library_ || id == patterns_.ids.end()) return;
    try {
        // An adapted pattern that fails to compile says nothing about the template itself.
        if (d.status == Status::CompileError && c.proposal.tunables.empty() && !patterns_.adapted.count(c.proposal.source)) {
            library_->mark_pattern_broken(id->second, d.message.substr(0, 300));
            if (on_event_)
                on_event_({EventKind::Log, c.island, c.id, "library pattern marked broken: " + d.message.substr(0, 200), {}});
        } else {
            library_->record_pattern_use(id->second, d.fitness() > 1.0);
        }
    } catch (const Error&) {
        // The library is an aid: failing to record evidence never stops the search.
    }
}

std::vector<std::string> Librarian::notes(DiagnosisClass dclass) const {
    std::vector<std::string> notes;
    if (!library_) return notes;
    InsightQuery q;
    q.op_class = task_.op_class;
    q.limit = 6;
    const bool bound = is_bound(dclass);
    const std::string word(to_string(dclass));
    try {
        for (const Insight& in : library_->insights(q)) {
            if (in.status == "rejected") continue;
            if (bound && !in.condition.bound.empty() && in.condition.bound != word) continue;
            if (!bound && !in.condition.status.empty() && in.condition.status != word) continue;
            char gain[32];
            std::snprintf(gain, sizeof gain, "%.2f", in.evidence.median_gain());
            notes.push_back("insight (" + in.status + ", " + std::to_string(in.evidence.successes) + "/" +
                            std::to_string(in.evidence.applications) + " successes, median gain " + gain + "x): " + in.action);
        }
    } catch (const Error&) {
    }
    for (std::size_t k = 0; k < patterns_.patterns.size() && k < 3; ++k)
        notes.push_back("pattern " + patterns_.patterns[k].name + ": " + patterns_.patterns[k].description);
    return notes;
}

Checkpoints::Checkpoints(ProjectStore& store, std::int64_t run, ExpertProvider* provider, EventSink on_event)
    : store_(store), run_(run), provider_(provider), on_event_(std::move(on_event)) {}

void Checkpoints::search(const Search& s) { store_.put_state(run_, "search", s.state()); }

void Checkpoints::provider(bool force) {
    if (!provider_) return;
    store_.put_state(run_, "llm", provider_->state());
    const std::int64_t serial = provider_->usage_serial();
    if ((force || serial != reported_) && on_event_) on_event_({EventKind::LlmUsage, -1, 0, "", provider_->usage()});
    reported_ = serial;
}

void log_line(ProjectStore& store, std::int64_t run, EventKind kind, const std::string& line,
              const EventSink& on_event, const json& data) {
    json stored = {{"message", line}};
    if (data.is_object()) stored.update(data);
    store.add_event(run, kind, stored);
    if (on_event) on_event({EventKind::Log, -1, 0, line, data});
}

}  // namespace kf::evolve_steps

namespace kf {

void record_child_evidence(ExperienceLibrary& library, const std::string& op_class, const SearchEvent& e, std::int64_t run) {
    if (e.kind != EventKind::Evaluated || !e.data.value("has_parent", false)) return;
    Improvement imp;
    imp.op_class = op_class;
    std::optional<DiagnosisClass> parent_class = parse_diagnosis_class(e.data.value("parent_class", ""));
    const std::string parent_word = parent_class ? std::string(to_string(*parent_class)) : std::string();
    const bool bound = parent_class && is_bound(*parent_class);
    imp.bound_before = bound ? parent_word : "";
    imp.status_before = bound ? std::string(to_string(Status::Ok)) : parent_word;
    imp.expert = e.data.value("expert", "");
    imp.change = e.data.value("rationale", "");
    imp.gain = e.data.value("gain", 0.0);
    imp.run_id = std::to_string(run);
    imp.candidate_id = std::to_string(e.member);
    imp.success = imp.gain > 1.0;
    try {
        library.record_improvement(imp);
    } catch (const Error&) {
        // The library is an aid: a failure to record evidence never stops the search.
    }
}

}  // namespace kf
