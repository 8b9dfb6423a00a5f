#pragma once
// Kernels judged on a real GPU at several points of their tunable space (the template and
// generic GPU tests): each at its defaults and at the first and last points of its space,
// compiled first, four at a time, then evaluated one after the other on every case.
#include <QtTest>

#include <future>
#include <string>
#include <vector>

#include "kf/diagnosis.h"
#include "kf/evaluator.h"
#include "kf/task.h"
#include "kf/templates.h"
#include "kf/tunables.h"

namespace kftest {

struct Instance {
    std::string label;  ///< task, kernel and point, for the messages
    kf::Task task;
    kf::Candidate candidate;
};

/** Each kernel at its defaults and at the first and last points of its space. */
inline void add_points(std::vector<Instance>& all, const std::string& name, const kf::Task& t,
                       const std::vector<kf::TemplateKernel>& kernels) {
    for (const auto& k : kernels) {
        kf::TunableSpace space = kf::parse_tunables(k.source);
        std::vector<kf::Assignment> points = space.enumerate(1000);
        QVERIFY2(!points.empty(), (name + " " + k.name).c_str());
        for (const kf::Assignment& a : {space.defaults(), points.front(), points.back()})
            all.push_back({name + " " + k.name + " " + kf::to_string(a), t, {kf::instantiate(k.source, space, a), k.name}});
    }
}

/** Compiles every instance (four evaluators at a time, one cache), then evaluates those that compiled; fails on any that did not compile or is not correct. */
inline void judge(const kf::EvaluatorConfig& cfg, const std::vector<Instance>& all) {
    std::vector<std::future<std::string>> builds;
    for (std::size_t from = 0; from < 4 && from < all.size(); ++from)
        builds.push_back(std::async(std::launch::async, [&cfg, &all, from] {
            kf::Evaluator ev(cfg);
            std::string failed;
            for (std::size_t i = from; i < all.size(); i += 4) {
                kf::CompileResult r = ev.compile(all[i].task, all[i].candidate);
                if (r.ok) continue;
                failed += all[i].label + ":\n" + r.info.log + "\n";
                for (const auto& d : r.info.diagnostics) failed += "  " + d.message + "\n";
            }
            return failed;
        }));
    // Compile failures are reported one by one, and the instances that compiled are still evaluated.
    std::string failed;
    for (auto& b : builds) failed += b.get();
    if (!failed.empty()) qWarning().noquote() << "did not compile:\n" << QString::fromStdString(failed);
    kf::Evaluator ev(cfg);
    kf::EvalOptions opt;
    opt.trials = 2;
    opt.time = false;
    int wrong = 0;
    for (const auto& in : all) {
        kf::Diagnosis d = ev.evaluate(in.task, in.candidate, opt);
        qInfo().noquote() << QString::fromStdString(in.label) << "->" << QString::fromUtf8(kf::to_string(d.status).data());
        if (d.status != kf::Status::Ok) {
            ++wrong;
            qWarning().noquote() << QString::fromStdString(d.message);
        }
    }
    qInfo() << all.size() << "instances," << wrong << "not correct";
    QVERIFY2(failed.empty(), "some instances did not compile (above)");
    QCOMPARE(wrong, 0);
}

}  // namespace kftest
