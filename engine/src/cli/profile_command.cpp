#include "profile_command.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "kf/engine.h"
#include "kf/error.h"
#include "kf/profile.h"
#include "kf/task.h"
#include "report.h"
#include "task_arg.h"

namespace kf::cli {

using nlohmann::json;

namespace {

std::string num(const json& v, int precision = 3) {
    if (!v.is_number()) return "-";
    double d = v.get<double>();
    if (std::isnan(d)) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", precision, d);
    return buf;
}

std::string dim3(const json& d) {
    if (!d.is_array() || d.size() != 3) return "-";
    std::string s = std::to_string(d[0].get<long long>());
    if (d[1].get<long long>() != 1 || d[2].get<long long>() != 1)
        s += "x" + std::to_string(d[1].get<long long>()) + "x" + std::to_string(d[2].get<long long>());
    return s;
}

std::string shorten(const std::string& s, std::size_t n) { return s.size() <= n ? s : s.substr(0, n - 3) + "..."; }

int usage(const std::string& msg) {
    std::cerr << "kfoundry: " << msg << "\n";
    return kExitUsage;
}

}  // namespace

std::string render_profile(const json& p) {
    std::ostringstream os;
    auto row = [&](const std::string& label, const std::string& text) {
        os << "  " << label << std::string(label.size() < 11 ? 11 - label.size() : 1, ' ') << text << "\n";
    };
    if (!p.is_object()) {
        row("profile", "not collected");
        return os.str();
    }
    if (!p.value("available", false)) {
        row("profile", "not available: " + p.value("reason", std::string("?")));
        if (p.contains("bound"))
            row("bound", p.value("bound", "") + " (from the " + p.value("bound_source", "roofline") + ")");
        for (const auto& e : p.value("evidence", json::array())) row("", e.get<std::string>());
        return os.str();
    }
    std::string cost = "ncu, " + std::to_string(p.value("runs", 1)) + " profiled call(s), " + num(p.value("seconds", 0.0)) + " s";
    if (p.contains("wall_seconds")) cost += " (" + num(p["wall_seconds"]) + " s with the compile)";
    row("profile", cost);
    const json& s = p["summary"];
    row("kernels", std::to_string(s.value("kernels", 0)) + " kernel(s), " + std::to_string(s.value("launches", 0)) +
                       " launch(es) per call, " + num(s.value("total_duration_us", 0.0), 4) + " us; dominant " +
                       shorten(s.value("dominant", ""), 60) + " (" + num(100 * s.value("dominant_share", 0.0)) + "%)");
    char line[512];
    std::snprintf(line, sizeof line, "    %-32s %10s %5s %8s %6s %5s %5s %5s %9s %5s %7s %5s %5s  %s\n", "kernel", "us", "x",
                  "grid", "block", "SM%", "Mem%", "DRAM%", "occ a/t%", "regs", "smem B", "L1%", "L2%", "top stall");
    os << line;
    for (const auto& k : p.value("kernels", json::array())) {
        double smem = (k["shared_static_bytes"].is_number() ? k["shared_static_bytes"].get<double>() : 0) +
                      (k["shared_dynamic_bytes"].is_number() ? k["shared_dynamic_bytes"].get<double>() : 0);
        std::string occ = num(k["achieved_occupancy_pct"]) + "/" + num(k["theoretical_occupancy_pct"]);
        std::snprintf(line, sizeof line, "    %-32s %10s %5d %8s %6s %5s %5s %5s %9s %5s %7s %5s %5s  %s\n",
                      shorten(k.value("name", ""), 32).c_str(), num(k["duration_us"], 4).c_str(), k.value("launches", 0),
                      dim3(k["grid"]).c_str(), dim3(k["block"]).c_str(), num(k["sm_throughput_pct"]).c_str(),
                      num(k["memory_throughput_pct"]).c_str(), num(k["dram_throughput_pct"]).c_str(), occ.c_str(),
                      num(k["registers_per_thread"]).c_str(), num(json(smem)).c_str(), num(k["l1_hit_pct"]).c_str(),
                      num(k["l2_hit_pct"]).c_str(),
                      k["top_stall"].is_string() ? k["top_stall"].get<std::string>().c_str() : "-");
        os << line;
    }
    row("bound", p.value("bound", "") + " (from the " + p.value("bound_source", "profile") + ")");
    for (const auto& e : p.value("evidence", json::array())) row("", e.get<std::string>());
    if (!p["kernels"].empty()) {
        std::string stalls;
        int n = 0;
        for (const auto& st : p["kernels"][0].value("stalls", json::array())) {
            if (st.value("reason", "") == "selected") continue;
            if (n++ == 5) break;
            stalls += (stalls.empty() ? "" : ", ") + st.value("reason", "") + " " + num(100 * st.value("share", 0.0), 2) + "%";
        }
        if (!stalls.empty()) row("stalls", stalls + " (dominant kernel, share of warp stall cycles)");
    }
    bool first = true;
    for (const auto& a : p.value("advice", json::array())) {
        row(first ? "advice" : "", a.value("remedy", "") + ": " + a.value("why", ""));
        first = false;
    }
    if (p.contains("missing_metrics")) row("missing", p["missing_metrics"].dump() + " (not offered by this device)");
    return os.str();
}

int run_profile(const ProfileArgs& a) {
    if (a.list_metrics) {
        for (const auto& m : profile_metrics()) std::cout << m << "\n";
        return kExitOk;
    }
    if (a.task.empty() || a.candidate.empty()) return usage("profile needs TASK and CANDIDATE (see --help)");
    Task task = load_task_arg(a.task);
    auto b = backend_from_string(a.backend);
    if (!b) return usage("unknown backend '" + a.backend + "' (cuda or host)");
    if (!task.supports(*b)) return usage("task " + task.name + " has no " + a.backend + " reference");
    std::ifstream in(a.candidate, std::ios::binary);
    if (!in) return usage("cannot read candidate file " + a.candidate);
    std::stringstream ss;
    ss << in.rdbuf();
    Candidate cand;
    cand.source = ss.str();
    cand.name = std::filesystem::path(a.candidate).stem().string();

    EvalOptions eopt = a.eval;
    ProfileOptions popt = a.profile;
    for (const auto& it : a.tunables) {
        auto eq = it.find('=');
        if (eq == std::string::npos || eq == 0) return usage("--tunable expects NAME=VALUE, got '" + it + "'");
        try {
            eopt.tunables[it.substr(0, eq)] = std::stoll(it.substr(eq + 1));
        } catch (const std::exception&) {
            return usage("--tunable " + it + ": the value must be an integer");
        }
    }
    popt.tunables = eopt.tunables;
    if (!a.keep_csv.empty()) {
        std::string stem = std::filesystem::path(a.candidate).stem().string();
        popt.keep_output = std::filesystem::path(a.keep_csv) / (task.name + "__" + stem + ".csv");
    }

    CandidateProfile request;
    request.task = task;
    request.candidate = cand;
    request.evaluator.worker.backend = *b;
    if (!a.worker.empty()) request.evaluator.worker.worker = a.worker;
    request.eval = eopt;
    request.profile = popt;
    if (!a.as_json)
        request.on_stage = [&](const std::string& stage) {
            if (stage == "evaluating")
                std::fprintf(stderr, "evaluating %s on %s (%s backend)...\n", a.candidate.c_str(), task.name.c_str(),
                             a.backend.c_str());
            else
                std::fprintf(stderr, "profiling with Nsight Compute...\n");
        };
    Engine engine;
    Diagnosis d;
    try {
        d = engine.profile(request);
    } catch (const NoDevice& e) {
        std::cerr << "kfoundry: " << e.what() << "\n";
        return kExitNoDevice;
    }

    if (a.as_json) {
        json j = d;
        j["candidate"] = a.candidate;
        std::cout << j.dump(2) << "\n";
    } else {
        std::cout << render_diagnosis(d, cand.source) << render_profile(d.profile) << std::flush;
    }
    if (!d.ok()) return kExitCandidateFailed;
    const json& p = d.profile;
    if (p.value("available", false)) return kExitOk;
    std::string code = p.value("code", "");
    std::cerr << "kfoundry: no profile: " << p.value("reason", std::string("?")) << "\n";
    if (code == "backend" || code == "no_profiler" || code == "permission") return kExitNoDevice;
    if (code == "candidate") return kExitCandidateFailed;
    return kExitError;
}

}  // namespace kf::cli
