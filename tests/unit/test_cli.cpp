// The kfoundry command line: its commands, JSON output and documented exit codes.
#include <QtTest>

#include <sstream>

#include <nlohmann/json.hpp>

#include "kf/exec.h"
#include "kf/process.h"
#include "testsupport.h"

using nlohmann::json;

class TestCli : public QObject {
    Q_OBJECT

private:
    std::filesystem::path cache_;

    kf::ProcessResult cli(std::vector<std::string> args) {
        args.insert(args.begin(), kftest::cli_path().string());
        return kf::run_process(args, std::chrono::minutes(3));
    }
    static std::string host_candidate(const std::string& name) {
        return kftest::data("candidates/host/" + name + ".cpp").string();
    }

private slots:
    void initTestCase() {
        cache_ = kftest::temp_dir("cli-cache");
        qputenv("KF_CACHE_DIR", QByteArray::fromStdString((cache_ / "compile").string()));
        qputenv("KF_TASKS_DIR", QByteArray::fromStdString((kftest::source_dir() / "tasks").string()));
    }

    void tasks_list_validates_manifests() {
        auto r = cli({"tasks", "list", "--json"});
        QCOMPARE(r.exit_code, 0);
        json j = json::parse(r.output.substr(r.output.find('[')));
        QVERIFY(j.size() >= 10);
        for (const auto& t : j) QVERIFY2(!t.contains("error"), t.dump().c_str());

        auto root = kftest::temp_dir("cli-tasks");
        kftest::write_file(root / "broken" / "task.json", "{\"format\": 1}");
        r = cli({"tasks", "list", "--root", root.string()});
        QCOMPARE(r.exit_code, 3);
        QVERIFY(r.output.find("INVALID") != std::string::npos);
    }

    void task_header_prints_the_entry_point() {
        auto r = cli({"task", "header", "level1/softmax", "--backend", "host"});
        QCOMPARE(r.exit_code, 0);
        QVERIFY(r.output.find("extern \"C\" void kf_solve(") != std::string::npos);
        QVERIFY(r.output.find("cudaStream_t") == std::string::npos);
        r = cli({"task", "header", "softmax"});  // by bare name, CUDA by default
        QCOMPARE(r.exit_code, 0);
        QVERIFY(r.output.find("cudaStream_t stream") != std::string::npos);
    }

    /** Nothing can beat a memcpy reference without loops or tunables: its own exit code and outcome. */
    /** `task computation`: the manifest's, a derived one, and one written into a manifest that had none. */
    void task_computation_prints_derives_and_writes() {
        auto r = cli({"task", "computation", "level2/masked_softmax", "--json"});
        QVERIFY2(r.exit_code == 0, r.output.c_str());
        json j = json::parse(r.output.substr(r.output.find('{')));
        QCOMPARE(j["origin"].get<std::string>(), std::string("manifest"));
        QCOMPARE(j["computation"]["op"].get<std::string>(), std::string("softmax"));

        // A copy of row_max without its computation: derived by the token recogniser, then written.
        auto dir = kftest::temp_dir("cli-computation") / "row_max";
        std::filesystem::copy(kftest::data("tasks/row_max"), dir, std::filesystem::copy_options::recursive);
        json m = json::parse(kftest::read_file(dir / "task.json"));
        m.erase("computation");
        kftest::write_file(dir / "task.json", m.dump(1));
        r = cli({"task", "computation", dir.string(), "--recogniser", "tokens"});
        QVERIFY2(r.exit_code == 0, r.output.c_str());
        QVERIFY2(r.output.find("derived from reference.cpp: a row reduction") == 0, r.output.c_str());
        r = cli({"task", "computation", dir.string(), "--recogniser", "tokens", "--write"});
        QVERIFY2(r.exit_code == 0, r.output.c_str());
        json written = json::parse(kftest::read_file(dir / "task.json"));
        QCOMPARE(written["computation"]["op"].get<std::string>(), std::string("row_reduce"));
        QCOMPARE(written["computation"]["stats"][0]["map"].get<std::string>(), std::string("x"));
        QVERIFY(written["computation"]["description"].get<std::string>().rfind("derived from reference.cpp", 0) == 0);
        written.erase("computation");
        QCOMPARE(written, m);  // the rest of the manifest as it was
        // Now the manifest declares it: it loads as the manifest's, and a second --write is refused.
        r = cli({"task", "computation", dir.string()});
        QVERIFY2(r.exit_code == 0 && r.output.find("manifest\nrow_reduce over rows x cols: m = max(x); y = m") == 0,
                 r.output.c_str());
        r = cli({"task", "computation", dir.string(), "--write"});
        QVERIFY2(r.exit_code == 2 && r.output.find("already declares a computation") != std::string::npos, r.output.c_str());
        QCOMPARE(cli({"task", "computation", dir.string(), "--recogniser", "guess"}).exit_code, 2);
        // A reference the recogniser cannot read: exit 1 and why.
        r = cli({"task", "computation", kftest::data("tasks/opaque_copy").string(), "--json"});
        QVERIFY2(r.exit_code == 1, r.output.c_str());
        j = json::parse(r.output.substr(r.output.find('{'), r.output.rfind('}') - r.output.find('{') + 1));
        QVERIFY(j["computation"].is_null());
        QVERIFY2(j["reason"].get<std::string>().find("cannot derive the computation from reference.cpp") == 0,
                 j.dump().c_str());
    }

    void evolve_without_improvement_exits_6() {
        auto project = kftest::temp_dir("cli-noimp");
        auto r = cli({"evolve", kftest::data("tasks/opaque_copy").string(), "--project", project.string(), "--backend", "host",
                      "--islands", "2", "--budget", "4", "--min-time", "5", "--trials", "1", "--no-library", "--json"});
        QVERIFY2(r.exit_code == 6, r.output.c_str());
        json j = json::parse(r.output.substr(r.output.find("{\n")));
        QCOMPARE(j["outcome"].get<std::string>(), std::string("no_improvement"));
        QCOMPARE(j["best"]["is_reference"].get<bool>(), true);
        QVERIFY(j["best"].contains("bound_fraction"));
        QVERIFY2(r.output.find("no improvement over the reference") != std::string::npos, r.output.c_str());
        QVERIFY2(r.output.find("no op-class template: cannot derive the computation from reference.cpp") != std::string::npos,
                 r.output.c_str());
        // How busy the device was, and how long it waited for compiles.
        QVERIFY2(r.output.find("device busy ") != std::string::npos && r.output.find("idle waiting for compiles") != std::string::npos,
                 r.output.c_str());
    }

    void usage_errors_exit_2() {
        QCOMPARE(cli({"task", "header", "no_such_task"}).exit_code, 2);
        QCOMPARE(cli({"eval", "softmax", "/no/such/file.cu"}).exit_code, 2);
        QCOMPARE(cli({"eval", "softmax", host_candidate("correct"), "--backend", "opencl"}).exit_code, 2);
        QCOMPARE(cli({"frobnicate"}).exit_code, 2);
    }

    void malformed_task_exits_3() {
        auto dir = kftest::temp_dir("cli-bad");
        kftest::write_file(dir / "task.json", "{\"format\": 1, \"name\": \"x\"}");
        auto r = cli({"task", "header", dir.string()});
        QCOMPARE(r.exit_code, 3);
        QVERIFY(r.output.find("task.json") != std::string::npos);
    }

    void eval_exit_codes_and_json() {
        std::string task = kftest::data("tasks/scale_add").string();
        auto r = cli({"eval", task, host_candidate("correct"), "--backend", "host", "--min-time", "5"});
        QVERIFY2(r.exit_code == 0, r.output.c_str());
        QVERIFY(r.output.find("status     ok") != std::string::npos);

        r = cli({"eval", task, host_candidate("wrong"), "--backend", "host", "--json", "--seed", "7"});
        QCOMPARE(r.exit_code, 4);
        json d = json::parse(r.output.substr(r.output.find('{')));
        QCOMPARE(d["status"].get<std::string>(), std::string("incorrect"));
        QCOMPARE(d["schema_version"].get<int>(), 1);
        QCOMPARE(d.value("ran_on", std::string()), kf::host_name());  // a local worker: this host

        // Several candidates in one run: JSON lines, one record each, in order.
        r = cli({"eval", task, host_candidate("correct"), host_candidate("nan"), "--backend", "host", "--json",
                 "--no-time"});
        QCOMPARE(r.exit_code, 4);
        json arr = json::array();
        std::istringstream lines(r.output);
        for (std::string line; std::getline(lines, line);)
            if (!line.empty() && line.front() == '{') arr.push_back(json::parse(line));
        QCOMPARE(arr.size(), std::size_t(2));
        QCOMPARE(arr[0]["status"].get<std::string>(), std::string("ok"));
        QCOMPARE(arr[1]["status"].get<std::string>(), std::string("incorrect"));
        QVERIFY(arr[0]["timing"].is_null());
    }

    void missing_device_exits_5() {
        if (kftest::gpu_available()) QSKIP("a CUDA device is present");
        auto r = cli({"eval", kftest::data("tasks/scale_add").string(), kftest::data("candidates/cuda/correct.cu").string()});
        QCOMPARE(r.exit_code, 5);
        QVERIFY(r.output.find("no cuda device") != std::string::npos);
        QCOMPARE(cli({"device", "info", "--backend", "cuda"}).exit_code, 5);
    }

    void device_info_on_host() {
        auto r = cli({"device", "info", "--backend", "host", "--json"});
        QCOMPARE(r.exit_code, 0);
        json j = json::parse(r.output.substr(r.output.find('{')));
        QVERIFY(j["peaks"]["bandwidth_gbps"].get<double>() > 0);
        QVERIFY(j["device"]["sm_count"].get<int>() >= 1);
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
