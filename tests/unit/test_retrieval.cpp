// Retrieval-augmented initialisation: the bundled seed patterns synced into a library,
// retrieved for a task by op class, backend and signature, ranked by evidence, and broken
// templates left out.
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
