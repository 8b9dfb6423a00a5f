// The project store (kf/store.h): round trips, schema versioning, refusing foreign or damaged
// databases without touching them, and committed rows surviving kill -9.
#include <QtTest>

#include <csignal>
#include <filesystem>
#include <string>

#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kf/store.h"
#include "testsupport.h"

namespace fs = std::filesystem;

namespace {

kf::Diagnosis ok_diagnosis(double speedup) {
    kf::Diagnosis d;
    d.status = kf::Status::Ok;
    d.stage = kf::Stage::Done;
    d.message = "correct, " + std::to_string(speedup) + "x";
    d.backend = "host";
    d.task = "softmax";
    d.compile.ok = true;
    kf::Correctness c;
    c.passed = true;
    c.trials = 3;
    kf::CaseCorrectness cc;
    cc.name = "primary";
    cc.passed = true;
    cc.trials = 3;
    cc.trials_passed = 3;
    cc.max_abs_error = 1e-6;
    cc.elements = 4096;
    c.cases.push_back(cc);
    c.max_abs_error = 1e-6;
    d.correctness = c;
    kf::Timing t;
    t.median_ms = 0.5;
    t.reference_median_ms = 0.5 * speedup;
    t.reps = 50;
    t.speedup = speedup;
    t.case_name = "primary";
    d.timing = t;
    d.advice = {"tune"};
    d.kernel_launches = 1;
    return d;
}

// Runs SQL against a database file directly, bypassing the store.
void raw_exec(const fs::path& db, const std::string& sql) {
    sqlite3* h = nullptr;
    QCOMPARE(sqlite3_open(db.c_str(), &h), SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &err);
    const std::string msg = err ? err : "";
    sqlite3_free(err);
    sqlite3_close(h);
    QVERIFY2(rc == SQLITE_OK, msg.c_str());
}

std::int64_t raw_int(const fs::path& db, const std::string& sql) {
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

void write_project_file(const fs::path& dir) {
    kftest::write_file(dir / "project.kfproj", R"({"format": 1, "name": "x", "created": "2026-01-01T00:00:00Z"})");
}

// Opening dir must throw a StoreError whose message contains every word in `expect`, and
// leave project.db byte for byte as it was.
void expect_refused(const fs::path& dir, const std::vector<std::string>& expect) {
    const fs::path db = dir / "project.db";
    const bool had_db = fs::exists(db);
    const std::string before = had_db ? kftest::read_file(db) : std::string();
    bool thrown = false;
    try {
        kf::ProjectStore::open(dir);
    } catch (const kf::StoreError& e) {
        thrown = true;
        const std::string msg = e.what();
        qInfo("refused: %s", msg.c_str());
        for (const auto& word : expect) QVERIFY2(msg.find(word) != std::string::npos, msg.c_str());
    }
    QVERIFY(thrown);
    if (had_db) {
        QVERIFY(kftest::read_file(db) == before);
        QVERIFY(!fs::exists(dir / "project.db-wal") || fs::file_size(dir / "project.db-wal") == 0);
    }
}

// A project whose database spans many pages.
fs::path filled_project(const std::string& tag, int candidates) {
    const fs::path dir = kftest::temp_dir(tag);
    auto store = kf::ProjectStore::create(dir, tag);
    const auto run = store.add_run("softmax", nlohmann::json::object());
    store.transaction([&] {
        for (int i = 0; i < candidates; ++i) {
            kf::CandidateRecord c;
            c.run_id = run;
            c.task = "softmax";
            c.source = std::string(500, char('a' + i % 26)) + std::to_string(i);
            store.add_candidate(c);
        }
    });
    return dir;
}

}  // namespace

class TestStore : public QObject {
    Q_OBJECT

private slots:
    void roundTripsEverything() {
        const fs::path dir = kftest::temp_dir("store-roundtrip");
        std::int64_t run = 0, other = 0, seed = 0, child = 0, cross = 0, grandchild = 0, unevaluated = 0;
        std::int64_t first_event = 0;
        {
            auto store = kf::ProjectStore::create(dir, "My project");
            run = store.add_run("softmax", {{"islands", 4}, {"budget", 100}});
            other = store.add_run("gemm", nlohmann::json::object());
            store.set_run_state(run, kf::RunState::Stopped, "budget exhausted");

            kf::CandidateRecord c;
            c.run_id = run;
            c.task = "softmax";
            c.source = "__global__ void k() {}";
            c.expert = "seed";
            c.tunables = {{"BLOCK", 256}, {"VEC", 4}};
            c.rationale = "the reference, ported";
            seed = store.add_candidate(c);

            c.source = "__global__ void k() { /* faster */ }";
            c.expert = "vectorize";
            c.family = "softmax/online";
            c.parents = {seed};
            c.generation = 1;
            c.island = 2;
            c.author = "user";
            child = store.add_candidate(c);

            c.author = "engine";
            c.expert = "crossover";
            c.parents = {child, seed};
            c.generation = 2;
            cross = store.add_candidate(c);

            c.expert = "tile";
            c.parents = {cross};
            c.generation = 3;
            grandchild = store.add_candidate(c);

            c.parents = {seed};  // the same source again: duplicates are allowed
            unevaluated = store.add_candidate(c);

            store.add_evaluation(seed, ok_diagnosis(1.0));
            store.add_evaluation(child, ok_diagnosis(2.5));
            store.add_evaluation(cross, ok_diagnosis(1.7));
            kf::Diagnosis failed;
            failed.status = kf::Status::CompileError;
            failed.message = "error: expected ';'";
            store.add_evaluation(grandchild, failed);

            first_event = store.add_event(run, kf::EventKind::Seeded, {{"task", "softmax"}});
            store.add_event(run, kf::EventKind::Log, {{"n", 1}});
            store.add_event(other, kf::EventKind::Seeded, nullptr);
            store.put_state(run, "islands", {{"count", 4}});
            store.put_state(run, "islands", {{"count", 5}});  // overwrites
            store.put_state(run, "rng", "0123456789abcdef");
        }

        auto store = kf::ProjectStore::open(dir / "project.kfproj");
        QCOMPARE(store.name(), std::string("My project"));
        QCOMPARE(store.dir(), fs::absolute(dir));

        const auto runs = store.runs();
        QCOMPARE(runs.size(), std::size_t(2));
        QCOMPARE(runs[0].task, std::string("softmax"));
        QCOMPARE(runs[0].config["islands"].get<int>(), 4);
        QCOMPARE(runs[0].state, kf::RunState::Stopped);
        QCOMPARE(runs[0].stop_reason, std::string("budget exhausted"));
        QVERIFY(runs[0].created.size() >= 20 && runs[0].created.back() == 'Z');
        QCOMPARE(runs[1].state, kf::RunState::Running);
        QCOMPARE(store.latest_run()->id, other);
        QCOMPARE(store.latest_run("softmax")->id, run);
        QVERIFY(!store.latest_run("nope"));
        QVERIFY(!store.run(999));

        const auto cands = store.candidates(run);
        QCOMPARE(cands.size(), std::size_t(5));
        QCOMPARE(cands[0].id, seed);
        QCOMPARE(cands[0].tunables["BLOCK"].get<int>(), 256);
        QCOMPARE(cands[0].rationale, std::string("the reference, ported"));
        QVERIFY(cands[0].parents.empty());
        QCOMPARE(cands[0].content_hash.size(), std::size_t(64));
        QCOMPARE(cands[1].author, std::string("user"));
        QCOMPARE(cands[1].island, 2);
        QCOMPARE(cands[1].family, std::string("softmax/online"));
        QVERIFY(cands[0].family.empty());
        QCOMPARE(cands[1].generation, 1);
        QCOMPARE(cands[2].parents, (std::vector<std::int64_t>{child, seed}));
        QCOMPARE(cands[3].content_hash, cands[4].content_hash);
        QCOMPARE(store.candidate(child)->source, std::string("__global__ void k() { /* faster */ }"));
        QVERIFY(!store.candidate(12345));
        QVERIFY(store.candidates(other).empty());

        // Lineage: first parents back to the seed, and the kind of each edge.
        QCOMPARE(store.lineage(grandchild), (std::vector<std::int64_t>{grandchild, cross, child, seed}));
        QCOMPARE(store.lineage(seed), (std::vector<std::int64_t>{seed}));
        QVERIFY(store.lineage(12345).empty());
        const fs::path db = dir / "project.db";
        QCOMPARE(raw_int(db, "SELECT count(*) FROM lineage WHERE kind = 'crossover' AND child_id = " +
                                 std::to_string(cross)),
                 std::int64_t(2));
        QCOMPARE(raw_int(db, "SELECT count(*) FROM lineage WHERE kind = 'seed' AND parent_id IS NULL"),
                 std::int64_t(1));
        QCOMPARE(raw_int(db, "SELECT count(*) FROM lineage WHERE kind = 'mutation'"), std::int64_t(3));
        // Events keep the kind's spelling.
        QCOMPARE(raw_int(db, "SELECT count(*) FROM events WHERE kind = 'seeded'"), std::int64_t(2));
        QCOMPARE(raw_int(db, "SELECT count(*) FROM events WHERE kind = 'log'"), std::int64_t(1));

        const auto evals = store.evaluations(run);
        QCOMPARE(evals.size(), std::size_t(4));
        QCOMPARE(evals[1].candidate_id, child);
        QCOMPARE(evals[1].status, std::string("ok"));
        QCOMPARE(evals[1].fitness, 2.5);
        QCOMPARE(evals[3].status, std::string("compile_error"));
        QCOMPARE(evals[3].fitness, 0.0);
        kf::Diagnosis back;
        kf::from_json(evals[1].diagnosis, back);
        QVERIFY(back.ok());
        QVERIFY(back.correctness && back.timing);
        QCOMPARE(back.correctness->cases.size(), std::size_t(1));
        QCOMPARE(back.correctness->cases[0].elements, std::int64_t(4096));
        QCOMPARE(back.timing->speedup, 2.5);
        QCOMPARE(back.timing->reps, 50);
        QCOMPARE(back.fitness(), 2.5);
        QCOMPARE(store.evaluation_of(cross)->fitness, 1.7);
        QVERIFY(!store.evaluation_of(unevaluated));

        const auto best = store.best(run);
        QVERIFY(best);
        QCOMPARE(best->first.id, child);
        QCOMPARE(best->second.fitness, 2.5);
        QVERIFY(!store.best(other));
        QCOMPARE(store.unevaluated(run), (std::vector<std::int64_t>{unevaluated}));

        const auto events = store.events(run);
        QCOMPARE(events.size(), std::size_t(2));
        QCOMPARE(events[0].kind, kf::EventKind::Seeded);
        QCOMPARE(events[1].kind, kf::EventKind::Log);
        QCOMPARE(events[0].payload["task"].get<std::string>(), std::string("softmax"));
        QCOMPARE(store.events(run, first_event).size(), std::size_t(1));
        QVERIFY(store.events(other)[0].payload.is_null());

        QCOMPARE(store.get_state(run, "islands")->at("count").get<int>(), 5);
        QCOMPARE(store.get_state(run, "rng")->get<std::string>(), std::string("0123456789abcdef"));
        QVERIFY(!store.get_state(run, "absent"));
        QVERIFY(!store.get_state(other, "islands"));
    }

    void readsEventKindsByTheirSpelling() {
        // The events table holds each kind's spelling; one this build has no word for (written by
        // a newer build) reads as a line of the run's log, its payload kept.
        const fs::path dir = kftest::temp_dir("store-event-kinds");
        std::int64_t run = 0;
        {
            auto store = kf::ProjectStore::create(dir, "kinds");
            run = store.add_run("softmax", nlohmann::json::object());
            for (kf::EventKind k : kf::kEventKinds)
                store.add_event(run, k, {{"message", std::string(kf::to_string(k))}});
        }
        raw_exec(dir / "project.db", "INSERT INTO events (run_id, kind, payload, created) VALUES (" + std::to_string(run) +
                                         ", 'checkpoint', '{\"message\": \"saved\"}', '2026-01-01T00:00:00Z');");
        auto store = kf::ProjectStore::open(dir);
        const auto events = store.events(run);
        QCOMPARE(events.size(), kf::kEventKinds.size() + 1);
        for (std::size_t i = 0; i < kf::kEventKinds.size(); ++i) {
            QCOMPARE(events[i].kind, kf::kEventKinds[i]);
            QCOMPARE(events[i].payload.value("message", std::string()), std::string(kf::to_string(kf::kEventKinds[i])));
        }
        QCOMPARE(events.back().kind, kf::EventKind::Log);
        QCOMPARE(events.back().payload.value("message", std::string()), std::string("saved"));
    }

    void walModeAndMigrationsOnce() {
        const fs::path dir = kftest::temp_dir("store-wal");
        {
            auto store = kf::ProjectStore::create(dir, "wal");
            QCOMPARE(store.journal_mode(), std::string("wal"));
            QCOMPARE(store.schema_version(), 2);
            QCOMPARE(store.migrations_applied(), 2);
            store.add_run("softmax", nlohmann::json::object());
        }
        const fs::path db = dir / "project.db";
        QCOMPARE(raw_int(db, "PRAGMA user_version"), std::int64_t(2));
        QCOMPARE(raw_int(db, "PRAGMA application_id"), std::int64_t(kf::kStoreApplicationId));
        for (int i = 0; i < 2; ++i) {
            auto store = kf::ProjectStore::open_or_create(dir, "ignored");
            QCOMPARE(store.name(), std::string("wal"));
            QCOMPARE(store.migrations_applied(), 0);
            QCOMPARE(store.schema_version(), 2);
            QCOMPARE(store.journal_mode(), std::string("wal"));
            QCOMPARE(store.runs().size(), std::size_t(1));
        }
        QCOMPARE(raw_int(db, "PRAGMA user_version"), std::int64_t(2));
        auto fresh = kf::ProjectStore::open_or_create(dir / "sub", "fresh");
        QCOMPARE(fresh.name(), std::string("fresh"));
        QCOMPARE(fresh.migrations_applied(), 2);
    }

    /** Migration 2 adds evaluations.ran_on to a version-1 project; old rows read as ''. */
    void migratesVersion1AddingRanOn() {
        const fs::path dir = kftest::temp_dir("store-v1");
        std::int64_t old_eval = 0, cand = 0;
        {
            auto store = kf::ProjectStore::create(dir, "v1");
            const auto run = store.add_run("softmax", nlohmann::json::object());
            kf::CandidateRecord c;
            c.run_id = run;
            c.task = "softmax";
            c.source = "k";
            cand = store.add_candidate(c);
            kf::Diagnosis d;
            d.status = kf::Status::Ok;
            old_eval = store.add_evaluation(cand, d);
        }
        // Back to what a version-1 build wrote.
        raw_exec(dir / "project.db", "ALTER TABLE evaluations DROP COLUMN ran_on; PRAGMA user_version = 1;");
        auto store = kf::ProjectStore::open(dir);
        QCOMPARE(store.migrations_applied(), 1);
        QCOMPARE(store.schema_version(), 2);
        QCOMPARE(raw_int(dir / "project.db", "PRAGMA user_version"), std::int64_t(2));
        auto before = store.evaluation_of(cand);
        QCOMPARE(before->id, old_eval);
        QCOMPARE(before->ran_on, std::string());
        kf::Diagnosis d;
        d.status = kf::Status::Ok;
        d.ran_on = "slurm:7@node3";
        store.add_evaluation(cand, d);
        auto after = store.evaluation_of(cand);
        QCOMPARE(after->ran_on, std::string("slurm:7@node3"));
        QCOMPARE(after->diagnosis.value("ran_on", std::string()), std::string("slurm:7@node3"));
        QVERIFY(!before->diagnosis.contains("ran_on"));  // absent until a worker was reached
    }

    void finishesAnInterruptedCreate() {
        // A create killed between writing project.kfproj and the first migration leaves an
        // empty database; opening initialises it.
        const fs::path dir = kftest::temp_dir("store-empty");
        write_project_file(dir);
        kftest::write_file(dir / "project.db", "");
        auto store = kf::ProjectStore::open(dir);
        QCOMPARE(store.migrations_applied(), 2);
        QCOMPARE(store.schema_version(), 2);
        QVERIFY(store.add_run("softmax", nlohmann::json::object()) > 0);
    }

    void createRefusesAnExistingProject() {
        const fs::path dir = kftest::temp_dir("store-exists");
        { kf::ProjectStore::create(dir, "one"); }
        QVERIFY_THROWS_EXCEPTION(kf::StoreError, kf::ProjectStore::create(dir, "two"));
        QCOMPARE(kf::ProjectStore::open(dir).name(), std::string("one"));
    }

    void transactionsCommitOrRollBack() {
        const fs::path dir = kftest::temp_dir("store-tx");
        auto store = kf::ProjectStore::create(dir, "tx");
        const auto run = store.add_run("softmax", nlohmann::json::object());
        kf::CandidateRecord c;
        c.run_id = run;
        c.source = "x";
        bool thrown = false;
        try {
            store.transaction([&] {
                store.add_candidate(c);
                store.add_event(run, kf::EventKind::Log, nullptr);
                throw std::runtime_error("abort");
            });
        } catch (const std::runtime_error&) {
            thrown = true;
        }
        QVERIFY(thrown);
        QVERIFY(store.candidates(run).empty());
        QVERIFY(store.events(run).empty());

        store.transaction([&] {
            store.add_candidate(c);
            try {
                store.transaction([&] {
                    store.add_candidate(c);
                    throw std::runtime_error("inner");
                });
            } catch (const std::runtime_error&) {
            }
            store.add_candidate(c);
        });
        QCOMPARE(store.candidates(run).size(), std::size_t(2));

        // A failed write (unknown parent) leaves nothing behind.
        c.parents = {99999};
        QVERIFY_THROWS_EXCEPTION(kf::StoreError, store.add_candidate(c));
        QCOMPARE(store.candidates(run).size(), std::size_t(2));
        QVERIFY(!kf::parse_run_state("sleeping"));
        for (kf::RunState st : kf::kRunStates) QCOMPARE(kf::parse_run_state(kf::to_string(st)), std::optional<kf::RunState>(st));
        QVERIFY_THROWS_EXCEPTION(kf::StoreError, store.set_run_state(4242, kf::RunState::Done));
    }

    void refusesAFolderWithoutProject() {
        const fs::path dir = kftest::temp_dir("store-none");
        expect_refused(dir, {dir.string(), "project.kfproj"});
        expect_refused(dir / "missing", {"missing"});
        write_project_file(dir);
        expect_refused(dir, {"project.db", "missing"});
    }

    void refusesATextFile() {
        const fs::path dir = kftest::temp_dir("store-text");
        write_project_file(dir);
        kftest::write_file(dir / "project.db", "these are my notes, not a database\n");
        expect_refused(dir, {"project.db", "not an SQLite database"});
    }

    void refusesABadProjectFile() {
        const fs::path dir = kftest::temp_dir("store-badproj");
        kftest::write_file(dir / "project.kfproj", "{ not json");
        expect_refused(dir, {"project.kfproj", "JSON"});
        kftest::write_file(dir / "project.kfproj", R"({"format": 7, "name": "future"})");
        expect_refused(dir, {"project.kfproj", "format 7"});
    }

    // A symbolic link in place of project.db is refused: its journal and WAL would be looked
    // for beside the link, not beside the database, and a crash could then corrupt it.
    void refusesADatabaseThatIsASymbolicLink() {
        const fs::path real = kftest::temp_dir("store-link-target");
        kf::ProjectStore::create(real, "real");
        const fs::path dir = kftest::temp_dir("store-link");
        write_project_file(dir);
        fs::create_symlink(real / "project.db", dir / "project.db");
        expect_refused(dir, {"project.db", "symbolic link"});
        QVERIFY(kf::ProjectStore::open(real).runs().empty());
    }

    void refusesAnotherApplicationsDatabase() {
        const fs::path dir = kftest::temp_dir("store-foreign");
        write_project_file(dir);
        raw_exec(dir / "project.db", "PRAGMA application_id = 305419896; CREATE TABLE notes (t TEXT);");
        expect_refused(dir, {"project.db", "not a Kernel Foundry project", "0x12345678"});

        const fs::path plain = kftest::temp_dir("store-plain");
        write_project_file(plain);
        raw_exec(plain / "project.db", "CREATE TABLE customers (id INTEGER, name TEXT);");
        expect_refused(plain, {"project.db", "not a Kernel Foundry project"});
    }

    void refusesUnknownTablesAndChangedSchema() {
        const fs::path dir = kftest::temp_dir("store-extra");
        { kf::ProjectStore::create(dir, "extra"); }
        raw_exec(dir / "project.db", "CREATE TABLE mystery (x);");
        expect_refused(dir, {"project.db", "schema does not match", "unexpected table mystery"});

        const fs::path dropped = kftest::temp_dir("store-dropped");
        { kf::ProjectStore::create(dropped, "dropped"); }
        raw_exec(dropped / "project.db", "DROP TABLE events;");
        expect_refused(dropped, {"project.db", "missing table events"});
    }

    void refusesANewerSchema() {
        const fs::path dir = kftest::temp_dir("store-newer");
        { kf::ProjectStore::create(dir, "newer"); }
        raw_exec(dir / "project.db", "PRAGMA user_version = 999;");
        expect_refused(dir, {"project.db", "schema version 999", "newer than this build supports (2)"});
    }

    void refusesADamagedDatabase() {
        // Cut in half: pages the schema points at are gone.
        const fs::path half = filled_project("store-half", 400);
        const auto size = fs::file_size(half / "project.db");
        QVERIFY(size > 64 * 1024);
        fs::resize_file(half / "project.db", size / 2);
        expect_refused(half, {"project.db"});

        // Cut inside the header page.
        const fs::path header = filled_project("store-header", 10);
        fs::resize_file(header / "project.db", 100);
        expect_refused(header, {"project.db", "truncated"});

        // A valid header followed by garbage.
        const fs::path garbage = kftest::temp_dir("store-garbage");
        write_project_file(garbage);
        std::string bytes("SQLite format 3\0", 16);
        std::uint32_t x = 12345;
        for (int i = 0; i < 8192; ++i) {
            x = x * 1664525u + 1013904223u;
            bytes.push_back(static_cast<char>(x >> 24));
        }
        kftest::write_file(garbage / "project.db", bytes);
        expect_refused(garbage, {"project.db"});

        // Garbage in the middle of a real database.
        const fs::path scribbled = filled_project("store-scribbled", 400);
        std::string db = kftest::read_file(scribbled / "project.db");
        for (std::size_t i = 4096; i < 4096 * 3 && i < db.size(); ++i) db[i] = static_cast<char>(i * 7);
        kftest::write_file(scribbled / "project.db", db);
        expect_refused(scribbled, {"project.db"});
    }

    void committedRowsSurviveKill9() {
        const fs::path dir = kftest::temp_dir("store-kill");
        std::int64_t run = 0;
        {
            auto store = kf::ProjectStore::create(dir, "kill");
            run = store.add_run("softmax", nlohmann::json::object());
        }
        const pid_t pid = fork();
        QVERIFY(pid >= 0);
        if (pid == 0) {
            // The child: write until killed. _exit, never return into the test framework.
            try {
                auto store = kf::ProjectStore::open(dir);
                std::int64_t parent = 0;
                for (int i = 0;; ++i) {
                    kf::CandidateRecord c;
                    c.run_id = run;
                    c.task = "softmax";
                    c.source = "source " + std::to_string(i) + std::string(2000, 'x');
                    c.expert = "mutate";
                    c.generation = i;
                    c.tunables = {{"i", i}};
                    if (parent) c.parents = {parent};
                    parent = store.add_candidate(c);
                    if (i % 3 == 0) store.add_event(run, kf::EventKind::Log, {{"id", parent}});
                }
            } catch (...) {
                _exit(3);
            }
        }
        // Killed while it writes: once some candidates are committed (read through a
        // connection of our own), so the kill lands in the middle of the stream.
        auto committed = [&] {
            try {
                return kf::ProjectView::open(dir).candidates(run).size() >= 20;
            } catch (const std::exception&) {
                return false;  // the child holds the write lock at this moment
            }
        };
        QTRY_VERIFY_WITH_TIMEOUT(committed(), 60000);
        QCOMPARE(kill(pid, SIGKILL), 0);
        int status = 0;
        QCOMPARE(waitpid(pid, &status, 0), pid);
        QVERIFY2(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the child stopped before it was killed");

        auto store = kf::ProjectStore::open(dir);
        const auto cands = store.candidates(run);
        QVERIFY(!cands.empty());
        for (std::size_t i = 0; i < cands.size(); ++i) {
            const auto& c = cands[i];
            QCOMPARE(c.generation, static_cast<int>(i));
            QCOMPARE(c.source, "source " + std::to_string(i) + std::string(2000, 'x'));
            QCOMPARE(c.tunables["i"].get<int>(), static_cast<int>(i));
            QCOMPARE(c.content_hash.size(), std::size_t(64));
            QCOMPARE(c.parents.size(), i == 0 ? std::size_t(0) : std::size_t(1));
            QCOMPARE(store.lineage(c.id).size(), i + 1);
        }
        QCOMPARE(store.unevaluated(run).size(), cands.size());
        qInfo("%zu candidates survived kill -9", cands.size());
        // The store still takes writes after the crash.
        kf::CandidateRecord c;
        c.run_id = run;
        c.source = "after";
        QVERIFY(store.add_candidate(c) > cands.back().id);
    }
};

QTEST_GUILESS_MAIN(TestStore)
#include "test_store.moc"
