// The search without a GPU or compiler: islands, selection, migration, routing and the
// built-in experts, driven by a deterministic fake evaluator.
#include <QtTest>

#include <algorithm>

#include <cmath>

#include "kf/experts.h"
#include "kf/population.h"
#include "kf/router.h"
#include "kf/search.h"
#include "kf/tunables.h"

using namespace kf;

namespace {

const char* kTemplate =
    "#define VEC 1     // @kf tunable values(1, 2, 4, 8)\n"
    "#define BLOCK 64  // @kf tunable values(32, 64, 128, 256, 512)\n"
    "#define UNROLL 1  // @kf tunable values(1, 2, 4, 8)\n"
    "// @kf constraint VEC * BLOCK <= 1024\n"
    "extern \"C\" void kf_solve() {}\n";

Member member(std::int64_t id, double fitness, const std::string& family = "f", int island = 0,
              const std::string& bound = "memory") {
    Member m;
    m.id = id;
    m.fitness = fitness;
    m.family = family;
    m.island = island;
    m.bound = bound;
    m.source = kTemplate;
    m.status = fitness > 0 ? Status::Ok : Status::Incorrect;
    return m;
}

/** Fitness of the template: best at VEC 4, BLOCK 256; patterns have fixed fitness. */
Diagnosis fake_evaluate(const Child& c) {
    Diagnosis d;
    d.status = Status::Ok;
    if (c.proposal.source.find("BROKEN") != std::string::npos) {
        d.status = Status::CompileError;
        return d;
    }
    if (c.proposal.source.find("ALWAYS_WRONG") != std::string::npos ||
        (c.proposal.source.find("WRONG_AT_64") != std::string::npos &&
         (!c.proposal.tunables.count("BLOCK") || c.proposal.tunables.at("BLOCK") == 64))) {
        d.status = Status::Incorrect;
        return d;
    }
    double fit = 1.0;
    if (c.proposal.source == kTemplate) {
        Assignment a = parse_tunables(kTemplate).defaults();
        for (const auto& [k, v] : c.proposal.tunables) a[k] = v;
        fit = 4.0 - std::abs(std::log2(static_cast<double>(a["VEC"])) - 2) -
              0.5 * std::abs(std::log2(static_cast<double>(a["BLOCK"])) - 8) -
              0.25 * std::abs(std::log2(static_cast<double>(a["UNROLL"])) - 2);
    } else if (c.proposal.source.find("PATTERN_A") != std::string::npos) {
        fit = 1.5;
    }
    d.timing = Timing{};
    d.timing->speedup = fit;
    d.roofline = Roofline{};
    d.roofline->bound = "memory";
    return d;
}

std::vector<PatternSource> patterns() {
    return {PatternSource{"a", "fam-a", "// PATTERN_A\nextern \"C\" void kf_solve() {}\n", {"memory"}, "pattern a"},
            PatternSource{"broken", "fam-b", "// BROKEN\n", {"compute"}, "does not compile"}};
}

SearchConfig config(int budget, std::uint64_t seed = 7) {
    SearchConfig cfg;
    cfg.budget = budget;
    cfg.seed = seed;
    cfg.islands.islands = 4;
    cfg.islands.population = 6;
    return cfg;
}

struct Recorder {
    std::vector<std::string> keys;
    SearchHooks hooks() {
        SearchHooks h;
        h.evaluate = [this](const std::vector<Child>& batch) {
            std::vector<Diagnosis> out;
            for (const auto& c : batch) {
                keys.push_back(proposal_key(c.proposal.source, c.proposal.tunables));
                out.push_back(fake_evaluate(c));
            }
            return out;
        };
        return h;
    }
};

std::vector<Proposal> seeds() {
    std::vector<Proposal> s;
    for (int i = 0; i < 4; ++i) {
        Proposal p;
        p.source = kTemplate;
        p.family = "template";
        p.expert = "seed";
        if (i > 0) p.tunables = {{"VEC", 1 << (i - 1)}, {"BLOCK", 32}, {"UNROLL", 1}};
        s.push_back(p);
    }
    return s;
}

}  // namespace

class TestSearch : public QObject {
    Q_OBJECT

private slots:
    void island_keeps_elites_and_diverse_cells() {
        IslandConfig cfg;
        cfg.islands = 1;
        cfg.population = 4;
        cfg.elites = 1;
        IslandModel model(cfg);
        for (int i = 1; i <= 6; ++i) model.add(member(i, 1.0 + i, "same"));
        model.add(member(7, 1.5, "other"));  // worse, but the only member of its cell
        QCOMPARE(model.members(0).size(), std::size_t(4));
        QCOMPARE(model.best(0)->id, std::int64_t(6));
        bool other_kept = false;
        for (const auto& m : model.members(0)) other_kept = other_kept || m.family == "other";
        QVERIFY(other_kept);
    }

    void tournament_prefers_fitter_members() {
        IslandConfig cfg;
        cfg.islands = 1;
        cfg.population = 10;
        IslandModel model(cfg);
        for (int i = 1; i <= 10; ++i) model.add(member(i, i));
        SearchRng rng(1);
        int top_half = 0;
        for (int k = 0; k < 1000; ++k) top_half += model.select(0, rng)->fitness > 5 ? 1 : 0;
        QVERIFY2(top_half > 800, std::to_string(top_half).c_str());  // 1 - 0.5^3 = 87.5% expected
    }

    void ring_migration_moves_the_best() {
        IslandConfig cfg;
        cfg.islands = 3;
        cfg.migrate_every = 2;
        IslandModel model(cfg);
        for (int i = 0; i < 3; ++i) {
            Member m = member(i + 1, i == 0 ? 3.0 : i == 1 ? 1.0 : 2.0, "f", i);
            m.tunables = {{"VEC", 1 << i}, {"BLOCK", 64}, {"UNROLL", 1}};  // three different kernels
            model.add(m);
        }
        QVERIFY(!model.migration_due());
        for (int g = 0; g < 2; ++g)
            for (int i = 0; i < 3; ++i) model.end_generation(i);
        QVERIFY(model.migration_due());
        auto migs = model.migrate();
        QCOMPARE(migs.size(), std::size_t(3));
        QCOMPARE(model.best(1)->id, std::int64_t(1));  // island 0's best arrived on island 1
        QCOMPARE(model.best(0)->fitness, 3.0);
        QVERIFY(!model.migration_due());
        IslandModel copy = IslandModel::from_json(model.to_json());
        QCOMPARE(copy.to_json().dump(), model.to_json().dump());
    }

    void router_uses_priors_then_learns() {
        Router r({"tuner", "crossover", "pattern"});
        QCOMPARE(r.choose(DiagnosisClass::Spills).expert, std::string("tuner"));
        QCOMPARE(r.choose(DiagnosisClass::IntegrityViolation).expert, std::string("pattern"));
        RouteDecision d = r.choose(DiagnosisClass::Memory);
        QCOMPARE(d.expert, std::string("pattern"));
        QVERIFY(d.reason.find("memory") != std::string::npos);
        // The pattern expert keeps failing on memory-bound parents, the tuner keeps helping.
        for (int i = 0; i < 20; ++i) {
            r.reward(DiagnosisClass::Memory, "pattern", 0.0);
            r.reward(DiagnosisClass::Memory, "tuner", 1.3);
        }
        QCOMPARE(r.choose(DiagnosisClass::Memory, {}, {"tuner", "pattern"}).expert, std::string("tuner"));
        QCOMPARE(r.choose(DiagnosisClass::Memory).expert, std::string("crossover"));  // untried: UCB explores it
        QCOMPARE(r.stats(DiagnosisClass::Memory, "tuner").improvements, 20);
        // The island's specialty breaks near-ties.
        Router fresh({"tuner", "crossover", "pattern"});
        QCOMPARE(fresh.choose(DiagnosisClass::Latency, {"crossover"}).expert, std::string("crossover"));
        Router loaded({"tuner", "crossover", "pattern"});
        loaded.load_stats(r.to_json());
        QCOMPARE(loaded.stats(DiagnosisClass::Memory, "pattern").tries, 20);
    }

    void tuner_follows_the_diagnosis_and_constraints() {
        auto tuner = make_tuner();
        Member parent = member(1, 1.0);
        parent.tunables = {{"VEC", 2}, {"BLOCK", 256}, {"UNROLL", 1}};
        SearchRng rng(3);
        std::set<std::string> tried;
        ProposalContext ctx;
        ctx.parent = &parent;
        ctx.diagnosis_class = DiagnosisClass::Memory;
        ctx.tried = &tried;
        ctx.rng = &rng;
        int vec_up = 0, proposals = 0;
        TunableSpace space = parse_tunables(kTemplate);
        for (int k = 0; k < 40; ++k) {
            auto p = tuner->propose(ctx);
            if (!p) break;
            ++proposals;
            QVERIFY(space.satisfies(p->tunables));
            QVERIFY(!p->rationale.empty());
            if (p->tunables.at("VEC") > 2 && p->tunables.at("BLOCK") == 256) ++vec_up;
            tried.insert(proposal_key(p->source, p->tunables));
        }
        QVERIFY(proposals > 0);
        QVERIFY(vec_up > 0);
        // Exhaustion: with every assignment tried the tuner refuses, saying why.
        for (const auto& a : space.enumerate()) tried.insert(proposal_key(kTemplate, a));
        QVERIFY(!tuner->propose(ctx));
        QVERIFY(!tuner->refusal().empty());
        Member plain = member(2, 1.0);
        plain.source = "extern \"C\" void kf_solve() {}\n";
        ctx.parent = &plain;
        QVERIFY(!tuner->propose(ctx));
        QVERIFY(tuner->refusal().find("no tunables") != std::string::npos);
    }

    void crossover_mixes_two_parents() {
        auto cx = make_crossover();
        Member a = member(1, 2.0), b = member(2, 2.0);
        a.tunables = {{"VEC", 1}, {"BLOCK", 512}, {"UNROLL", 1}};
        b.tunables = {{"VEC", 8}, {"BLOCK", 32}, {"UNROLL", 1}};
        SearchRng rng(5);
        ProposalContext ctx;
        ctx.parent = &a;
        ctx.other = &b;
        ctx.rng = &rng;
        auto p = cx->propose(ctx);
        QVERIFY(p);
        QVERIFY(p->tunables != a.tunables && p->tunables != b.tunables);
        QVERIFY(parse_tunables(kTemplate).satisfies(p->tunables));  // VEC 8 x BLOCK 512 is excluded
        QCOMPARE(p->parents, (std::vector<std::int64_t>{1, 2}));
    }

    void pattern_expert_prefers_the_bottleneck() {
        auto pe = make_pattern_expert();
        auto pats = patterns();
        Member parent = member(1, 1.0);
        SearchRng rng(9);
        std::set<std::string> tried;
        ProposalContext ctx;
        ctx.parent = &parent;
        ctx.diagnosis_class = DiagnosisClass::Compute;
        ctx.patterns = &pats;
        ctx.tried = &tried;
        ctx.rng = &rng;
        auto p = pe->propose(ctx);
        QVERIFY(p);
        QCOMPARE(p->family, std::string("fam-b"));
        tried.insert(proposal_key(p->source, {}));
        p = pe->propose(ctx);
        QVERIFY(p);
        QCOMPARE(p->family, std::string("fam-a"));
        tried.insert(proposal_key(p->source, {}));
        QVERIFY(!pe->propose(ctx));
    }

    void search_improves_and_is_reproducible() {
        Recorder r1, r2;
        Search s1(config(48), patterns(), r1.hooks());
        s1.add_seeds(seeds());
        SearchResult a = s1.run();
        Search s2(config(48), patterns(), r2.hooks());
        s2.add_seeds(seeds());
        SearchResult b = s2.run();
        QCOMPARE(a.evaluations, 48);
        QVERIFY(a.best);
        QVERIFY2(a.best->fitness > 3.0, std::to_string(a.best->fitness).c_str());  // seeds reach at most 2.0
        QCOMPARE(r1.keys, r2.keys);
        QCOMPARE(a.best->fitness, b.best->fitness);
        QVERIFY(a.outcomes.count("compile_error"));  // the broken pattern was tried and recorded
        QCOMPARE(a.stop_reason.kind, StopKind::EvaluationBudget);
        std::set<std::string> unique(r1.keys.begin(), r1.keys.end());
        QCOMPARE(unique.size(), r1.keys.size());  // nothing evaluated twice
    }

    void resumed_search_continues_where_it_stopped() {
        Recorder straight, first, second;
        Search full(config(48), patterns(), straight.hooks());
        full.add_seeds(seeds());
        full.run();

        Search part(config(24), patterns(), first.hooks());
        part.add_seeds(seeds());
        part.run();
        nlohmann::json saved = nlohmann::json::parse(part.state().dump());
        Search rest(config(48), patterns(), second.hooks());
        rest.restore(saved);
        SearchResult r = rest.run();
        QCOMPARE(r.evaluations, 48);
        std::vector<std::string> joined = first.keys;
        joined.insert(joined.end(), second.keys.begin(), second.keys.end());
        QCOMPARE(joined, straight.keys);
    }

    void failed_parents_are_repaired_or_abandoned_data() {
        QTest::addColumn<int>("islands");
        QTest::newRow("one island") << 1;
        // Four islands keep four children in flight: the parent's repairs proposed before the
        // first results came back count too.
        QTest::newRow("four islands") << 4;
    }

    /** Children of a failed parent are repairs: rewarded for becoming correct, the parent abandoned after 3 failures (its failed ancestors' included). */
    void failed_parents_are_repaired_or_abandoned() {
        QFETCH(int, islands);
        // Nothing can repair this kernel: its children fail, and it is given up.
        Recorder r;
        std::vector<SearchEvent> events;
        std::map<std::int64_t, std::vector<std::int64_t>> parents_of;
        SearchHooks h = r.hooks();
        h.on_event = [&](const SearchEvent& e) { events.push_back(e); };
        h.on_result = [&](const Child& c, const Diagnosis&) { parents_of[c.id] = c.proposal.parents; };
        SearchConfig cfg = config(60);
        cfg.islands.islands = islands;
        Search s(cfg, {}, h);
        Proposal wrong;
        wrong.source = std::string("// ALWAYS_WRONG\n") + kTemplate;
        wrong.family = "wrong";
        wrong.expert = "seed";
        s.add_seeds({wrong});
        SearchResult res = s.run();
        QCOMPARE(res.outcomes["incorrect"], res.evaluations);
        // No failed parent gets more than kMaxFailedRepairs children; those abandoned got exactly that many.
        std::map<std::int64_t, int> children;
        for (const auto& [id, parents] : parents_of)
            if (!parents.empty()) ++children[parents.front()];
        for (const auto& [parent, n] : children) QVERIFY2(n <= kMaxFailedRepairs, std::to_string(parent).c_str());
        int abandoned = 0;
        for (const auto& e : events)
            if (e.kind == EventKind::Log && e.message.find("abandoned failed candidate") != std::string::npos) {
                ++abandoned;
                // Its own failed children, after those of its failed ancestors.
                QVERIFY(children[e.member] >= 1 && children[e.member] <= kMaxFailedRepairs);
            }
        QVERIFY(abandoned >= 1);
        // Failed children carry their parent's count, so a chain of failed repairs of failed
        // repairs is given up too: a node with j failures behind it has at most 3 - j
        // children, 8 evaluations in all from one failed seed (it was the whole budget).
        QVERIFY2(res.evaluations <= 8, std::to_string(res.evaluations).c_str());
        QVERIFY(static_cast<int>(s.state()["abandoned"].size()) >= abandoned);
        Router::Stats tuner = s.router().stats(DiagnosisClass::Incorrect, "tuner");
        QVERIFY(tuner.tries > 0);
        QCOMPARE(tuner.reward_sum, 0.0);

        // A repairable kernel: a child that becomes correct earns the full reward of 1,
        // whatever its speed (here 1x, no "gain" at all).
        Recorder r2;
        Search s2(cfg, {}, r2.hooks());
        Proposal fixable;
        fixable.source = std::string("// WRONG_AT_64\n") + kTemplate;
        fixable.family = "fixable";
        fixable.expert = "seed";
        s2.add_seeds({fixable});
        s2.run();
        Router::Stats repaired = s2.router().stats(DiagnosisClass::Incorrect, "tuner");
        QVERIFY(repaired.improvements >= 1);
        QCOMPARE(repaired.reward_sum, static_cast<double>(repaired.improvements));
    }

    void exhausted_space_ends_cleanly() {
        Recorder r;
        SearchConfig cfg = config(1000);
        Search s(cfg, {}, r.hooks());
        s.add_seeds(seeds());
        SearchResult res = s.run();
        QVERIFY(res.evaluations < 1000);
        QVERIFY2(res.stop_reason.kind == StopKind::Exhausted, to_string(res.stop_reason).c_str());
        QCOMPARE(res.evaluations, static_cast<int>(parse_tunables(kTemplate).enumerate().size()));
    }
};

QTEST_GUILESS_MAIN(TestSearch)
#include "test_search.moc"
