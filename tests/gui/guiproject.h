#pragma once
// A small project for the GUI tests: one host run of tests/data/tasks/scale_add with three
// candidates and their diagnoses (two correct, the third a compile error on line 5).
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QImage>
#include <QStringList>
#include <QString>
#include <QWidget>

#include <filesystem>

#include "kf/diagnosis.h"
#include "kf/store.h"
#include "testsupport.h"

namespace guitest {

inline const char* kSourceA =
    "#include \"kf_task.h\"\n"
    "\n"
    "extern \"C\" void kf_solve(const float* x, const float* y, float* z, int n, float alpha) {\n"
    "#pragma omp parallel for schedule(static)\n"
    "    for (int i = 0; i < n; ++i) z[i] = alpha * x[i] + y[i];\n"
    "}\n";

// B differs from A in its loop: two lines removed, three added.
inline const char* kSourceB =
    "#include \"kf_task.h\"\n"
    "\n"
    "extern \"C\" void kf_solve(const float* x, const float* y, float* z, int n, float alpha) {\n"
    "    constexpr int BLOCK = 4096;  // @kf tunable values(1024, 4096)\n"
    "#pragma omp parallel for schedule(static)\n"
    "    for (int b = 0; b < n; b += BLOCK)\n"
    "        for (int i = b; i < (b + BLOCK < n ? b + BLOCK : n); ++i) z[i] = alpha * x[i] + y[i];\n"
    "}\n";

// Line 5 misses its semicolon.
inline const char* kSourceBroken =
    "#include \"kf_task.h\"\n"
    "\n"
    "extern \"C\" void kf_solve(const float* x, const float* y, float* z, int n, float alpha) {\n"
    "    for (int i = 0; i < n; ++i)\n"
    "        z[i] = alpha * x[i] + y[i]\n"
    "}\n";

struct Project {
    QString dir;
    qint64 run = 0;
    qint64 a = 0, b = 0, broken = 0;
};

inline kf::Diagnosis okDiagnosis(double median_ms, double speedup, double gflops) {
    kf::Diagnosis d;
    d.status = kf::Status::Ok;
    d.stage = kf::Stage::Done;
    d.message = "correct";
    d.backend = "host";
    d.device = "test CPU";
    d.task = "scale_add";
    d.compile.ok = true;
    d.compile.compiler = "g++";
    kf::Correctness c;
    c.passed = true;
    c.trials = 3;
    c.max_abs_error = 1e-7;
    kf::CaseCorrectness primary;
    primary.name = "primary-host";
    primary.passed = true;
    primary.trials = primary.trials_passed = 3;
    c.cases.push_back(primary);
    d.correctness = c;
    kf::Timing t;
    t.median_ms = median_ms;
    t.min_ms = median_ms * 0.9;
    t.reps = 20;
    t.reference_median_ms = median_ms * speedup;
    t.speedup = speedup;
    d.timing = t;
    kf::Roofline r;
    r.flops = 2.0 * 1048576;
    r.bytes = 12.0 * 1048576;
    r.arithmetic_intensity = r.flops / r.bytes;
    r.achieved_gflops = gflops;
    r.achieved_gbps = gflops / r.arithmetic_intensity;
    r.peak_gbps = 40;
    r.peak_gflops = 400;
    r.ridge_point = 10;
    r.bound = "memory";
    d.roofline = r;
    d.integrity.push_back({"forbidden_symbols", "pass", "12 undefined symbols screened"});
    d.integrity.push_back({"physical_floor", "pass", ""});
    return d;
}

inline kf::Diagnosis compileErrorDiagnosis() {
    kf::Diagnosis d;
    d.status = kf::Status::CompileError;
    d.stage = kf::Stage::Compile;
    d.message = "does not compile: expected ';' before '}' token";
    d.backend = "host";
    d.task = "scale_add";
    d.compile.ok = false;
    d.compile.compiler = "g++";
    d.compile.diagnostics.push_back({"candidate.cpp", 5, 35, kf::Severity::Error, "expected ';' before '}' token", "g++"});
    d.compile.diagnostics.push_back({"candidate.cpp", 3, 84, kf::Severity::Warning, "unused parameter 'n'", "g++"});
    d.advice = {"repair_compile"};
    return d;
}

/** Creates the project in a fresh temporary folder. */
inline Project makeProject() {
    Project p;
    const std::filesystem::path dir = kftest::temp_dir("gui-views") / "project";
    p.dir = QString::fromStdString(dir.string());
    kf::ProjectStore store = kf::ProjectStore::create(dir, "views");
    const std::filesystem::path task = kftest::data("tasks/scale_add");
    p.run = store.add_run("scale_add", {{"backend", "host"}, {"task_dir", task.string()}, {"islands", 2}});
    kf::CandidateRecord a;
    a.run_id = p.run;
    a.task = "scale_add";
    a.source = kSourceA;
    a.expert = "seed";
    a.rationale = "The reference loop, as a starting point.";
    p.a = store.add_candidate(a);
    store.add_evaluation(p.a, okDiagnosis(2.0, 1.0, 1.05));

    kf::CandidateRecord b = a;
    b.source = kSourceB;
    b.expert = "tuner";
    b.island = 1;
    b.generation = 1;
    b.rationale = "Blocked loop so that each thread streams a contiguous range.";
    b.tunables = {{"BLOCK", 4096}};
    b.parents = {p.a};
    p.b = store.add_candidate(b);
    kf::Diagnosis db = okDiagnosis(1.0, 2.0, 2.1);
    // A profile in the shape the profiler writes (docs/diagnosis.md, "Profile").
    db.profile = nlohmann::json::parse(R"({
      "available": true, "tool": "ncu", "runs": 1, "case": "primary",
      "kernels": [{"name": "blocked_kernel", "launches": 1, "duration_us": 950.0, "share": 1.0,
                   "achieved_occupancy_pct": 50.0, "registers_per_thread": 32,
                   "stalls": [{"reason": "long_scoreboard", "ratio": 8.3, "share": 0.42},
                              {"reason": "barrier", "ratio": 0.9, "share": 0.05}]}],
      "summary": {"kernels": 1, "launches": 1, "dram_throughput_pct": 71.5},
      "bound": "memory", "bound_source": "profile", "evidence": ["dram 72% of peak"]})");
    store.add_evaluation(p.b, db);

    kf::CandidateRecord broken = a;
    broken.source = kSourceBroken;
    broken.expert = "llm-memory";
    broken.generation = 2;
    broken.rationale = "Unrolled by hand.";
    broken.parents = {p.b};
    p.broken = store.add_candidate(broken);
    store.add_evaluation(p.broken, compileErrorDiagnosis());
    return p;
}

/** Saves a picture of `w` into $KF_SCREENSHOT_DIR/<name> when that variable is set. */
inline void screenshot(QWidget* w, const QString& name) {
    const QString dir = qEnvironmentVariable("KF_SCREENSHOT_DIR");
    if (dir.isEmpty()) return;
    w->grab().save(dir + QLatin1Char('/') + name);
}

/** Files under `dir` whose bytes contain `needle` (e.g. a key that must never be written). */
inline QStringList filesContaining(const QString& dir, const QByteArray& needle) {
    QStringList out;
    QDirIterator it(dir, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        QFile f(it.next());
        if (f.open(QIODevice::ReadOnly) && f.readAll().contains(needle)) out << f.fileName();
    }
    return out;
}

}  // namespace guitest
