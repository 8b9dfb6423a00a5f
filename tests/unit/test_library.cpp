// The experience library: patterns and their retrieval, the librarian's insights, JSON
// exchange, and refusal of foreign, corrupt or newer files without touching them.
#include <QtTest>

#include <sqlite3.h>

#include <nlohmann/json.hpp>

#include "kf/library.h"
#include "testsupport.h"

using nlohmann::json;

namespace {

kf::Pattern make_pattern(const std::string& name, const std::string& op_class = "softmax",
                         const std::string& backend = "cuda") {
    kf::Pattern p;
    p.name = name;
    p.op_class = op_class;
    p.backend = backend;
    p.family = op_class + "/warp-per-row";
    p.bound_tags = {"memory"};
    p.signature = "extern \"C\" void kf_solve(const float* x, float* y, int rows, int cols);";
    p.description = "One warp reduces each row.";
    p.source = "// @kf tunable BLOCK 128 {64,128,256}\n__global__ void k() {}\n";
    p.provenance = "seed";
    return p;
}

kf::Improvement improvement(double gain, bool success, const std::string& expert = "memory",
                            const std::string& candidate = "") {
    kf::Improvement imp;
    imp.op_class = "softmax";
    imp.bound_before = "memory";
    imp.status_before = "ok";
    imp.expert = expert;
    imp.change = "vectorised loads";
    imp.gain = gain;
    imp.run_id = "r1";
    imp.candidate_id = candidate;
    imp.success = success;
    return imp;
}

std::vector<std::string> names(const std::vector<kf::Pattern>& ps) {
    std::vector<std::string> out;
    for (const auto& p : ps) out.push_back(p.name);
    return out;
}

// Runs SQL against a library file directly, bypassing the library.
void raw_exec(const std::filesystem::path& db, const std::string& sql) {
    sqlite3* h = nullptr;
    QCOMPARE(sqlite3_open(db.c_str(), &h), SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &err);
    const std::string msg = err ? err : "";
    sqlite3_free(err);
    sqlite3_close(h);
    QVERIFY2(rc == SQLITE_OK, msg.c_str());
}

std::int64_t raw_int(const std::filesystem::path& db, const std::string& sql) {
    sqlite3* h = nullptr;
    sqlite3_open(db.c_str(), &h);
    sqlite3_stmt* s = nullptr;
    std::int64_t v = -1;
    if (sqlite3_prepare_v2(h, sql.c_str(), -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(h);
    return v;
}

/** Asserts that opening `file` raises LibraryError and leaves the bytes as they were. */
void expect_refused(const std::filesystem::path& file, const char* expected_words) {
    const std::string before = kftest::read_file(file);
    bool thrown = false;
    try {
        kf::ExperienceLibrary::open(file);
    } catch (const kf::LibraryError& e) {
        thrown = true;
        QVERIFY2(std::string(e.what()).find(expected_words) != std::string::npos, e.what());
    }
    QVERIFY(thrown);
    QVERIFY(kftest::read_file(file) == before);
}

}  // namespace

class TestLibrary : public QObject {
    Q_OBJECT

private:
    std::filesystem::path dir_;
    int n_ = 0;
    kf::ExperienceLibrary fresh() {
        return kf::ExperienceLibrary::open(dir_ / ("lib" + std::to_string(++n_)) / "library.db");
    }

private slots:
    void initTestCase() { dir_ = kftest::temp_dir("library"); }

    void user_library_path_follows_xdg() {
        const QByteArray old = qgetenv("XDG_DATA_HOME");
        qputenv("XDG_DATA_HOME", "/tmp/xdg-test");
        QCOMPARE(QString::fromStdString(kf::ExperienceLibrary::user_library_path().string()),
                 QStringLiteral("/tmp/xdg-test/kernel-foundry/library.db"));
        qunsetenv("XDG_DATA_HOME");
        QVERIFY(kf::ExperienceLibrary::user_library_path().string().find(".local/share/kernel-foundry") !=
                std::string::npos);
        if (!old.isEmpty()) qputenv("XDG_DATA_HOME", old);
    }

    void pattern_upsert_keeps_id() {
        auto lib = fresh();
        auto id = lib.add_pattern(make_pattern("softmax-warp"));
        QVERIFY(id > 0);
        auto p = make_pattern("softmax-warp");
        p.description = "Updated description.";
        QCOMPARE(lib.add_pattern(p), id);
        auto got = lib.pattern(id);
        QVERIFY(got);
        QCOMPARE(got->description, std::string("Updated description."));
        QVERIFY(!got->created.empty());
        QCOMPARE(lib.pattern_by_name("softmax-warp")->id, id);
        QVERIFY(!lib.pattern_by_name("nope"));
        QCOMPARE(lib.patterns().size(), std::size_t(1));
        // The full-text index follows the update: the old words are gone.
        kf::PatternQuery q;
        q.text = "reduces";
        QVERIFY(lib.patterns(q).empty());
        q.text = "updated";
        QCOMPARE(lib.patterns(q).size(), std::size_t(1));
        p.backend = "opencl";
        QVERIFY_THROWS_EXCEPTION(kf::LibraryError, lib.add_pattern(p));
    }

    void pattern_retrieval_filters() {
        auto lib = fresh();
        lib.add_pattern(make_pattern("softmax-warp"));
        auto host = make_pattern("softmax-host", "softmax", "host");
        host.bound_tags = {"compute"};
        host.description = "Plain loops over rows with a blocked maximum.";
        host.source = "void kf_solve() { /* horner polynomial */ }";
        lib.add_pattern(host);
        auto gemm = make_pattern("gemm-tiled", "gemm");
        gemm.bound_tags = {"compute", "occupancy"};
        gemm.signature = "extern \"C\" void kf_solve(const float* a, const float* b, float* c, int n);";
        gemm.description = "Shared-memory tiles.";
        lib.add_pattern(gemm);

        kf::PatternQuery q;
        q.op_class = "softmax";
        QCOMPARE(lib.patterns(q).size(), std::size_t(2));
        q.backend = "host";
        QCOMPARE(names(lib.patterns(q)), std::vector<std::string>{"softmax-host"});
        q = {};
        q.bound = "compute";
        QCOMPARE(lib.patterns(q).size(), std::size_t(2));
        q.bound = "occupancy";
        QCOMPARE(names(lib.patterns(q)), std::vector<std::string>{"gemm-tiled"});
        q = {};
        // Whitespace differences in the signature do not matter.
        q.signature = "extern \"C\"   void kf_solve(const float* x, float* y,\n int rows, int cols);";
        QCOMPARE(lib.patterns(q).size(), std::size_t(2));
        q = {};
        q.text = "blocked";  // a word of a description
        QCOMPARE(names(lib.patterns(q)), std::vector<std::string>{"softmax-host"});
        q.text = "horner";  // a word of a source
        QCOMPARE(names(lib.patterns(q)), std::vector<std::string>{"softmax-host"});
        q.text = "warp-per-row";  // query syntax characters are taken as plain words
        QCOMPARE(lib.patterns(q).size(), std::size_t(3));
        q.text = "occupancy";  // a tag
        QCOMPARE(names(lib.patterns(q)), std::vector<std::string>{"gemm-tiled"});
        q.text = "nothing-like-this";
        QVERIFY(lib.patterns(q).empty());
        q = {};
        q.limit = 1;
        QCOMPARE(lib.patterns(q).size(), std::size_t(1));
    }

    void pattern_ranking_by_evidence() {
        auto lib = fresh();
        auto a = lib.add_pattern(make_pattern("a"));
        auto b = lib.add_pattern(make_pattern("b"));
        auto c = lib.add_pattern(make_pattern("c"));
        for (int i = 0; i < 4; ++i) lib.record_pattern_use(b, true);                 // 5/6
        for (int i = 0; i < 4; ++i) lib.record_pattern_use(a, i == 0);               // 2/6
        QCOMPARE(names(lib.patterns()), (std::vector<std::string>{"b", "c", "a"}));  // c: 1/2
        QCOMPARE(lib.pattern(b)->applications, std::int64_t(4));
        QCOMPARE(lib.pattern(b)->successes, std::int64_t(4));
        Q_UNUSED(c);
        QVERIFY_THROWS_EXCEPTION(kf::LibraryError, lib.record_pattern_use(999, true));
    }

    void broken_patterns_are_kept_but_not_retrieved() {
        auto lib = fresh();
        auto id = lib.add_pattern(make_pattern("old"));
        lib.add_pattern(make_pattern("new"));
        lib.mark_pattern_broken(id, "nvcc: identifier \"__shfl\" is undefined");
        QCOMPARE(names(lib.patterns()), std::vector<std::string>{"new"});
        kf::PatternQuery q;
        q.status = "broken";
        auto broken = lib.patterns(q);
        QCOMPARE(broken.size(), std::size_t(1));
        QCOMPARE(broken[0].broken_reason, std::string("nvcc: identifier \"__shfl\" is undefined"));
        q.status.clear();
        QCOMPARE(lib.patterns(q).size(), std::size_t(2));
        lib.delete_pattern(id);
        QVERIFY(!lib.pattern(id));
        QCOMPARE(lib.patterns(q).size(), std::size_t(1));
        QVERIFY_THROWS_EXCEPTION(kf::LibraryError, lib.delete_pattern(id));
    }

    void librarian_proposes_after_three_successes() {
        auto lib = fresh();
        lib.record_improvement(improvement(1.2, true, "memory", "c1"));
        lib.record_improvement(improvement(1.5, true, "memory", "c2"));
        QVERIFY(lib.insights().empty());
        lib.record_improvement(improvement(1.3, true, "memory", "c3"));
        auto all = lib.insights();
        QCOMPARE(all.size(), std::size_t(1));
        const auto& in = all[0];
        QCOMPARE(in.status, std::string("proposed"));
        QCOMPARE(in.condition.op_class, std::string("softmax"));
        QCOMPARE(in.condition.bound, std::string("memory"));
        QCOMPARE(in.condition.expert, std::string("memory"));
        QCOMPARE(in.evidence.applications, std::int64_t(3));
        QCOMPARE(in.evidence.successes, std::int64_t(3));
        QCOMPARE(in.evidence.median_gain(), 1.3);
        QVERIFY2(in.action.find("median gain 1.30x") != std::string::npos, in.action.c_str());
        QCOMPARE(in.provenance.candidate_ids, (std::vector<std::string>{"c1", "c2", "c3"}));
        QCOMPARE(in.provenance.run_ids, std::vector<std::string>{"r1"});
        QCOMPARE(in.weight, 4.0 / 5.0 * 1.3);
        // A small gain is not enough.
        for (int i = 0; i < 3; ++i) lib.record_improvement(improvement(1.01, true, "fusion"));
        QCOMPARE(lib.insights().size(), std::size_t(1));
        // More evidence updates the same insight.
        lib.record_improvement(improvement(2.0, true, "memory"));
        QCOMPARE(lib.insights().size(), std::size_t(1));
        QCOMPARE(lib.insights()[0].evidence.applications, std::int64_t(4));
        QCOMPARE(lib.insights()[0].evidence.median_gain(), 1.4);
    }

    void librarian_keeps_user_decisions() {
        auto lib = fresh();
        for (int i = 0; i < 3; ++i) lib.record_improvement(improvement(1.5, true));
        auto id = lib.insights()[0].id;
        lib.set_insight_status(id, "rejected");
        for (int i = 0; i < 3; ++i) lib.record_improvement(improvement(1.6, true));
        auto in = lib.insight(id);
        QCOMPARE(in->status, std::string("rejected"));
        QCOMPARE(in->evidence.applications, std::int64_t(6));
        QCOMPARE(lib.insights().size(), std::size_t(1));
        kf::InsightQuery q;
        q.status = "proposed";
        QVERIFY(lib.insights(q).empty());
        q.status = "rejected";
        QCOMPARE(lib.insights(q).size(), std::size_t(1));
    }

    void failing_group_lowers_weight() {
        auto lib = fresh();
        for (int i = 0; i < 3; ++i) lib.record_improvement(improvement(1.5, true));
        const auto id = lib.insights()[0].id;
        lib.set_insight_status(id, "approved");
        // A broader user insight covering every expert on memory-bound softmax.
        kf::Insight broad;
        broad.condition = {"softmax", "memory", "", ""};
        broad.action = "coalesce the loads first";
        broad.evidence = {4, 4, {1.4, 1.4, 1.4, 1.4}, 0};
        const auto broad_id = lib.add_insight(broad);
        const double own_before = lib.insight(id)->weight;
        const double broad_before = lib.insight(broad_id)->weight;
        QCOMPARE(broad_before, 5.0 / 6.0 * 1.4);
        for (int i = 0; i < 20; ++i) lib.record_improvement(improvement(0.8, false));  // 3/23
        auto own = lib.insight(id);
        QVERIFY(own->weight < own_before / 3);
        QVERIFY(own->weight >= 0.05);
        QCOMPARE(own->status, std::string("approved"));
        auto b = lib.insight(broad_id);
        QVERIFY(b->evidence.failures > 0);
        QVERIFY(b->weight < broad_before);
        // Another expert's failing group lowers the broad insight too, but never below 0.05.
        for (int i = 0; i < 300; ++i) lib.record_improvement(improvement(0.9, false, "fusion"));
        QVERIFY(lib.insight(broad_id)->weight >= 0.05);
        QCOMPARE(lib.insight(broad_id)->weight, 0.05);
        QCOMPARE(kf::insight_weight({100, 0, {}, 1000}), 0.05);
    }

    void insight_edit_approve_delete() {
        auto lib = fresh();
        kf::Insight in;
        in.condition = {"gemm", "compute", "", "tensor-core"};
        in.action = "use mma.sync tiles";
        in.expert = "tensor-core";
        const auto id = lib.add_insight(in);
        lib.set_insight_status(id, "approved");
        lib.update_insight_action(id, "use wmma fragments of 16x16x16");
        auto got = lib.insight(id);
        QCOMPARE(got->status, std::string("approved"));
        QCOMPARE(got->action, std::string("use wmma fragments of 16x16x16"));
        kf::InsightQuery q;
        q.text = "WMMA";
        QCOMPARE(lib.insights(q).size(), std::size_t(1));
        q = {};
        q.expert = "tensor-core";
        q.op_class = "gemm";
        q.bound = "compute";
        QCOMPARE(lib.insights(q).size(), std::size_t(1));
        q.bound = "memory";
        QVERIFY(lib.insights(q).empty());
        QVERIFY_THROWS_EXCEPTION(kf::LibraryError, lib.set_insight_status(id, "maybe"));
        QVERIFY_THROWS_EXCEPTION(kf::LibraryError, lib.update_insight_action(id, ""));
        lib.delete_insight(id);
        QVERIFY(!lib.insight(id));
        QVERIFY_THROWS_EXCEPTION(kf::LibraryError, lib.delete_insight(id));
    }

    void export_import_round_trip() {
        auto lib = fresh();
        auto a = lib.add_pattern(make_pattern("softmax-warp"));
        lib.add_pattern(make_pattern("gemm-tiled", "gemm", "host"));
        lib.record_pattern_use(a, true);
        lib.mark_pattern_broken(lib.add_pattern(make_pattern("old")), "does not compile");
        auto meant = make_pattern("row-max");
        meant.meaning = "row_reduce rows=s0 cols=s1; a0 = max((t0)); t1 = (a0); in t0:full";
        lib.add_pattern(meant);
        for (int i = 0; i < 3; ++i) lib.record_improvement(improvement(1.5 + i * 0.1, true, "memory", "c"));
        lib.record_improvement(improvement(0.7, false, "fusion"));
        lib.set_insight_status(lib.insights()[0].id, "approved");
        const json exported = lib.export_json();
        QCOMPARE(exported["patterns"].size(), std::size_t(4));
        QCOMPARE(exported["patterns"][3]["meaning"].get<std::string>(), meant.meaning);
        QCOMPARE(exported["insights"].size(), std::size_t(1));
        QCOMPARE(exported["improvements"].size(), std::size_t(4));

        auto copy = fresh();
        // Through text, as a file would carry it.
        auto report = copy.import_json(json::parse(exported.dump(2)));
        QVERIFY(report.skipped.empty());
        QCOMPARE(report.patterns_imported, 4);
        QCOMPARE(copy.pattern_by_name("row-max")->meaning, meant.meaning);
        QCOMPARE(copy.pattern_by_name("softmax-warp")->meaning, std::string());
        QCOMPARE(report.insights_imported, 1);
        QCOMPARE(report.improvements_imported, 4);
        QCOMPARE(copy.export_json(), exported);
        QCOMPARE(copy.insights()[0].weight, lib.insights()[0].weight);
        // Importing again: patterns update in place, the insight is reported as present.
        report = copy.import_json(exported);
        kf::PatternQuery any;
        any.status.clear();
        QCOMPARE(copy.patterns(any).size(), std::size_t(4));
        QCOMPARE(report.skipped.size(), std::size_t(1));
        // An export from before meanings has no "meaning": its patterns' meaning is unknown.
        json older = exported;
        for (auto& p : older["patterns"]) p.erase("meaning");
        auto third = fresh();
        QCOMPARE(third.import_json(older).patterns_imported, 4);
        QCOMPARE(third.pattern_by_name("row-max")->meaning, std::string());
    }

    void import_reports_malformed_entries() {
        auto lib = fresh();
        json j = json::parse(R"({
          "format": "kernel-foundry-library", "version": 1,
          "patterns": [
            {"name": "ok", "backend": "cuda", "source": "x"},
            {"backend": "cuda", "source": "x"},
            {"name": "bad-backend", "backend": "metal", "source": "x"},
            {"name": "bad-tags", "backend": "host", "source": "x", "bound_tags": "memory"},
            42
          ],
          "insights": [
            {"action": "try it", "condition": {"op_class": "gemm"}},
            {"condition": {"op_class": "gemm"}},
            {"action": "x", "status": "maybe"},
            {"action": "y", "evidence": {"applications": -1}}
          ],
          "improvements": {"not": "an array"}
        })");
        auto report = lib.import_json(j);
        QCOMPARE(report.patterns_imported, 1);
        QCOMPARE(report.insights_imported, 1);
        QCOMPARE(report.improvements_imported, 0);
        QCOMPARE(report.skipped.size(), std::size_t(8));
        auto has = [&](const std::string& s) {
            for (const auto& r : report.skipped)
                if (r.find(s) != std::string::npos) return true;
            return false;
        };
        QVERIFY(has("patterns[1]: missing \"name\""));
        QVERIFY(has("patterns[2]: \"backend\" must be cuda or host"));
        QVERIFY(has("patterns[3]: \"bound_tags\" must be an array of strings"));
        QVERIFY(has("patterns[4]: not an object"));
        QVERIFY(has("insights[1]: missing \"action\""));
        QVERIFY(has("insights[2]: \"status\""));
        QVERIFY(has("insights[3]: \"applications\""));
        QVERIFY(has("improvements: not an array"));
        QVERIFY(lib.pattern_by_name("ok"));
        QVERIFY_THROWS_EXCEPTION(kf::LibraryError, lib.import_json(json::array()));
        QVERIFY_THROWS_EXCEPTION(kf::LibraryError, lib.import_json(json{{"format", "other"}, {"version", 1}}));
        QVERIFY_THROWS_EXCEPTION(kf::LibraryError,
                                 lib.import_json(json{{"format", "kernel-foundry-library"}, {"version", 99}}));
    }

    void reopening_keeps_data() {
        const auto file = dir_ / "reopen" / "library.db";
        {
            auto lib = kf::ExperienceLibrary::open(file);
            lib.add_pattern(make_pattern("kept"));
        }
        auto lib = kf::ExperienceLibrary::open(file);
        QVERIFY(lib.pattern_by_name("kept"));
        // An empty file is taken as a new library.
        const auto empty = dir_ / "empty.db";
        kftest::write_file(empty, "");
        auto e = kf::ExperienceLibrary::open(empty);
        QVERIFY(e.patterns().empty());
    }

    /** A library written by a version-1 build opens, migrates to the current schema and keeps its patterns. */
    void version1_library_migrates_keeping_patterns() {
        const auto file = dir_ / "v1" / "library.db";
        {
            auto lib = kf::ExperienceLibrary::open(file);
            auto p = make_pattern("kept");
            auto id = lib.add_pattern(p);
            lib.record_pattern_use(id, true);
            lib.add_pattern(make_pattern("also-kept", "gemm", "host"));
        }
        // Back to what a version-1 build wrote: no meaning column.
        raw_exec(file, "ALTER TABLE patterns DROP COLUMN meaning; PRAGMA user_version = 1;");
        QCOMPARE(raw_int(file, "SELECT count(*) FROM pragma_table_info('patterns') WHERE name = 'meaning'"), std::int64_t(0));
        {
            auto lib = kf::ExperienceLibrary::open(file);
            QCOMPARE(raw_int(file, "PRAGMA user_version"), std::int64_t(kf::kLibrarySchemaVersion));
            QCOMPARE(kf::kLibrarySchemaVersion, 2);
            auto kept = lib.pattern_by_name("kept");
            QVERIFY(kept);
            QCOMPARE(kept->meaning, std::string());
            QCOMPARE(kept->successes, std::int64_t(1));
            QCOMPARE(kept->source, make_pattern("kept").source);
            QVERIFY(lib.pattern_by_name("also-kept"));
            kf::PatternQuery words;
            words.text = "warp";
            QCOMPARE(names(lib.patterns(words)), (std::vector<std::string>{"kept", "also-kept"}));
            kept->meaning = "elementwise; t1 = (t0); in t0:full";
            lib.add_pattern(*kept);
        }
        auto lib = kf::ExperienceLibrary::open(file);
        QCOMPARE(lib.pattern_by_name("kept")->meaning, std::string("elementwise; t1 = (t0); in t0:full"));
    }

    void layered_library_reads_overlay_first() {
        const auto root = dir_ / "layered";
        kf::LayeredLibrary lib(root / "project.db", root / "user.db");
        QVERIFY(lib.has_overlay());
        auto shared = make_pattern("shared");
        shared.description = "user version";
        lib.layer(kf::LayeredLibrary::Layer::User).add_pattern(shared);
        lib.layer(kf::LayeredLibrary::Layer::User).add_pattern(make_pattern("user-only"));
        shared.description = "project version";
        lib.layer(kf::LayeredLibrary::Layer::Overlay).add_pattern(shared);
        auto ps = lib.patterns();
        QCOMPARE(ps.size(), std::size_t(2));
        QCOMPARE(ps[0].description, std::string("project version"));
        QCOMPARE(ps[1].name, std::string("user-only"));
        QCOMPARE(lib.pattern_by_name("shared")->description, std::string("project version"));
        QVERIFY(lib.pattern_by_name("user-only"));

        kf::LayeredLibrary user_only({}, root / "user.db");
        QVERIFY(!user_only.has_overlay());
        QCOMPARE(user_only.pattern_by_name("shared")->description, std::string("user version"));
        QCOMPARE(&user_only.layer(kf::LayeredLibrary::Layer::Overlay),
                 &user_only.layer(kf::LayeredLibrary::Layer::User));
    }

    void foreign_corrupt_and_newer_files_are_refused() {
        const auto text = dir_ / "notes.db";
        kftest::write_file(text,
                           "these are my notes, not a database; they are long enough to fill a header. "
                           "more words, more words, more words, more words, more words.\n");
        expect_refused(text, "not a Kernel Foundry library");

        // Another program's SQLite database.
        const auto foreign = dir_ / "foreign.db";
        { auto lib = kf::ExperienceLibrary::open(foreign); }
        {
            // Rewrite the application_id in the header to look like someone else's file.
            std::string bytes = kftest::read_file(foreign);
            bytes[68] = 0x12;
            bytes[69] = 0x34;
            kftest::write_file(foreign, bytes);
        }
        expect_refused(foreign, "not a Kernel Foundry library");

        // A newer schema.
        const auto newer = dir_ / "newer.db";
        {
            auto lib = kf::ExperienceLibrary::open(newer);
            lib.add_pattern(make_pattern("p"));
        }
        {
            std::string bytes = kftest::read_file(newer);
            bytes[60] = 0;
            bytes[61] = 0;
            bytes[62] = 0;
            bytes[63] = 99;
            kftest::write_file(newer, bytes);
        }
        expect_refused(newer, "newer");

        // A library whose pages after the header were overwritten.
        const auto corrupt = dir_ / "corrupt.db";
        {
            auto lib = kf::ExperienceLibrary::open(corrupt);
            for (int i = 0; i < 20; ++i) lib.add_pattern(make_pattern("p" + std::to_string(i)));
        }
        {
            std::string bytes = kftest::read_file(corrupt);
            QVERIFY(bytes.size() > 8192);
            for (std::size_t i = 4096; i < bytes.size(); ++i) bytes[i] = char(0xA5);
            kftest::write_file(corrupt, bytes);
        }
        expect_refused(corrupt, "corrupt");

        // A truncated header.
        const auto stub = dir_ / "stub.db";
        kftest::write_file(stub, "SQLite format 3");
        expect_refused(stub, "not a Kernel Foundry library");
    }
};

QTEST_GUILESS_MAIN(TestLibrary)
#include "test_library.moc"
