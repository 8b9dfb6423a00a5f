// What a finished run achieved, read back from the project store.
#include "kf/run_summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "kf/error.h"

namespace kf {

using nlohmann::json;

std::string_view to_string(RunOutcome o) {
    switch (o) {
        case RunOutcome::Improved: return "improved";
        case RunOutcome::NoImprovement: return "no_improvement";
        case RunOutcome::NoCorrect: return "no_correct_candidate";
    }
    return "?";
}

namespace {

/** How far from 1x the reference's time against its own must be for the line to mention it. */
constexpr double kSelfNoiseWarning = 0.05;

/** The fraction of the peak that bounds this kernel, from a diagnosis' roofline. */
double bound_fraction_of(const json& roofline, const std::string& bound) {
    double bw = roofline.value("bandwidth_fraction", 0.0), fl = roofline.value("compute_fraction", 0.0);
    if (bound == "memory") return bw;
    if (bound == "compute") return fl;
    return std::max(bw, fl);
}

std::string percent(double f) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f%%", 100 * f);
    return buf;
}

}  // namespace

RunSummary summarize_run(ProjectStore& store, std::int64_t run, double min_gain) {
    return summarize_run(ProjectView(store), run, min_gain);
}

RunSummary summarize_run(const ProjectView& store, std::int64_t run, double min_gain) {
    auto rr = store.run(run);
    if (!rr) throw StoreError(store.dir().string(), "no run " + std::to_string(run));
    RunSummary s;
    s.run_id = run;
    s.task = rr->task;
    s.min_gain = min_gain;
    std::map<std::int64_t, CandidateRecord> cands;
    for (auto& c : store.candidates(run)) cands.emplace(c.id, std::move(c));
    std::vector<EvaluationRecord> evals = store.evaluations(run);
    s.evaluations = static_cast<int>(evals.size());
    const EvaluationRecord* best = nullptr;
    const EvaluationRecord* best_other = nullptr;  // the best that is not the reference
    const EvaluationRecord* reference = nullptr;
    for (const auto& e : evals) {
        if (e.status_value() != Status::Ok) continue;
        ++s.correct;
        auto c = cands.find(e.candidate_id);
        bool ref = c != cands.end() && c->second.is_reference();
        if (ref && !reference) reference = &e;
        if (!best || e.fitness > best->fitness) best = &e;
        if (!ref && (!best_other || e.fitness > best_other->fitness)) best_other = &e;
    }
    if (!best) return s;
    if (reference) s.reference_self_speedup = reference->fitness;
    // The best other timed again side by side with the reference: an improvement needs the
    // search's figure and that one both at min_gain (the search's is the larger by selection).
    double gain = best_other ? best_other->fitness : 0;
    if (auto conf = store.get_state(run, "confirmation");
        conf && conf->is_object() && best_other && conf->value("candidate", std::int64_t{0}) == best_other->candidate_id) {
        s.confirmation = *conf;
        if (conf->contains("speedup") && (*conf)["speedup"].is_number()) {
            s.confirmed_speedup = (*conf)["speedup"].get<double>();
            s.confirmed_rounds = conf->contains("rounds") ? static_cast<int>((*conf)["rounds"].size()) : 0;
            gain = std::min(gain, s.confirmed_speedup);
        } else {
            s.confirmation_failed = conf->value("failed", std::string("not timed again"));
            // The best failed when timed again (incorrect, a crash): not an improvement, whatever
            // the search measured. A reference that failed, or a stop, leaves the search's figure.
            if (conf->value("failed_by", std::string()) == "best") gain = 0;
        }
    }
    if (best_other && gain >= min_gain) {
        s.outcome = RunOutcome::Improved;
        best = best_other;
    } else {
        s.outcome = RunOutcome::NoImprovement;
        // Measured above the bar by the search but not when timed again: that one is named.
        if (best_other && best_other->fitness >= min_gain) best = best_other;
    }
    const CandidateRecord& bc = cands.at(best->candidate_id);
    s.best_id = bc.id;
    s.best_speedup = best->fitness;
    s.best_family = bc.family;
    s.best_expert = bc.expert;
    s.best_is_reference = bc.is_reference();
    if (s.best_is_reference && best_other) {
        s.other_id = best_other->candidate_id;
        s.other_speedup = best_other->fitness;
        s.other_family = cands.at(best_other->candidate_id).family;
    }
    if (best->diagnosis.is_object() && best->diagnosis.contains("roofline") && best->diagnosis["roofline"].is_object()) {
        const json& r = best->diagnosis["roofline"];
        s.bound = r.value("bound", "");
        s.bandwidth_fraction = r.value("bandwidth_fraction", 0.0);
        s.compute_fraction = r.value("compute_fraction", 0.0);
        s.bound_fraction = bound_fraction_of(r, s.bound);
        s.achieved_gbps = r.value("achieved_gbps", 0.0);
        s.peak_gbps = r.value("peak_gbps", 0.0);
        s.achieved_gflops = r.value("achieved_gflops", 0.0);
        s.peak_gflops = r.value("peak_gflops", 0.0);
        if (reference && reference->diagnosis.contains("roofline") && reference->diagnosis["roofline"].is_object())
            s.reference_bound_fraction = bound_fraction_of(reference->diagnosis["roofline"], s.bound);
    }
    for (const auto& e : evals) {
        auto c = cands.find(e.candidate_id);
        if (c == cands.end() || c->second.family.rfind("generic/", 0) != 0) continue;
        auto g = std::find_if(s.generic.begin(), s.generic.end(),
                              [&](const RunSummary::GenericTried& t) { return t.family == c->second.family; });
        if (g == s.generic.end()) g = s.generic.insert(s.generic.end(), {c->second.family, 0, 0, 0, ""});
        ++g->evaluations;
        if (e.status_value() == Status::Ok) {
            ++g->correct;
            g->best_speedup = std::max(g->best_speedup, e.fitness);
        } else {
            g->last_status = std::string(to_string(e.status_value()));
        }
    }
    for (std::size_t k = 0; k < evals.size(); ++k)
        if (evals[k].status_value() == Status::Ok && evals[k].fitness >= 0.9 * s.best_speedup) {
            s.evals_to_90pct = static_cast<int>(k) + 1;
            break;
        }
    return s;
}

json RunSummary::to_json() const {
    json j = {{"run", run_id},
              {"task", task},
              {"outcome", std::string(kf::to_string(outcome))},
              {"evaluations", evaluations},
              {"correct", correct},
              {"min_gain", min_gain},
              {"evals_to_90pct", evals_to_90pct}};
    if (reference_self_speedup >= 0) j["reference_self_speedup"] = reference_self_speedup;
    if (!generic.empty()) {
        json g = json::array();
        for (const auto& t : generic) {
            json one = {{"family", t.family}, {"evaluations", t.evaluations}, {"correct", t.correct}};
            if (t.correct) one["best_speedup"] = t.best_speedup;
            else one["status"] = t.last_status;
            g.push_back(one);
        }
        j["generic"] = g;
    }
    if (best_id) {
        json b = {{"candidate", *best_id},
                  {"speedup", best_speedup},
                  {"family", best_family},
                  {"expert", best_expert},
                  {"is_reference", best_is_reference}};
        if (bound_fraction >= 0) {
            b["bound"] = bound;
            b["bound_fraction"] = bound_fraction;
            b["bandwidth_fraction"] = bandwidth_fraction;
            b["compute_fraction"] = compute_fraction;
            b["achieved_gbps"] = achieved_gbps;
            b["peak_gbps"] = peak_gbps;
            b["achieved_gflops"] = achieved_gflops;
            b["peak_gflops"] = peak_gflops;
            if (reference_bound_fraction >= 0) b["reference_bound_fraction"] = reference_bound_fraction;
        }
        if (confirmed_speedup >= 0) b["confirmed_speedup"] = confirmed_speedup;
        j["best"] = b;
        if (!confirmation.is_null()) j["confirmation"] = confirmation;
        if (outcome == RunOutcome::NoImprovement && best_is_reference)
            j["fastest_other"] = other_id ? json{{"candidate", *other_id}, {"speedup", other_speedup}, {"family", other_family}}
                                          : json(nullptr);
    } else {
        j["best"] = nullptr;
    }
    return j;
}

std::string RunSummary::line() const {
    if (!best_id) return "no correct candidate (not even the reference passed)";
    char head[512];
    if (outcome == RunOutcome::Improved && confirmed_speedup >= 0)
        std::snprintf(head, sizeof head,
                      "improved: candidate %lld, %.2fx the reference timed again side by side (median of %d round%s; "
                      "%.2fx in the search) (%s, %s)",
                      static_cast<long long>(*best_id), confirmed_speedup, confirmed_rounds, confirmed_rounds == 1 ? "" : "s",
                      best_speedup, best_family.c_str(), best_expert.c_str());
    else if (outcome == RunOutcome::Improved)
        std::snprintf(head, sizeof head, "improved: candidate %lld, %.2fx the reference (%s, %s)",
                      static_cast<long long>(*best_id), best_speedup, best_family.c_str(), best_expert.c_str());
    else if (!best_is_reference && best_speedup >= min_gain && confirmed_speedup >= 0)
        std::snprintf(head, sizeof head,
                      "no improvement over the reference: the best correct candidate (%lld, %s) measured %.2fx in the "
                      "search but %.2fx timed again side by side (median of %d round%s), under the %.2fx needed",
                      static_cast<long long>(*best_id), best_family.c_str(), best_speedup, confirmed_speedup,
                      confirmed_rounds, confirmed_rounds == 1 ? "" : "s", min_gain);
    else if (!best_is_reference && best_speedup >= min_gain && !confirmation_failed.empty())
        std::snprintf(head, sizeof head,
                      "no improvement over the reference: the best correct candidate (%lld, %s) measured %.2fx in the "
                      "search, but timed again it failed (%.200s)",
                      static_cast<long long>(*best_id), best_family.c_str(), best_speedup, confirmation_failed.c_str());
    else if (!best_is_reference)
        std::snprintf(head, sizeof head, "no improvement over the reference: the best correct candidate (%lld, %s) is %.2fx, under the %.2fx needed",
                      static_cast<long long>(*best_id), best_family.c_str(), best_speedup, min_gain);
    else if (other_id)
        std::snprintf(head, sizeof head,
                      "no improvement over the reference: the best correct candidate is the reference itself (%lld, %.2fx in "
                      "its own timing); the fastest other, %lld (%s), is %.2fx, under the %.2fx needed",
                      static_cast<long long>(*best_id), best_speedup, static_cast<long long>(*other_id),
                      other_family.c_str(), other_speedup, min_gain);
    else
        std::snprintf(head, sizeof head,
                      "no improvement over the reference: the best correct candidate is the reference itself (%lld); no "
                      "other candidate was correct",
                      static_cast<long long>(*best_id));
    std::string s = head;
    if (bound_fraction >= 0) {
        std::string roof = bound == "compute" ? "measured FMA rate" : bound == "memory" ? "measured copy bandwidth"
                                                                                         : "nearer measured peak";
        s += "; at " + percent(bound_fraction) + " of the " + roof + " (" + (bound.empty() ? "unknown" : bound) + "-bound";
        if (reference_bound_fraction >= 0 && !best_is_reference) s += ", reference at " + percent(reference_bound_fraction);
        s += ")";
    } else {
        s += "; no roofline in its diagnosis";
    }
    if (outcome == RunOutcome::Improved && !confirmation_failed.empty()) s += "; not timed again: " + confirmation_failed;
    if (!generic.empty()) {
        s += "; generic kernels tried:";
        for (std::size_t i = 0; i < generic.size(); ++i) {
            char one[160];
            if (generic[i].correct)
                std::snprintf(one, sizeof one, "%s %s %.2fx", i ? "," : "", generic[i].family.c_str(), generic[i].best_speedup);
            else
                std::snprintf(one, sizeof one, "%s %s %s", i ? "," : "", generic[i].family.c_str(), generic[i].last_status.c_str());
            s += one;
        }
    }
    // The reference timed as a candidate far from 1x: the run's speedups carry that noise.
    if (reference_self_speedup > 0 && !best_is_reference && std::abs(reference_self_speedup - 1.0) >= kSelfNoiseWarning) {
        char note[160];
        std::snprintf(note, sizeof note, "; the reference itself measured %.2fx against its own timing, noise of that size",
                      reference_self_speedup);
        s += note;
    }
    return s;
}

}  // namespace kf
