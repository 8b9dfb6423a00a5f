// Profiler-grade diagnosis without a GPU: the ncu CSV parser on recorded (tests/data/ncu/h200)
// and synthetic (tests/data/ncu/synthetic) output, the bound classifier and the advice pinned,
// the degrade paths (no ncu, counters denied, host backend, time limit, unreadable output)
// through a fake ncu script, and the worker's one-shot profile mode on the host backend.
#include <QtTest>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "kf/compile.h"
#include "kf/evaluator.h"
#include "kf/process.h"
#include "kf/profile.h"
#include "testsupport.h"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string ncu_data(const std::string& rel) { return kftest::read_file(kftest::data("ncu/" + rel)); }

kf::ProfileData load(const std::string& rel, int runs = 1) { return kf::profile_from_csv(ncu_data(rel), runs); }

bool contains(const std::vector<std::string>& v, const std::string& needle) {
    for (const auto& s : v)
        if (s.find(needle) != std::string::npos) return true;
    return false;
}

std::vector<std::string> remedies(const std::vector<kf::Remedy>& rs) {
    std::vector<std::string> out;
    for (const auto& r : rs) out.push_back(r.remedy);
    return out;
}

QString join(const std::vector<std::string>& v) {
    QStringList l;
    for (const auto& s : v) l << QString::fromStdString(s);
    return l.join(", ");
}

/** Sets an environment variable for the scope of a test. */
struct EnvVar {
    std::string name;
    EnvVar(std::string n, const std::string& value) : name(std::move(n)) { setenv(name.c_str(), value.c_str(), 1); }
    ~EnvVar() { unsetenv(name.c_str()); }
};

std::string fake_ncu() { return kftest::data("ncu/fake-ncu.sh").string(); }

kf::NcuInvocation fake_invocation(const std::vector<std::string>& target = {"/bin/true"}) {
    kf::NcuInvocation inv;
    inv.ncu = fake_ncu();
    inv.target = target;
    inv.timeout = std::chrono::seconds(30);
    return inv;
}

bool have_nvcc() {
    auto r = kf::run_process({kf::compiler_program(kf::Backend::Cuda), "--version"}, std::chrono::seconds(30));
    return !r.start_failed && r.exit_code == 0;
}

}  // namespace

class TestProfile : public QObject {
    Q_OBJECT

private slots:
    void numbers() {
        QCOMPARE(kf::parse_ncu_number("1,234.5"), 1234.5);
        QCOMPARE(kf::parse_ncu_number(" 368,992 "), 368992.0);
        QCOMPARE(kf::parse_ncu_number("62.12"), 62.12);
        QVERIFY(std::isnan(kf::parse_ncu_number("n/a")));
        QVERIFY(std::isnan(kf::parse_ncu_number("")));
        QVERIFY(std::isnan(kf::parse_ncu_number("NVIDIA H200")));
        QVERIFY((kf::parse_dim3("(256, 1, 1)") == std::array<std::int64_t, 3>{256, 1, 1}));
        QVERIFY((kf::parse_dim3("(32, 32, 1)") == std::array<std::int64_t, 3>{32, 32, 1}));
        QVERIFY((kf::parse_dim3("") == std::array<std::int64_t, 3>{0, 0, 0}));
    }

    void metricNames() {
        const auto& m = kf::profile_metrics();
        for (const char* name : {"gpu__time_duration.sum", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
                                 "sm__throughput.avg.pct_of_peak_sustained_elapsed",
                                 "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
                                 "sm__warps_active.avg.pct_of_peak_sustained_active", "sm__maximum_warps_per_active_cycle_pct",
                                 "launch__registers_per_thread", "launch__shared_mem_per_block_static",
                                 "launch__shared_mem_per_block_dynamic", "l1tex__t_sector_hit_rate.pct",
                                 "lts__t_sector_hit_rate.pct",
                                 "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"})
            QVERIFY2(std::find(m.begin(), m.end(), name) != m.end(), name);
        QCOMPARE(static_cast<int>(kf::stall_reasons().size()), 17);
    }

    void parseMemoryBound() {
        kf::NcuTable t = kf::parse_ncu_csv(ncu_data("synthetic/memory_bound.csv"));
        QCOMPARE(static_cast<int>(t.rows.size()), 1);
        QCOMPARE(t.columns.size(), t.units.size());
        QVERIFY(t.column("Kernel Name") >= 0);
        kf::ProfileData p = kf::profile_from_table(t);
        QCOMPARE(static_cast<int>(p.kernels.size()), 1);
        const kf::KernelProfile& k = p.kernels[0];
        QCOMPARE(k.name, std::string("void scale_add_kernel<4>(const float *, const float *, float *, long long)"));
        QVERIFY((k.grid == std::array<std::int64_t, 3>{16384, 1, 1}));
        QVERIFY((k.block == std::array<std::int64_t, 3>{256, 1, 1}));
        QCOMPARE(k.launches, 1);
        QVERIFY(std::abs(k.duration_us - 412.832) < 1e-9);  // "412,832" ns
        QCOMPARE(k.dram_pct, 91.27);
        QCOMPARE(k.memory_pct, 92.4);
        QCOMPARE(k.sm_pct, 31.05);
        QCOMPARE(k.achieved_occupancy_pct, 86.1);
        QCOMPARE(k.theoretical_occupancy_pct, 100.0);
        QCOMPARE(k.registers_per_thread, 24.0);
        QCOMPARE(k.l2_hit_pct, 33.71);
        QCOMPARE(k.occupancy_limits.at("registers"), 10.0);
        QCOMPARE(k.occupancy_limiter(), std::string("warps"));
        QCOMPARE(k.stalls.front().reason, std::string("long_scoreboard"));
        double shares = 0;
        for (const auto& s : k.stalls) shares += s.share;
        QVERIFY(std::abs(shares - 1.0) < 1e-9);
        QCOMPARE(p.summary.dominant, k.name);
        QCOMPARE(p.summary.dominant_share, 1.0);
    }

    void parseMultiKernel() {
        // Three kernels per call, two profiled calls: six rows merged into three kernels.
        kf::ProfileData p = load("synthetic/multi_kernel.csv", 2);
        QCOMPARE(p.summary.kernels, 3);
        QCOMPARE(p.summary.launches, 3);
        QCOMPARE(p.kernels[0].name, std::string("row_partial_sum_kernel(const float *, float *, int, int)"));
        QVERIFY(std::abs(p.summary.total_duration_us - (2.944 + 1.888 + 2.464)) < 1e-9);
        QVERIFY(std::abs(p.summary.dominant_share - 2.944 / 7.296) < 1e-9);
        QCOMPARE(p.kernels[1].shared_static_bytes, 0.0);
        QCOMPARE(p.kernels[2].shared_static_bytes, 1024.0);
    }

    void malformedOutput_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("message");
        QTest::newRow("field missing") << "synthetic/malformed.csv" << "row 2 has 47 fields";
        QTest::newRow("truncated row") << "synthetic/truncated.csv" << "unterminated quote";
        QTest::newRow("no units row") << "synthetic/no_units.csv" << "units row";
        QTest::newRow("no kernels") << "synthetic/no_kernels.txt" << "no ncu CSV header";
    }
    void malformedOutput() {
        QFETCH(QString, file);
        QFETCH(QString, message);
        try {
            kf::profile_from_csv(ncu_data(file.toStdString()));
            QFAIL("no ProfileError");
        } catch (const kf::ProfileError& e) {
            QVERIFY2(QString(e.what()).contains(message), e.what());
        }
    }

    void malformedNeverCrashes() {
        // Every prefix of a recorded output either parses or throws ProfileError.
        std::string text = ncu_data("synthetic/multi_kernel.csv");
        for (std::size_t n = 0; n < text.size(); n += 97) {
            try {
                kf::profile_from_csv(text.substr(0, n), 2);
            } catch (const kf::ProfileError&) {
            }
        }
        QVERIFY_THROWS_EXCEPTION(kf::ProfileError, kf::parse_ncu_csv("\"ID\",\"Kernel Name\",\"x__y\"\n\"\",\"\",\"%\"\n"
                                                                     "\"0\",\"k\"\n"));
        QVERIFY_THROWS_EXCEPTION(kf::ProfileError, kf::profile_from_csv("\"ID\",\"Kernel Name\",\"x__y\"\n\"\",\"\",\"%\"\n"));
    }

    void classifier_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("runs");
        QTest::addColumn<QString>("bound");
        QTest::addColumn<QString>("evidence");
        QTest::addColumn<QString>("advice");
        QTest::newRow("memory") << "synthetic/memory_bound.csv" << 1 << "memory" << "dram 91% of peak"
                                << "fuse, improve_memory_access";
        QTest::newRow("compute") << "synthetic/compute_bound.csv" << 1 << "compute" << "sm throughput 84% of peak"
                                 << "reduce_instructions, use_tensor_cores";
        QTest::newRow("occupancy") << "synthetic/low_occupancy.csv" << 1 << "occupancy"
                                   << "theoretical occupancy 25% limited by registers (96 per thread)"
                                   << "reduce_registers, tune_launch, improve_memory_access, reduce_barriers";
        QTest::newRow("launch overhead") << "synthetic/multi_kernel.csv" << 2 << "launch_overhead"
                                         << "3 launches per call averaging 2.43 us" << "fuse, improve_memory_access";
        QTest::newRow("latency") << "synthetic/latency_bound.csv" << 1 << "latency" << "top stall long_scoreboard (83% of stalls)"
                                 << "improve_memory_access, increase_parallelism, tune_launch";
        // Recorded on the H200 (scripts/ncu-record.sh: candidate and reference kernels of an eval).
        QTest::newRow("h200 gelu") << "h200/gelu_fast.csv" << 1 << "memory" << "dram 63% of peak"
                                   << "improve_memory_access, fuse";
        QTest::newRow("h200 matmul") << "h200/matmul_fast.csv" << 1 << "compute" << "sm throughput 88% of peak"
                                     << "reduce_instructions, use_tensor_cores, improve_memory_access, improve_shared_memory_access";
        QTest::newRow("h200 transpose") << "h200/transpose_fast.csv" << 1 << "memory" << "memory throughput 89% of peak"
                                        << "improve_memory_access, fuse";
        QTest::newRow("h200 histogram") << "h200/histogram_fast.csv" << 1 << "latency" << "top stall long_scoreboard"
                                        << "improve_memory_access, increase_parallelism, tune_launch";
        QTest::newRow("h200 row_sum") << "h200/row_sum_fast.csv" << 1 << "occupancy"
                                      << "achieved occupancy 2% against theoretical 100%"
                                      << "increase_parallelism, tune_launch, improve_memory_access";
    }
    void classifier() {
        QFETCH(QString, file);
        QFETCH(int, runs);
        QFETCH(QString, bound);
        QFETCH(QString, evidence);
        QFETCH(QString, advice);
        kf::ProfileData p = load(file.toStdString(), runs);
        kf::BoundVerdict v = kf::classify_bound(p);
        QCOMPARE(QString::fromStdString(v.bound), bound);
        QCOMPARE(v.source, std::string("profile"));
        QVERIFY2(contains(v.evidence, evidence.toStdString()), qPrintable(join(v.evidence)));
        QCOMPARE(join(remedies(kf::advise_from_profile(p, v))), advice);
    }

    void recordedFilesPlausible() {
        int files = 0;
        for (const auto& e : fs::directory_iterator(kftest::data("ncu/h200"))) {
            if (e.path().extension() != ".csv") continue;
            ++files;
            kf::ProfileData p = kf::profile_from_csv(kftest::read_file(e.path()));
            QVERIFY2(!p.kernels.empty(), e.path().c_str());
            for (const auto& k : p.kernels) {
                QVERIFY2(k.duration_us > 0 && k.duration_us < 1e6, e.path().c_str());
                for (double pct : {k.sm_pct, k.dram_pct, k.memory_pct, k.achieved_occupancy_pct, k.theoretical_occupancy_pct})
                    QVERIFY2(pct >= 0 && pct <= 100.5, e.path().c_str());
                QVERIFY(k.registers_per_thread >= 1 && k.registers_per_thread <= 255);
                QVERIFY(k.block[0] >= 1 && k.grid[0] >= 1);
                QVERIFY(!k.stalls.empty());
            }
            QVERIFY(p.summary.total_duration_us > 0);
        }
        QVERIFY2(files >= 10, "expected the recorded H200 outputs in tests/data/ncu/h200");
    }

    // Recorded on the H200 by the engine's own ncu command (the NVTX range around the
    // candidate call): only the candidate's kernels, never the worker's fill/compare/flush.
    void recordedNvtxFilteredRuns() {
        int files = 0;
        for (const auto& e : fs::directory_iterator(kftest::data("ncu/h200-nvtx"))) {
            if (e.path().extension() != ".csv") continue;
            ++files;
            kf::ProfileData p = kf::profile_from_csv(kftest::read_file(e.path()));
            std::string stem = e.path().stem().string();
            std::size_t expected = stem.rfind("histogram", 0) == 0 ? 2 : 1;  // zero + count kernels
            QVERIFY2(p.kernels.size() == expected, e.path().c_str());
            for (const auto& k : p.kernels)
                for (const char* worker : {"fill_kernel", "compare_kernel", "checksum_kernel", "copy16_kernel", "fma_kernel"})
                    QVERIFY2(k.name.find(worker) == std::string::npos, k.name.c_str());
            kf::BoundVerdict v = kf::classify_bound(p);
            if (stem.find("__fast") != std::string::npos && stem.rfind("matmul", 0) != 0 && stem.rfind("gemm", 0) != 0)
                QVERIFY2(v.bound == "memory", (stem + ": " + v.bound).c_str());  // the fast memory kernels run near DRAM peak
        }
        QCOMPARE(files, 22);
    }

    void rooflineFallback() {
        kf::Roofline r;
        r.peak_gbps = 3900;
        r.peak_gflops = 56000;
        r.achieved_gbps = 3100;
        r.bandwidth_fraction = 3100.0 / 3900;
        r.bound = "memory";
        kf::BoundVerdict v = kf::classify_bound(r, 1, 0.4);
        QCOMPARE(v.bound, std::string("memory"));
        QCOMPARE(v.source, std::string("roofline"));
        QVERIFY2(contains(v.evidence, "= 79% of measured 3900 GB/s"), qPrintable(join(v.evidence)));
        kf::Roofline small;
        small.peak_gbps = 3900;
        small.bandwidth_fraction = 0.01;
        small.bound = "latency";
        QCOMPARE(kf::classify_bound(small, 4, 0.012).bound, std::string("launch_overhead"));
        QCOMPARE(kf::classify_bound(small, 1, 0.012).bound, std::string("latency"));
    }

    void applyProfile() {
        kf::Diagnosis d;
        d.status = kf::Status::Ok;
        d.roofline = kf::Roofline{};
        d.roofline->bound = "latency";
        d.timing = kf::Timing{};
        d.timing->median_ms = 0.1;
        d.advice = {"increase_parallelism", "tune_launch", "reduce_registers"};
        kf::ProfileData p = load("synthetic/low_occupancy.csv");
        kf::BoundVerdict v = kf::classify_bound(p);
        kf::apply_profile(d, kf::profile_to_json(p, v, kf::advise_from_profile(p, v)));
        QCOMPARE(d.roofline->bound, std::string("occupancy"));
        QCOMPARE(d.profile.value("roofline_bound", ""), std::string("latency"));
        QCOMPARE(QString::fromStdString(d.advice.front()), QString("reduce_registers"));
        QVERIFY(std::find(d.advice.begin(), d.advice.end(), "reduce_barriers") != d.advice.end());
        // The record round-trips with its profile (schema version 1).
        json j = d;
        kf::Diagnosis back = j.get<kf::Diagnosis>();
        QCOMPARE(back.profile["summary"].value("kernels", 0), 1);
        QCOMPARE(back.profile["kernels"][0].value("registers_per_thread", 0.0), 96.0);
        QCOMPARE(back.profile.value("bound", ""), std::string("occupancy"));

        // Not available: the roofline's class and evidence, the advice unchanged.
        kf::Diagnosis t;
        t.status = kf::Status::Ok;
        t.roofline = kf::Roofline{};
        t.roofline->bound = "memory";
        t.roofline->peak_gbps = 3900;
        t.roofline->bandwidth_fraction = 0.8;
        t.timing = kf::Timing{};
        t.timing->median_ms = 0.3;
        t.advice = {"improve_memory_access", "fuse"};
        kf::apply_profile(t, kf::profile_unavailable("no ncu here", "no_profiler"));
        QCOMPARE(t.profile.value("available", true), false);
        QCOMPARE(t.profile.value("bound", ""), std::string("memory"));
        QCOMPARE(t.profile.value("bound_source", ""), std::string("roofline"));
        QCOMPARE(t.roofline->bound, std::string("memory"));
        QCOMPARE(static_cast<int>(t.advice.size()), 2);
    }

    void noNcu() {
        EnvVar ncu("KF_NCU", "/nonexistent/ncu");
        std::string why;
        QVERIFY(kf::find_ncu(why).empty());
        QVERIFY2(why.find("KF_NCU") != std::string::npos, why.c_str());
        kf::NcuInvocation inv = fake_invocation();
        inv.ncu = "/nonexistent/ncu";
        QCOMPARE(kf::run_ncu(inv).value("code", ""), std::string("no_profiler"));

        kf::EvaluatorConfig cfg;
        cfg.worker.backend = kf::Backend::Cuda;
        cfg.worker.worker = kftest::worker_path();
        cfg.cache_dir = kftest::temp_dir("profile-cache");
        kf::Evaluator ev(cfg);
        QVERIFY(!ev.profiler_available(&why));
        kf::Task task = kf::load_task(kftest::data("tasks/scale_add"));
        kf::Candidate c{kftest::read_file(kftest::data("candidates/cuda/correct.cu")), "correct"};
        auto t0 = std::chrono::steady_clock::now();
        json p = ev.profile(task, c);
        QCOMPARE(p.value("available", true), false);
        QCOMPARE(p.value("code", ""), std::string("no_profiler"));
        QVERIFY(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));  // nothing compiled
    }

    void hostBackend() {
        kf::EvaluatorConfig cfg;
        cfg.worker.backend = kf::Backend::Host;
        cfg.worker.worker = kftest::worker_path();
        cfg.cache_dir = kftest::temp_dir("profile-cache");
        kf::Evaluator ev(cfg);
        std::string why;
        QVERIFY(!ev.profiler_available(&why));
        kf::Task task = kf::load_task(kftest::data("tasks/scale_add"));
        kf::Candidate c{kftest::read_file(kftest::data("candidates/host/correct.cpp")), "correct"};
        json p = ev.profile(task, c);
        QCOMPARE(p.value("code", ""), std::string("backend"));
        QVERIFY(p.value("reason", "").find("host backend") != std::string::npos);
    }

    void fakeNcuCsv() {
        auto dir = kftest::temp_dir("profile-fake");
        EnvVar mode("KF_FAKE_NCU_MODE", "csv");
        EnvVar csv("KF_FAKE_NCU_CSV", kftest::data("ncu/synthetic/memory_bound.csv").string());
        EnvVar args("KF_FAKE_NCU_ARGS", (dir / "args.txt").string());
        kf::NcuInvocation inv = fake_invocation();
        inv.keep_output = dir / "kept" / "out.csv";
        json p = kf::run_ncu(inv);
        QVERIFY2(p.value("available", false), p.dump().c_str());
        QCOMPARE(p.value("bound", ""), std::string("memory"));
        QCOMPARE(p["summary"].value("kernels", 0), 1);
        QVERIFY(p.value("seconds", -1.0) >= 0);
        QCOMPARE(kftest::read_file(inv.keep_output), ncu_data("synthetic/memory_bound.csv"));
        std::string argv = kftest::read_file(dir / "args.txt");
        for (const char* a : {"--csv\n", "--page\nraw\n", "--clock-control\nnone\n", "--nvtx\n", "--nvtx-include\nkf_candidate/\n",
                              "--print-units\nbase\n", "/bin/true\n"})
            QVERIFY2(argv.find(a) != std::string::npos, a);
    }

    void fakeNcuPermission() {
        EnvVar mode("KF_FAKE_NCU_MODE", "perm");
        json p = kf::run_ncu(fake_invocation());
        QCOMPARE(p.value("available", true), false);
        QCOMPARE(p.value("code", ""), std::string("permission"));
        QVERIFY(p.value("reason", "").find("ERR_NVGPUCTRPERM") != std::string::npos);
    }

    void fakeNcuUnknownMetric() {
        EnvVar mode("KF_FAKE_NCU_MODE", "unknown");
        EnvVar csv("KF_FAKE_NCU_CSV", kftest::data("ncu/synthetic/compute_bound.csv").string());
        json p = kf::run_ncu(fake_invocation());
        QVERIFY2(p.value("available", false), p.dump().c_str());
        QCOMPARE(p["missing_metrics"].dump(), std::string("[\"smsp__average_warps_issue_stalled_imc_miss_per_issue_active.ratio\"]"));
    }

    void fakeNcuTimeout() {
        EnvVar mode("KF_FAKE_NCU_MODE", "slow");
        kf::NcuInvocation inv = fake_invocation();
        inv.timeout = std::chrono::milliseconds(1000);
        auto t0 = std::chrono::steady_clock::now();
        json p = kf::run_ncu(inv);
        QCOMPARE(p.value("code", ""), std::string("timeout"));
        QVERIFY(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
    }

    void fakeNcuBadOutput() {
        EnvVar mode("KF_FAKE_NCU_MODE", "csv");
        {
            EnvVar csv("KF_FAKE_NCU_CSV", kftest::data("ncu/synthetic/truncated.csv").string());
            json p = kf::run_ncu(fake_invocation());
            QCOMPARE(p.value("code", ""), std::string("failed"));
            QVERIFY2(p.value("reason", "").find("truncated") != std::string::npos, p.dump().c_str());
        }
        {
            EnvVar csv("KF_FAKE_NCU_CSV", kftest::data("ncu/synthetic/no_kernels.txt").string());
            json p = kf::run_ncu(fake_invocation());
            QCOMPARE(p.value("code", ""), std::string("no_kernels"));
        }
    }

    void workerProfileModeOnHost() {
        // The one-shot mode itself runs anywhere: the host backend has no NVTX, but the
        // request, the warm-up and profiled calls and the result file are the same.
        kf::EvaluatorConfig cfg;
        cfg.worker.backend = kf::Backend::Host;
        cfg.worker.worker = kftest::worker_path();
        cfg.cache_dir = kftest::temp_dir("profile-cache");
        kf::Evaluator ev(cfg);
        kf::Task task = kf::load_task(kftest::data("tasks/scale_add"));
        kf::CompileResult cr = ev.compile(task, {kftest::read_file(kftest::data("candidates/host/correct.cpp")), "correct"});
        QVERIFY(cr.ok);
        auto dir = kftest::temp_dir("profile-worker");
        json req = {{"task", task.dir.string()}, {"candidate", cr.library.string()}, {"warmup", 1}, {"runs", 2},
                    {"range", "kf_candidate"}, {"result", (dir / "result.json").string()}, {"log", (dir / "worker.log").string()}};
        kftest::write_file(dir / "request.json", req.dump());
        std::vector<std::string> target = {kftest::worker_path().string(), "--backend", "host", "--profile-request",
                                           (dir / "request.json").string()};
        auto r = kf::run_process(target, std::chrono::seconds(60));
        QCOMPARE(r.exit_code, 0);
        json res = json::parse(kftest::read_file(dir / "result.json"));
        QVERIFY2(res.value("ok", false), res.dump().c_str());
        QCOMPARE(res.value("case", ""), std::string("primary-host"));
        QCOMPARE(res["wall_ms"].size(), std::size_t{2});

        // Under a (fake) profiler: the target runs, the CSV comes back.
        EnvVar mode("KF_FAKE_NCU_MODE", "csv");
        EnvVar csv("KF_FAKE_NCU_CSV", kftest::data("ncu/synthetic/latency_bound.csv").string());
        std::filesystem::remove(dir / "result.json");
        json p = kf::run_ncu(fake_invocation(target));
        QCOMPARE(p.value("bound", ""), std::string("latency"));
        QVERIFY(fs::exists(dir / "result.json"));

        // A library that cannot be loaded: exit 3, load_error.
        req["candidate"] = (dir / "missing.so").string();
        kftest::write_file(dir / "request.json", req.dump());
        r = kf::run_process(target, std::chrono::seconds(60));
        QCOMPARE(r.exit_code, 3);
        res = json::parse(kftest::read_file(dir / "result.json"));
        QCOMPARE(res.value("status", ""), std::string("load_error"));
    }

    void evaluatorPermissionDenied() {
        // Through Evaluator::profile with the CUDA backend: compiles with nvcc (no GPU needed),
        // runs the fake ncu, and remembers the denial.
        if (!have_nvcc()) QSKIP("nvcc not found");
        EnvVar ncu("KF_NCU", fake_ncu());
        EnvVar mode("KF_FAKE_NCU_MODE", "perm");
        kf::EvaluatorConfig cfg;
        cfg.worker.backend = kf::Backend::Cuda;
        cfg.worker.worker = kftest::worker_path();
        cfg.cache_dir = kftest::temp_dir("profile-cache");
        cfg.arch = "sm_90";
        kf::Evaluator ev(cfg);
        QVERIFY(ev.profiler_available());
        kf::Task task = kf::load_task(kftest::data("tasks/scale_add"));
        kf::Candidate c{kftest::read_file(kftest::data("candidates/cuda/correct.cu")), "correct"};
        json p = ev.profile(task, c);
        QCOMPARE(p.value("code", ""), std::string("permission"));
        QVERIFY(p.contains("wall_seconds"));
        std::string why;
        QVERIFY(!ev.profiler_available(&why));
        QVERIFY(why.find("ERR_NVGPUCTRPERM") != std::string::npos);
        json again = ev.profile(task, c);
        QCOMPARE(again.value("cached", false), true);
        QCOMPARE(again.value("seconds", -1.0), 0.0);

        // An evaluated diagnosis that did not pass is not profiled.
        kf::Diagnosis d;
        d.status = kf::Status::Incorrect;
        ev.profile_into(d, task, c);
        QCOMPARE(d.profile.value("code", ""), std::string("not_profiled"));
    }
};

QTEST_GUILESS_MAIN(TestProfile)
#include "test_profile.moc"
