// The tuner: moves one or two of the parent's tunables to neighbouring values, choosing
// which by the parent's diagnosis.
#include <algorithm>
#include <cctype>

#include "kf/compile.h"
#include "kf/experts.h"
#include "kf/sha256.h"

namespace kf {

std::string proposal_key(const std::string& source, const Assignment& tunables) {
    // Unset tunables count at their written values, so {} and the explicit defaults are one kernel.
    Assignment full = tunables;
    try {
        for (const auto& [name, value] : parse_tunables(source).defaults()) full.emplace(name, value);
    } catch (const Error&) {
        // Malformed annotations: the key is the text as given.
    }
    return sha256_hex(source + "\n//" + to_string(full));
}

namespace {

std::string upper(std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

bool mentions(const std::string& name, const std::vector<const char*>& words) {
    std::string u = upper(name);
    return std::any_of(words.begin(), words.end(), [&](const char* w) { return u.find(w) != std::string::npos; });
}

/** Which tunables the diagnosis points at, and which way to move them (-1 smaller, +1 larger, 0 either). */
struct Steering {
    std::vector<const char*> words;
    int direction;
    const char* why;
};

Steering steering_for(std::optional<DiagnosisClass> dclass) {
    if (dclass == DiagnosisClass::Spills)
        return {{"BLOCK", "TILE", "TM", "TN", "ITEMS", "PER_THREAD", "UNROLL", "REG"}, -1, "registers spill: fewer values per thread"};
    if (dclass == DiagnosisClass::Occupancy)
        return {{"BLOCK", "THREADS", "WARPS", "MINB", "TILE", "SMEM"}, 0, "low occupancy: block size and launch bounds"};
    if (dclass == DiagnosisClass::Memory)
        return {{"VEC", "ITEMS", "PER_THREAD", "UNROLL", "ELEMS", "WIDTH", "BLOCK"}, +1, "memory-bound: wider accesses, more bytes in flight"};
    if (dclass == DiagnosisClass::Compute)
        return {{"TILE", "TM", "TN", "BK", "BM", "BN", "UNROLL", "STAGES"}, 0, "compute-bound: more reuse per thread"};
    if (dclass == DiagnosisClass::Latency)
        return {{"BLOCK", "ITEMS", "GRID", "UNROLL", "WARPS", "ROWS"}, 0, "latency-bound: more parallelism per launch"};
    return {{}, 0, "the parent failed: try its neighbours"};
}

class Tuner final : public Expert {
public:
    std::string name() const override { return "tuner"; }

    /** The parent's source with other tunables. */
    Proposal child_of(const Member& parent, const Assignment& tunables, std::string rationale) const {
        Proposal p;
        p.source = parent.source;
        p.tunables = tunables;
        p.family = parent.family;
        p.expert = name();
        p.parents = {parent.id};
        p.rationale = std::move(rationale);
        return p;
    }

    std::optional<Proposal> propose(const ProposalContext& ctx) override {
        refusal_.clear();
        const Member& parent = *ctx.parent;
        TunableSpace space;
        try {
            space = parse_tunables(parent.source);
        } catch (const Error& e) {
            refusal_ = std::string("the parent's tunable annotations do not parse: ") + e.what();
            return std::nullopt;
        }
        if (space.empty()) {
            refusal_ = "the parent declares no tunables";
            return std::nullopt;
        }
        Assignment base = space.defaults();
        for (const auto& [k, v] : parent.tunables) base[k] = v;
        Steering steer = steering_for(ctx.diagnosis_class);
        std::vector<double> weights;
        for (const auto& t : space.params) weights.push_back(mentions(t.name, steer.words) ? 4.0 : 1.0);
        SearchRng& rng = *ctx.rng;
        for (int attempt = 0; attempt < 64; ++attempt) {
            Assignment child = base;
            std::string change;
            int changes = attempt < 24 ? 1 : 2;  // widen the step once the neighbours are used up
            for (int c = 0; c < changes; ++c) {
                std::discrete_distribution<std::size_t> which(weights.begin(), weights.end());
                const Tunable& t = space.params[which(rng)];
                if (t.values.size() < 2) continue;
                auto cur = std::find(t.values.begin(), t.values.end(), child[t.name]);
                std::size_t idx = cur == t.values.end() ? 0 : static_cast<std::size_t>(cur - t.values.begin());
                std::size_t next = idx;
                bool preferred = mentions(t.name, steer.words);
                std::uniform_real_distribution<double> u(0, 1);
                if (u(rng) < 0.2 || attempt >= 40) {
                    next = std::uniform_int_distribution<std::size_t>(0, t.values.size() - 1)(rng);
                } else {
                    int dir = preferred && steer.direction != 0 ? steer.direction : (u(rng) < 0.5 ? -1 : 1);
                    if (dir < 0 && idx > 0) next = idx - 1;
                    else if (dir > 0 && idx + 1 < t.values.size()) next = idx + 1;
                    else next = idx > 0 ? idx - 1 : idx + 1;
                }
                if (next == idx) continue;
                child[t.name] = t.values[next];
                change += (change.empty() ? "" : ", ") + t.name + " " + std::to_string(t.values[idx]) + " -> " +
                          std::to_string(t.values[next]);
            }
            if (change.empty() || child == base || !space.satisfies(child)) continue;
            if (ctx.tried && ctx.tried->count(proposal_key(parent.source, child))) continue;
            return child_of(parent, child, std::string(steer.why) + ": " + change);
        }
        // The random steps found nothing new: take the nearest untried valid setting, so that
        // the tuner refuses only when the space is really exhausted.
        const Assignment* nearest = nullptr;
        int nearest_distance = 1 << 30;
        std::vector<Assignment> all = space.enumerate(100000);
        for (const auto& a : all) {
            if (a == base || (ctx.tried && ctx.tried->count(proposal_key(parent.source, a)))) continue;
            int distance = 0;
            for (const auto& [k, v] : a) distance += v != base.at(k);
            if (distance < nearest_distance) {
                nearest_distance = distance;
                nearest = &a;
            }
        }
        if (nearest) {
            std::string change;
            for (const auto& [k, v] : *nearest)
                if (v != base.at(k))
                    change += (change.empty() ? "" : ", ") + k + " " + std::to_string(base.at(k)) + " -> " + std::to_string(v);
            return child_of(parent, *nearest, "nearest untried setting: " + change);
        }
        refusal_ = "every setting of the parent's tunables has been tried";
        return std::nullopt;
    }
};

class Crossover final : public Expert {
public:
    std::string name() const override { return "crossover"; }

    std::optional<Proposal> propose(const ProposalContext& ctx) override {
        refusal_.clear();
        if (!ctx.parent || !ctx.other) {
            refusal_ = "no second parent of the same family on this island";
            return std::nullopt;
        }
        const Member& a = *ctx.parent;
        const Member& b = *ctx.other;
        if (a.source != b.source) {
            refusal_ = "the parents are different sources";
            return std::nullopt;
        }
        TunableSpace space;
        try {
            space = parse_tunables(a.source);
        } catch (const Error& e) {
            refusal_ = e.what();
            return std::nullopt;
        }
        Assignment da = space.defaults(), db = space.defaults();
        for (const auto& [k, v] : a.tunables) da[k] = v;
        for (const auto& [k, v] : b.tunables) db[k] = v;
        SearchRng& rng = *ctx.rng;
        for (int attempt = 0; attempt < 32; ++attempt) {
            Assignment child;
            std::string from_a, from_b;
            for (const auto& t : space.params) {
                bool take_a = std::uniform_int_distribution<int>(0, 1)(rng) == 0;
                child[t.name] = take_a ? da[t.name] : db[t.name];
                (take_a ? from_a : from_b) += (take_a ? from_a : from_b).empty() ? t.name : " " + t.name;
            }
            if (child == da || child == db || !space.satisfies(child)) continue;
            if (ctx.tried && ctx.tried->count(proposal_key(a.source, child))) continue;
            Proposal p;
            p.source = a.source;
            p.tunables = child;
            p.family = a.family;
            p.expert = name();
            p.parents = {a.id, b.id};
            p.rationale = "crossover of #" + std::to_string(a.id) + " (" + from_a + ") and #" + std::to_string(b.id) +
                          " (" + from_b + ")";
            return p;
        }
        refusal_ = "the parents' combinations have all been tried";
        return std::nullopt;
    }
};

class PatternExpert final : public Expert {
public:
    std::string name() const override { return "pattern"; }

    std::optional<Proposal> propose(const ProposalContext& ctx) override {
        refusal_.clear();
        if (!ctx.patterns || ctx.patterns->empty()) {
            refusal_ = "no library pattern fits this task";
            return std::nullopt;
        }
        // Untried patterns, those tagged with the parent's bottleneck first.
        const std::string dclass = ctx.diagnosis_class ? std::string(to_string(*ctx.diagnosis_class)) : std::string();
        std::vector<const PatternSource*> fitting, other;
        for (const auto& p : *ctx.patterns) {
            if (ctx.tried && ctx.tried->count(proposal_key(p.source, {}))) continue;
            bool tagged = std::find(p.bound_tags.begin(), p.bound_tags.end(), dclass) != p.bound_tags.end();
            (tagged ? fitting : other).push_back(&p);
        }
        auto& pool = fitting.empty() ? other : fitting;
        if (pool.empty()) {
            refusal_ = "every fitting library pattern has been tried";
            return std::nullopt;
        }
        const PatternSource& pick = *pool[std::uniform_int_distribution<std::size_t>(0, pool.size() - 1)(*ctx.rng)];
        Proposal p;
        p.source = pick.source;
        p.family = pick.family;
        p.expert = name();
        if (ctx.parent) p.parents = {ctx.parent->id};
        p.rationale = "library pattern " + pick.name + (fitting.empty() ? "" : " (tagged " + dclass + ")") +
                      (pick.description.empty() ? "" : ": " + pick.description);
        return p;
    }
};

}  // namespace

std::unique_ptr<Expert> make_tuner() { return std::make_unique<Tuner>(); }
std::unique_ptr<Expert> make_crossover() { return std::make_unique<Crossover>(); }
std::unique_ptr<Expert> make_pattern_expert() { return std::make_unique<PatternExpert>(); }

}  // namespace kf
