// Retrieval-augmented initialisation: the bundled seed patterns synced into a library,
// retrieved for a task by op class, backend, signature and meaning, ranked by meaning and
// evidence, and broken templates and patterns computing another function left out.
#include <QtTest>

#include <nlohmann/json.hpp>

#include "kf/library.h"
#include "kf/paths.h"
#include "kf/retrieval.h"
#include "kf/task.h"
#include "testsupport.h"

using namespace kf;

class TestRetrieval : public QObject {
    Q_OBJECT

    std::filesystem::path seed_file() { return kftest::source_dir() / "resources" / "library" / "seed.json"; }
    std::filesystem::path tasks() { return kftest::source_dir() / "tasks"; }

    /**
     * The bundled scan task with every name changed (tensors, sizes, the stat), written
     * under a temporary folder: the same function, another entry signature.
     */
    Task renamed_scan(const std::string& tag) {
        Task scan = load_task(kftest::task("level1/scan"));
        nlohmann::json m = nlohmann::json::parse(kftest::read_file(scan.manifest));
        m["name"] = "prefix_sums";
        m["sizes"] = {"n", "m"};
        m["tensors"][0]["name"] = "inp";
        m["tensors"][0]["shape"] = {"n", "m"};
        m["tensors"][1]["name"] = "out";
        m["tensors"][1]["shape"] = {"n", "m"};
        m["work"] = {{"flops", "n * m"}, {"bytes", "8 * n * m"}};
        for (auto& c : m["cases"]) c["sizes"] = {{"n", c["sizes"]["rows"]}, {"m", c["sizes"]["cols"]}};
        m["computation"] = nlohmann::json::parse(R"({"op": "row_scan", "layout": {"rows": "n", "cols": "m"},
            "stats": [{"name": "total", "combine": "sum", "map": "inp"}], "map": "total"})");
        auto dir = kftest::temp_dir(tag);
        kftest::write_file(dir / "task.json", m.dump(2));
        for (const auto& [b, path] : scan.references) kftest::write_file(dir / path.filename(), "#include \"kf_task.h\"\n");
        return load_task(dir);
    }

private slots:
    void signature_is_the_entry_declaration() {
        Task t = load_task(kftest::task("level1/softmax"));
        std::string sig = entry_signature(t, Backend::Cuda);
        QVERIFY2(sig.rfind("extern \"C\" void kf_solve(", 0) == 0, sig.c_str());
        QVERIFY2(sig.find("cudaStream_t") != std::string::npos, sig.c_str());
        QVERIFY(sig.back() == ';');
        QVERIFY(entry_signature(t, Backend::Host).find("cudaStream_t") == std::string::npos);
    }

    void seeds_sync_once_and_keep_evidence() {
        ExperienceLibrary lib = ExperienceLibrary::open(kftest::temp_dir("retr-sync") / "lib.db");
        int added = sync_seed_patterns(lib, seed_file(), tasks());
        QVERIFY2(added >= 50, std::to_string(added).c_str());
        QCOMPARE(sync_seed_patterns(lib, seed_file(), tasks()), 0);  // nothing changed: nothing rewritten
        auto p = lib.pattern_by_name("softmax/warp-per-row");
        QVERIFY(p);
        QCOMPARE(p->provenance, std::string("seed"));
        QCOMPARE(p->op_class, std::string("softmax"));
        lib.record_pattern_use(p->id, true);
        sync_seed_patterns(lib, seed_file(), tasks());
        QCOMPARE(lib.pattern_by_name("softmax/warp-per-row")->successes, std::int64_t{1});
    }

    void retrieval_fits_the_task_and_ranks_by_evidence() {
        ExperienceLibrary lib = ExperienceLibrary::open(kftest::temp_dir("retr-rank") / "lib.db");
        sync_seed_patterns(lib, seed_file(), tasks());
        Task softmax = load_task(kftest::task("level1/softmax"));
        Retrieval cuda = retrieve_patterns(lib, softmax, Backend::Cuda);
        QCOMPARE(cuda.patterns.size(), std::size_t{3});
        for (const auto& p : cuda.patterns) QVERIFY2(p.name.rfind("softmax/", 0) == 0, p.name.c_str());
        Retrieval host = retrieve_patterns(lib, softmax, Backend::Host);
        QCOMPARE(host.patterns.size(), std::size_t{2});
        QVERIFY(host.patterns.front().source.find("cudaStream_t") == std::string::npos);

        // Evidence reorders: the last one, successful three times out of three, comes first.
        std::string last = cuda.patterns.back().name;
        std::int64_t id = lib.pattern_by_name(last)->id;
        for (int i = 0; i < 3; ++i) lib.record_pattern_use(id, true);
        std::string first = cuda.patterns.front().name;
        for (int i = 0; i < 3; ++i) lib.record_pattern_use(lib.pattern_by_name(first)->id, false);
        Retrieval again = retrieve_patterns(lib, softmax, Backend::Cuda);
        QCOMPARE(again.patterns.front().name, last);
        QCOMPARE(again.patterns.back().name, first);
        QVERIFY(again.summary.find("3/3") != std::string::npos);
        QCOMPARE(again.ids.at(again.patterns.front().source), id);

        // A broken template is no longer offered.
        lib.mark_pattern_broken(id, "does not compile");
        Retrieval without = retrieve_patterns(lib, softmax, Backend::Cuda);
        QCOMPARE(without.patterns.size(), std::size_t{2});
        for (const auto& p : without.patterns) QVERIFY(p.name != last);
    }

    /** Retrieval by op class: a pattern written with other parameter names is adapted to the task's entry point. */
    void patterns_are_adapted_to_the_task_signature() {
        ExperienceLibrary lib = ExperienceLibrary::open(kftest::temp_dir("retr-adapt") / "lib.db");
        sync_seed_patterns(lib, seed_file(), tasks());
        Task softmax = load_task(kftest::task("level1/softmax"));
        // The same task with its tensors renamed: no pattern has this signature.
        auto dir = kftest::temp_dir("retr-adapt-task");
        std::string manifest = kftest::read_file(softmax.manifest);
        auto rename = [&](const std::string& from, const std::string& to) {
            for (std::size_t at = manifest.find(from); at != std::string::npos; at = manifest.find(from, at + to.size()))
                manifest.replace(at, from.size(), to);
        };
        rename("\"name\": \"x\"", "\"name\": \"logits\"");
        rename("\"name\": \"y\"", "\"name\": \"probs\"");
        // Its computation (written with the old names) is beside the point here.
        nlohmann::json m = nlohmann::json::parse(manifest);
        m.erase("computation");
        kftest::write_file(dir / "task.json", m.dump(2));
        for (const auto& [b, path] : softmax.references)
            kftest::write_file(dir / path.filename(), "#include \"kf_task.h\"\n");
        Task renamed = load_task(dir);
        Retrieval host = retrieve_patterns(lib, renamed, Backend::Host);
        QCOMPARE(host.patterns.size(), retrieve_patterns(lib, softmax, Backend::Host).patterns.size());
        QVERIFY(!host.patterns.empty());
        for (const auto& p : host.patterns) {
            QVERIFY(host.adapted.count(p.source));
            QVERIFY2(p.source.find("kf_pattern_solve(logits, probs,") != std::string::npos, p.source.c_str());
            QVERIFY(host.ids.count(p.source));
        }
        QVERIFY(host.summary.find("adapted to the entry point") != std::string::npos);
        // Types must agree position by position.
        QVERIFY(!adapt_to_signature("x", "extern \"C\" void kf_solve(const float* x, float* y, int n);",
                                    "extern \"C\" void kf_solve(const float* a, float* b, long long n);"));
        auto a = adapt_to_signature("extern \"C\" void kf_solve(const float* x, float* y, int n) {}",
                                    "extern \"C\" void kf_solve(const float* x, float* y, int n);",
                                    "extern \"C\" void kf_solve(const float* a, float* b, int m);");
        QVERIFY(a);
        QVERIFY2(a->find("void kf_pattern_solve(const float* x") != std::string::npos, a->c_str());
        QVERIFY2(a->find("extern \"C\" void kf_solve(const float* a, float* b, int m) { kf_pattern_solve(a, b, m); }") !=
                     std::string::npos,
                 a->c_str());
    }

    /** The meaning names tensors, sizes, params and stats by position, not by name. */
    void meaning_is_independent_of_names() {
        Task scan = load_task(kftest::task("level1/scan"));
        Task cummax = load_task(kftest::data("tasks/row_cummax"));
        Task renamed = renamed_scan("retr-meaning-task");
        QVERIFY(scan.computation && cummax.computation && renamed.computation);
        const std::string key = computation_meaning(scan, *scan.computation);
        QCOMPARE(key, std::string("row_scan rows=s0 cols=s1; a0 = sum((t0)); t1 = (a0); in t0:full"));
        QCOMPARE(computation_meaning(renamed, *renamed.computation), key);
        QCOMPARE(computation_meaning(cummax, *cummax.computation),
                 std::string("row_scan rows=s0 cols=s1; a0 = max(fabsf((t0))); t1 = (a0); in t0:full"));
        QCOMPARE(task_meaning(renamed, Backend::Host), key);
        // Params, per-column inputs and the layout's size expressions are canonical too.
        Task layernorm = load_task(kftest::task("level1/layernorm"));
        QVERIFY(layernorm.computation);
        const std::string ln = computation_meaning(layernorm, *layernorm.computation);
        QVERIFY2(ln.find("(p0)") != std::string::npos && ln.find("t1:per_column") != std::string::npos, ln.c_str());
        Computation wider = *layernorm.computation;
        wider.cols = layernorm.size_names.at(1) + " * 2";
        QVERIFY2(computation_meaning(layernorm, wider).find("cols=s1*2;") != std::string::npos,
                 computation_meaning(layernorm, wider).c_str());
        // A stencil's neighbour reads keep their offsets, its border and radius count; a
        // histogram's bins are canonical sizes.
        Task stencil = load_task(kftest::task("level1/stencil2d"));
        QVERIFY(stencil.computation);
        const std::string st = computation_meaning(stencil, *stencil.computation);
        QVERIFY2(st.rfind("stencil rows=s0 cols=s1 radius=1; t1 = ", 0) == 0, st.c_str());
        QVERIFY2(st.find("(t0@-1,0)") != std::string::npos && st.find("(t0@0,1)") != std::string::npos, st.c_str());
        QVERIFY2(st.find("; border = (t0); in t0:full") != std::string::npos, st.c_str());
        Task blur = load_task(kftest::data("tasks/blur3x3"));
        QVERIFY(blur.computation);
        QVERIFY(computation_meaning(blur, *blur.computation) != st);
        // Reads at an index keep their index (sizes by position), and a pad counts.
        Task dw = load_task(kftest::data("tasks/dwconv1d"));
        QVERIFY(dw.computation);
        const std::string dwm = computation_meaning(dw, *dw.computation);
        QVERIFY2(dwm.rfind("stencil rows=s0*s1 cols=s2 radius=2; t3 = ", 0) == 0, dwm.c_str());
        QVERIFY2(dwm.find("(t1[(((row())%((longlong)s1))*5LL)])") != std::string::npos, dwm.c_str());
        QVERIFY2(dwm.find("(t0@0,-2)") != std::string::npos, dwm.c_str());
        QVERIFY2(dwm.find("; pad = zero; in t0:full, t1:indexed, t2:indexed") != std::string::npos, dwm.c_str());
        Task smooth = load_task(kftest::data("tasks/smooth_clamp"));
        QVERIFY(smooth.computation);
        QVERIFY2(computation_meaning(smooth, *smooth.computation).find("; pad = clamp;") != std::string::npos,
                 computation_meaning(smooth, *smooth.computation).c_str());
        Task buckets = load_task(kftest::data("tasks/bucket_count"));
        QVERIFY(buckets.computation);
        const std::string hist = computation_meaning(buckets, *buckets.computation);
        QVERIFY2(hist.rfind("histogram bins=s", 0) == 0, hist.c_str());
        // A column reduction's output is its epilogue.
        Task col_std = load_task(kftest::data("tasks/col_std"));
        QVERIFY(col_std.computation);
        QCOMPARE(computation_meaning(col_std, *col_std.computation),
                 std::string("col_reduce rows=s0 cols=s1; a0 = sum((t0)); a1 = sum((((t0) - ((a0) / (s0))) * ((t0) - ((a0) / (s0))))); "
                             "t1 = sqrtf(((a1) / (s0))); in t0:full"));
        // No op, no meaning; a task without a computation (none declared, none derivable) has none.
        QCOMPARE(computation_meaning(scan, Computation{}), std::string());
        Task copy = load_task(kftest::data("tasks/opaque_copy"));
        QCOMPARE(task_meaning(copy, Backend::Host), std::string());
    }

    void seeds_carry_their_tasks_meaning() {
        ExperienceLibrary lib = ExperienceLibrary::open(kftest::temp_dir("retr-seed-meaning") / "lib.db");
        sync_seed_patterns(lib, seed_file(), tasks());
        Task scan = load_task(kftest::task("level1/scan"));
        auto p = lib.pattern_by_name("scan/warp-per-row");
        QVERIFY(p);
        QCOMPARE(p->meaning, computation_meaning(scan, *scan.computation));
        // A seed pattern stored without its meaning (a library from before meanings) gets it
        // on the next sync, its evidence kept.
        Pattern old = *p;
        old.meaning.clear();
        lib.add_pattern(old);
        lib.record_pattern_use(p->id, true);
        QCOMPARE(sync_seed_patterns(lib, seed_file(), tasks()), 1);
        p = lib.pattern_by_name("scan/warp-per-row");
        QCOMPARE(p->meaning, computation_meaning(scan, *scan.computation));
        QCOMPARE(p->successes, std::int64_t{1});
    }

    /**
     * A running max (row_cummax) and the bundled running sum (level1/scan) share op class and
     * entry signature: the sum's patterns compute another function and are left out; the scan
     * task itself, and a copy of it with every name changed, still get them.
     */
    void patterns_computing_another_function_are_left_out() {
        ExperienceLibrary lib = ExperienceLibrary::open(kftest::temp_dir("retr-other") / "lib.db");
        sync_seed_patterns(lib, seed_file(), tasks());
        Task cummax = load_task(kftest::data("tasks/row_cummax"));
        Task scan = load_task(kftest::task("level1/scan"));
        QCOMPARE(entry_signature(cummax, Backend::Host), entry_signature(scan, Backend::Host));
        for (Backend b : {Backend::Host, Backend::Cuda}) {
            const std::size_t seeds = b == Backend::Host ? 2 : 3;
            Retrieval r = retrieve_patterns(lib, cummax, b);
            QVERIFY2(r.patterns.empty(), r.summary.c_str());
            QCOMPARE(r.other_meaning, static_cast<int>(seeds));
            QVERIFY2(r.summary.find(std::to_string(seeds) + " left out: they compute another function") != std::string::npos,
                     r.summary.c_str());

            Retrieval own = retrieve_patterns(lib, scan, b);
            QCOMPARE(own.patterns.size(), seeds);
            QCOMPARE(own.same_meaning, static_cast<int>(seeds));
            QCOMPARE(own.other_meaning, 0);
            for (const auto& p : own.patterns) QVERIFY2(p.name.rfind("scan/", 0) == 0, p.name.c_str());
            QVERIFY2(own.summary.find("computing the same function first") != std::string::npos, own.summary.c_str());

            Task renamed = renamed_scan(std::string("retr-other-task-") + std::string(to_string(b)));
            Retrieval adapted = retrieve_patterns(lib, renamed, b);
            QCOMPARE(adapted.patterns.size(), seeds);
            QCOMPARE(adapted.same_meaning, static_cast<int>(seeds));
            for (const auto& p : adapted.patterns) {
                QVERIFY(adapted.adapted.count(p.source));
                QVERIFY2(p.source.find("kf_pattern_solve(inp, out, n, m") != std::string::npos, p.source.c_str());
            }
        }
    }

    /** Same meaning first, then unknown meaning, each by evidence; another meaning not at all. */
    void same_meaning_ranks_first() {
        ExperienceLibrary lib = ExperienceLibrary::open(kftest::temp_dir("retr-same-first") / "lib.db");
        sync_seed_patterns(lib, seed_file(), tasks());
        Task scan = load_task(kftest::task("level1/scan"));
        Pattern base = *lib.pattern_by_name("scan/host-omp-rows");
        auto store = [&](const std::string& name, const std::string& meaning, int successes) {
            Pattern p = base;
            p.id = 0;
            p.name = name;
            p.provenance = "user";
            p.meaning = meaning;
            p.applications = successes;
            p.successes = successes;
            return lib.add_pattern(p);
        };
        store("scan/unknown-but-proven", "", 9);
        store("scan/cummin-proven", "row_scan rows=s0 cols=s1; a0 = min((t0)); t1 = (a0); in t0:full", 9);
        Retrieval r = retrieve_patterns(lib, scan, Backend::Host);
        QCOMPARE(r.patterns.size(), std::size_t{3});
        QCOMPARE(r.same_meaning, 2);
        QCOMPARE(r.other_meaning, 1);
        QVERIFY(r.patterns[0].name.rfind("scan/host-", 0) == 0);
        QVERIFY(r.patterns[1].name.rfind("scan/host-", 0) == 0);
        QCOMPARE(r.patterns[2].name, std::string("scan/unknown-but-proven"));
        // Within the same meaning, evidence decides.
        lib.record_pattern_use(lib.pattern_by_name(r.patterns[1].name)->id, true);
        Retrieval again = retrieve_patterns(lib, scan, Backend::Host);
        QCOMPARE(again.patterns[0].name, r.patterns[1].name);
        // The limit keeps the best: the same-meaning ones.
        Retrieval one = retrieve_patterns(lib, scan, Backend::Host, 1);
        QCOMPARE(one.patterns.size(), std::size_t{1});
        QCOMPARE(one.patterns[0].name, again.patterns[0].name);
        // A task whose meaning is unknown takes every pattern, by evidence alone.
        Task unknown = renamed_scan("retr-same-first-task");
        unknown.computation.reset();
        Retrieval all = retrieve_patterns(lib, unknown, Backend::Host);
        QCOMPARE(all.patterns.size(), std::size_t{4});
        QCOMPARE(all.other_meaning, 0);
        QVERIFY(all.patterns[0].name == "scan/unknown-but-proven" || all.patterns[0].name == "scan/cummin-proven");
    }

    void no_matching_pattern_says_so() {
        ExperienceLibrary lib = ExperienceLibrary::open(kftest::temp_dir("retr-none") / "lib.db");
        sync_seed_patterns(lib, seed_file(), tasks());
        Task t = load_task(kftest::data("tasks/scale_add"));
        Retrieval r = retrieve_patterns(lib, t, Backend::Host);
        QVERIFY(r.patterns.empty());
        QVERIFY2(r.summary.find("no library pattern matches task scale_add") != std::string::npos, r.summary.c_str());
    }
};

QTEST_GUILESS_MAIN(TestRetrieval)
#include "test_retrieval.moc"
