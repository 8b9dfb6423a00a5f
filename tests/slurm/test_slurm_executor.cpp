// Searches whose worker runs as a Slurm job (docs/cluster.md), on a real single-node Slurm
// started by scripts/slurm-local.sh: where each evaluation ran, a job cancelled mid-run with
// scancel, an engine killed and resumed, a job sbatch refuses. Skips where Slurm is absent.
#include <QtTest>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "kf/error.h"
#include "kf/exec.h"
#include "kf/process.h"
#include "kf/store.h"
#include "testsupport.h"

using namespace kf;
namespace fs = std::filesystem;

namespace {

bool on_path(const std::string& tool) {
    for (const char* dir : {"/usr/sbin", "/usr/bin", "/sbin", "/bin", "/usr/local/bin", "/usr/local/sbin"})
        if (::access((fs::path(dir) / tool).c_str(), X_OK) == 0) return true;
    return false;
}

/** The kf-worker jobs Slurm runs or queues now. */
std::vector<std::string> live_worker_jobs() {
    auto r =
        run_process({"squeue", "--noheader", "--name=kf-worker", "--states=PENDING,RUNNING,CONFIGURING", "--format=%i"},
                    std::chrono::seconds(20));
    std::vector<std::string> jobs;
    std::istringstream in(r.output);
    for (std::string line; std::getline(in, line);)
        if (!line.empty() && line.find_first_not_of("0123456789") == std::string::npos) jobs.push_back(line);
    return jobs;
}

std::vector<std::string> running_worker_jobs() {
    auto r = run_process({"squeue", "--noheader", "--name=kf-worker", "--states=RUNNING", "--format=%i"},
                         std::chrono::seconds(20));
    std::vector<std::string> jobs;
    std::istringstream in(r.output);
    for (std::string line; std::getline(in, line);)
        if (!line.empty() && line.find_first_not_of("0123456789") == std::string::npos) jobs.push_back(line);
    return jobs;
}

/** Evaluations committed to the project's first run so far (0 while it is being created). */
std::size_t committed(const fs::path& project) {
    if (!fs::exists(project / "project.db")) return 0;
    try {
        ProjectStore s = ProjectStore::open(project);
        auto runs = s.runs();
        return runs.empty() ? 0 : s.evaluations(runs.front().id).size();
    } catch (const Error&) {
        return 0;
    }
}

/** Starts `kfoundry args...` in its own process group, its output in `log`. */
pid_t start_cli(std::vector<std::string> args, const fs::path& log) {
    args.insert(args.begin(), kftest::cli_path().string());
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 1);
        dup2(fd, 2);
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        execv(argv[0], argv.data());
        _exit(127);
    }
    return pid;
}

/** Waits for pid to end, up to `limit`; kills it past that. Returns its wait status. */
int wait_for(pid_t pid, std::chrono::seconds limit) {
    int status = 0;
    if (kftest::wait_until([&] { return waitpid(pid, &status, WNOHANG) != 0; }, limit, std::chrono::milliseconds(100)))
        return status;
    kill(-pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

}  // namespace

class TestSlurmExecutor : public QObject {
    Q_OBJECT

private:
    fs::path slurm_;
    bool started_ = false;

    std::vector<std::string> evolve_args(const fs::path& project, int budget) const {
        return {"evolve",
                kftest::data("tasks/scale_add").string(),
                "--project",
                project.string(),
                "--backend",
                "host",
                "--islands",
                "2",
                "--budget",
                std::to_string(budget),
                "--min-time",
                "5",
                "--trials",
                "1",
                "--seed",
                "5",
                "--no-profile",
                "--executor",
                "slurm",
                "--slurm-time",
                "10"};
    }

    /** Nothing of ours is left queued or running once a search has ended. */
    void expect_no_live_jobs() {
        std::vector<std::string> jobs;
        if (kftest::wait_until([&] { return (jobs = live_worker_jobs()).empty(); }, std::chrono::seconds(30),
                               std::chrono::milliseconds(100)))
            return;
        QFAIL(("worker jobs left behind: " + jobs.front()).c_str());
    }

private slots:
    void initTestCase() {
        for (const char* tool : {"munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel"})
            if (!on_path(tool))
                QSKIP(qPrintable(QString("Slurm is not installed here (%1 is missing): `make deps` installs munge, "
                                         "slurmctld, slurmd and slurm-client")
                                     .arg(tool)));
        if (geteuid() != 0)
            QSKIP("a local Slurm needs root (slurmd starts jobs as their users): run as root, as CI does");
        // munged's socket path must stay short (108 bytes), so not under a deep build folder.
        char tmpl[] = "/tmp/kf-slurm-XXXXXX";
        QVERIFY(mkdtemp(tmpl));
        slurm_ = tmpl;
        auto r = run_process({(kftest::source_dir() / "scripts" / "slurm-local.sh").string(), "start", slurm_.string()},
                             std::chrono::minutes(2));
        QVERIFY2(r.exit_code == 0, r.output.c_str());
        started_ = true;
        qputenv("SLURM_CONF", QByteArray::fromStdString((slurm_ / "slurm.conf").string()));
        qputenv("PATH", qgetenv("PATH") + ":/usr/sbin:/sbin");
        // Jobs inherit this environment (sbatch exports it): the compile cache and the data
        // folders are shared with the engine, as on a cluster's shared filesystem.
        qputenv("KF_CACHE_DIR", QByteArray::fromStdString((kftest::temp_dir("slurm-cache") / "compile").string()));
        qputenv("KF_RESOURCES_DIR", QByteArray::fromStdString((kftest::source_dir() / "resources").string()));
        qputenv("XDG_DATA_HOME", QByteArray::fromStdString(kftest::temp_dir("slurm-data").string()));
        qputenv("XDG_CACHE_HOME", QByteArray::fromStdString(kftest::temp_dir("slurm-xdg-cache").string()));
        QVERIFY(slurm_available());
    }

    void cleanupTestCase() {
        if (!started_) return;
        auto r = run_process({(kftest::source_dir() / "scripts" / "slurm-local.sh").string(), "stop", slurm_.string()},
                             std::chrono::minutes(1));
        QVERIFY2(r.exit_code == 0, r.output.c_str());
        std::error_code ec;
        fs::remove_all(slurm_, ec);
    }

    /** A job cancelled with scancel while the search runs: resubmitted, nothing lost. */
    void cancelled_job_is_requeued() {
        const fs::path project = kftest::temp_dir("slurm-scancel");
        const fs::path log = project.parent_path() / (project.filename().string() + ".log");
        const int budget = 10;
        pid_t pid = start_cli(evolve_args(project, budget), log);
        // Once a few evaluations are committed, the job that runs them is cancelled.
        std::string cancelled;
        kftest::wait_until(
            [&] {
                if (committed(project) < 3) return false;
                auto jobs = running_worker_jobs();
                if (!jobs.empty()) cancelled = jobs.front();
                return !cancelled.empty();
            },
            std::chrono::minutes(3), std::chrono::milliseconds(100));
        if (!cancelled.empty()) {
            auto r = run_process({"scancel", cancelled}, std::chrono::seconds(20));
            QVERIFY2(r.exit_code == 0, r.output.c_str());
        }
        const int status = wait_for(pid, std::chrono::seconds(240));
        const std::string output = kftest::read_file(log);
        QVERIFY2(!cancelled.empty(), ("no running worker job to cancel: " + output).c_str());
        QVERIFY2(WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 6), output.c_str());

        ProjectStore s = ProjectStore::open(project);
        auto run = s.runs().front();
        QCOMPARE(run.state, RunState::Done);
        auto evaluations = s.evaluations(run.id);
        QCOMPARE(static_cast<int>(evaluations.size()), budget);
        QVERIFY(s.unevaluated(run.id).empty());
        std::set<std::string> places;
        for (const auto& e : evaluations) {
            QVERIFY2(e.ran_on.rfind("slurm:", 0) == 0, e.ran_on.c_str());
            QCOMPARE(e.diagnosis.value("ran_on", std::string()), e.ran_on);
            // The cancelled job cost time, not a candidate: no record of a dead or lost worker.
            const std::string message = e.diagnosis.value("message", std::string());
            QVERIFY2(message.find("died") == std::string::npos && message.find("lost") == std::string::npos,
                     message.c_str());
            places.insert(e.ran_on);
        }
        QVERIFY2(places.size() >= 2, "the search did not continue on a new job");
        QVERIFY(std::any_of(places.begin(), places.end(),
                            [&](const std::string& p) { return p.rfind("slurm:" + cancelled + "@", 0) == 0; }));

        auto runs =
            run_process({kftest::cli_path().string(), "runs", "--project", project.string()}, std::chrono::minutes(1));
        QCOMPARE(runs.exit_code, 0);
        QVERIFY2(runs.output.find("ran on slurm:" + cancelled + "@") != std::string::npos, runs.output.c_str());
        expect_no_live_jobs();
    }

    /** The engine killed (and its job cancelled) mid-run: --resume finishes the run through Slurm. */
    void killed_search_resumes() {
        const fs::path project = kftest::temp_dir("slurm-resume");
        const fs::path log = project.parent_path() / (project.filename().string() + ".log");
        const int budget = 8;
        pid_t pid = start_cli(evolve_args(project, budget), log);
        // Killed once a few evaluations are committed.
        const bool killed = kftest::wait_until([&] { return committed(project) >= 3; }, std::chrono::minutes(3),
                                               std::chrono::milliseconds(100));
        if (killed) {
            kill(-pid, SIGKILL);
            for (const auto& job : live_worker_jobs()) run_process({"scancel", job}, std::chrono::seconds(20));
        }
        int status = wait_for(pid, std::chrono::seconds(30));
        QVERIFY2(killed && WIFSIGNALED(status), kftest::read_file(log).c_str());
        std::set<std::int64_t> before;
        {
            ProjectStore s = ProjectStore::open(project);
            auto run = s.runs().front();
            QCOMPARE(run.state, RunState::Running);
            for (const auto& c : s.candidates(run.id)) before.insert(c.id);
            QVERIFY(s.evaluations(run.id).size() < static_cast<std::size_t>(budget));
        }
        auto args = evolve_args(project, budget);
        args.push_back("--resume");
        pid = start_cli(args, log);
        status = wait_for(pid, std::chrono::seconds(240));
        const std::string output = kftest::read_file(log);
        QVERIFY2(WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 6), output.c_str());
        ProjectStore s = ProjectStore::open(project);
        auto run = s.runs().front();
        QCOMPARE(s.runs().size(), std::size_t(1));
        QCOMPARE(run.state, RunState::Done);
        std::set<std::int64_t> after;
        for (const auto& c : s.candidates(run.id)) after.insert(c.id);
        for (auto id : before) QVERIFY(after.count(id));  // nothing committed was lost
        QCOMPARE(static_cast<int>(s.evaluations(run.id).size()), budget);
        QVERIFY(s.unevaluated(run.id).empty());
        for (const auto& e : s.evaluations(run.id)) QVERIFY2(e.ran_on.rfind("slurm:", 0) == 0, e.ran_on.c_str());
        expect_no_live_jobs();
    }

    /** --devices with the Slurm executor: one worker job per device, the run's evaluations spread over them. */
    void devices_run_as_separate_jobs() {
        const fs::path project = kftest::temp_dir("slurm-devices");
        const fs::path log = project.parent_path() / (project.filename().string() + ".log");
        const int budget = 10;
        auto args = evolve_args(project, budget);
        args.insert(args.end(), {"--devices", "0,1"});
        pid_t pid = start_cli(args, log);
        const int status = wait_for(pid, std::chrono::seconds(240));
        const std::string output = kftest::read_file(log);
        QVERIFY2(WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 6), output.c_str());
        ProjectStore s = ProjectStore::open(project);
        auto run = s.runs().front();
        QCOMPARE(run.state, RunState::Done);
        auto evaluations = s.evaluations(run.id);
        QCOMPARE(static_cast<int>(evaluations.size()), budget);
        std::set<std::string> jobs;
        for (const auto& e : evaluations) {
            QVERIFY2(e.ran_on.rfind("slurm:", 0) == 0, e.ran_on.c_str());
            jobs.insert(e.ran_on);
        }
        QVERIFY2(jobs.size() >= 2, ("every evaluation ran in one job: " + output).c_str());
        expect_no_live_jobs();
    }

    /** `kernelbench run --executor slurm`: the Python worker (here the stand-in) runs as a job; compiles stay here. */
    void kernelbench_worker_runs_as_a_job() {
        const fs::path project = kftest::temp_dir("slurm-kernelbench") / "proj";
        const fs::path fake = kftest::data("kernelbench-fake");
        auto r = run_process({kftest::cli_path().string(), "kernelbench", "run", "--kb", fake.string(), "--level", "1",
                              "--kb-worker", (fake / "fake_kb_worker.py").string(), "--problems", "1-2", "--project",
                              project.string(), "--candidates", (fake / "candidates").string(), "--executor", "slurm",
                              "--slurm-time", "10"},
                             std::chrono::minutes(4));
        QVERIFY2(r.exit_code == 0, r.output.c_str());
        ProjectStore s = ProjectStore::open(project);
        int evaluations = 0;
        for (const auto& run : s.runs()) {
            QCOMPARE(run.state, RunState::Done);
            for (const auto& e : s.evaluations(run.id)) {
                QVERIFY2(e.ran_on.rfind("slurm:", 0) == 0, (e.ran_on + "\n" + r.output).c_str());
                ++evaluations;
            }
        }
        QVERIFY2(evaluations >= 2, r.output.c_str());
        expect_no_live_jobs();
    }

    /** Two searches as one job array: each runs on the node, in its own project. */
    void searches_run_as_one_job_array() {
        const fs::path project = kftest::temp_dir("slurm-array");
        auto r = run_process({kftest::cli_path().string(),
                              "evolve",
                              kftest::data("tasks/scale_add").string(),
                              kftest::data("tasks/sigmoid").string(),
                              "--project",
                              project.string(),
                              "--backend",
                              "host",
                              "--islands",
                              "2",
                              "--budget",
                              "3",
                              "--min-time",
                              "5",
                              "--trials",
                              "1",
                              "--no-profile",
                              "--no-library",
                              "--executor",
                              "slurm",
                              "--slurm-array",
                              "--slurm-time",
                              "10"},
                             std::chrono::minutes(1));
        QVERIFY2(r.exit_code == 0, r.output.c_str());
        const std::string marker = "submitted job array ";
        auto at = r.output.find(marker);
        QVERIFY2(at != std::string::npos, r.output.c_str());
        const std::string job = r.output.substr(at + marker.size(), r.output.find(':', at) - at - marker.size());
        // Wait for both elements to leave the queue.
        const bool finished = kftest::wait_until(
            [&] {
                auto q = run_process({"squeue", "--noheader", "--jobs=" + job,
                                      "--states=PENDING,RUNNING,CONFIGURING,COMPLETING", "--format=%i %T"},
                                     std::chrono::seconds(20));
                return q.exit_code == 0 && q.output.find_first_not_of(" \n") == std::string::npos;
            },
            std::chrono::minutes(4), std::chrono::milliseconds(200));
        QVERIFY2(finished, ("job array " + job + " did not finish").c_str());
        for (const char* task : {"scale_add", "sigmoid"}) {
            const fs::path sub = project / task;
            const fs::path log = project / "slurm" /
                                 ("kf-search-" + job + "_" + (std::string(task) == "scale_add" ? "0" : "1") + ".log");
            QVERIFY2(fs::exists(sub / "project.db"), kftest::read_file(log).c_str());
            ProjectStore s = ProjectStore::open(sub);
            auto run = s.runs().front();
            QCOMPARE(run.task, std::string(task));
            QVERIFY2(run.state == RunState::Done, kftest::read_file(log).c_str());
            auto evaluations = s.evaluations(run.id);
            QCOMPARE(static_cast<int>(evaluations.size()), 3);
            for (const auto& e : evaluations) QCOMPARE(e.ran_on, host_name());  // a local worker on the node
        }
    }

    /** Jobs that cannot reach the engine (192.0.2.1 is reserved for documentation) are
     *  resubmitted --slurm-max-requeues times, then the failure is reported. */
    void unreachable_engine_fails_after_requeues() {
        const fs::path project = kftest::temp_dir("slurm-unreachable");
        auto args = evolve_args(project, 2);
        args.insert(args.end(), {"--slurm-connect-host", "192.0.2.1", "--slurm-max-requeues", "1"});
        args.insert(args.begin(), kftest::cli_path().string());
        auto r = run_process(args, std::chrono::minutes(3));
        QVERIFY2(r.exit_code == 5, r.output.c_str());
        QVERIFY2(r.output.find("lost 2 times in a row") != std::string::npos, r.output.c_str());
        QVERIFY2(r.output.find("before it connected") != std::string::npos, r.output.c_str());
        const std::string relay_log = kftest::read_file(project / "slurm" / "kf-relay.log");
        int submissions = 0;
        for (auto at = relay_log.find("submitted job"); at != std::string::npos;
             at = relay_log.find("submitted job", at + 1))
            ++submissions;
        QVERIFY2(submissions == 2, relay_log.c_str());  // the first job and one resubmission
        expect_no_live_jobs();
    }

    /** A worker that dies in its job (here by SIGSEGV) ends the relay the same way: the engine
     *  sees what a local worker would have shown it, and the job is not resubmitted. */
    void worker_crash_in_a_job_is_mirrored() {
        const fs::path spool = kftest::temp_dir("slurm-crash");
        WorkerConfig w;
        w.command = {"/bin/sh", "-c", "read request; kill -SEGV $$"};
        ExecutorOptions ex;
        ex.kind = ExecutorKind::Slurm;
        ex.slurm.spool_dir = spool;
        WorkerConfig relay = executor_worker(ex, w, kftest::cli_path());
        QCOMPARE(relay.command.at(1), std::string("slurm-relay"));
        LineProcess p;
        QVERIFY2(p.start(relay.command, relay.log), p.error().c_str());
        QVERIFY(p.write_line(R"({"id": "1", "cmd": "hello"})"));
        std::vector<std::string> lines;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
        while (auto line = p.read_line(deadline)) lines.push_back(*line);
        QVERIFY2(p.eof(), "the relay did not end");
        p.stop(std::chrono::seconds(5));
        QVERIFY2(p.exit_description().find("SIGSEGV") != std::string::npos, p.exit_description().c_str());
        QVERIFY(!lines.empty());
        QVERIFY2(lines.back().find("slurm:") != std::string::npos, lines.back().c_str());  // where it ran
        const std::string log = kftest::read_file(spool / "kf-relay.log");
        QVERIFY2(log.find("ended: signal 11 (SIGSEGV)") != std::string::npos, log.c_str());
        QVERIFY2(log.find("lost") == std::string::npos, log.c_str());
    }

    /** A job sbatch refuses is reported at start-up, as a missing device. */
    void refused_submission_is_reported() {
        const fs::path project = kftest::temp_dir("slurm-refused");
        auto args = evolve_args(project, 2);
        args.push_back("--slurm-partition=no_such_partition");
        args.insert(args.begin(), kftest::cli_path().string());
        auto r = run_process(args, std::chrono::minutes(2));
        QVERIFY2(r.exit_code == 5, r.output.c_str());
        QVERIFY2(r.output.find("sbatch refused the worker job") != std::string::npos, r.output.c_str());
        QVERIFY2(
            r.output.find("no_such_partition") != std::string::npos || r.output.find("partition") != std::string::npos,
            r.output.c_str());
    }
};

QTEST_GUILESS_MAIN(TestSlurmExecutor)
#include "test_slurm_executor.moc"
